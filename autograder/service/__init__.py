"""The online grading service (``autograder serve``): students submit over HTTP, the queue grades.

* :mod:`.policy` - ``course.yml``: deadlines, late work, attempts per 24 hours, feedback before the deadline,
  which attempt counts;
* :mod:`.database` - the service's tables, next to nbgrader's in the same database (SQLite or PostgreSQL);
* :mod:`.roster`, :mod:`.codes` - accounts and personal access codes (only argon2 hashes are stored);
* :mod:`.sessions` - signed session cookies and CSRF tokens;
* :mod:`.uploads` - an uploaded notebook from the request body to a file in the data folder, refused early;
* :mod:`.queue` - the durable queue: claims with leases (``SKIP LOCKED`` on PostgreSQL), results, retries;
* :mod:`.counting` - the counting attempt of each student and assignment, kept in the nbgrader gradebook;
* :mod:`.dispatcher` - the grading loop: queue -> :mod:`autograder.batch` pools -> results;
* :mod:`.worker` - the local pool's work function (``grade_job`` at a lower CPU priority);
* :mod:`.app` - the HTTP API (Starlette): authentication, handlers, security headers.

This layer uses the batch layer's jobs and pools (never the sandbox directly), the store's gradebook and
feedback pages, and the result types of :mod:`autograder.model`.
"""
