"""The online grading service (``autograder serve``): students submit over HTTP, the queue grades.

Two layers.  The core (every module here but :mod:`.web`) never sees HTTP and raises :mod:`.errors`:

* :mod:`.service` - :class:`~.service.Service`, the core in one object (what the web layer calls);
* :mod:`.accounts` - signing in with a code, failed sign-ins, the roster, enrolling students;
* :mod:`.submissions` - may a student submit now (and why not), accepting, attempts, one shape of a score;
* :mod:`.policy`, :mod:`.overrides` - ``course.yml`` and an instructor's exceptions for one student;
* :mod:`.database` - the service's tables, next to nbgrader's in the same database (SQLite or PostgreSQL);
* :mod:`.roster`, :mod:`.codes`, :mod:`.sessions` - roster files, access codes (argon2 hashes only), signed
  sessions and CSRF tokens;
* :mod:`.uploads` - an uploaded notebook checked and stored in the data folder;
* :mod:`.queue`, :mod:`.dispatcher`, :mod:`.worker` - the durable queue and the grading loop (batch pools);
* :mod:`.counting` - which attempt counts, its score (one source of truth) and the gradebook that follows it;
* :mod:`.regrade`, :mod:`.dashboard` - regrades and the instructors' figures.

:mod:`.web` (Starlette, Jinja2) is the HTTP layer: the app factory, authentication, the error mapping, the
handlers of the API and the pages.  ``tests/test_layers.py`` keeps the core free of both and the package free
of import cycles.  The service uses the batch layer's jobs and pools (never the sandbox directly), the
store's gradebook and feedback pages, and the result types of :mod:`autograder.model`.
"""
