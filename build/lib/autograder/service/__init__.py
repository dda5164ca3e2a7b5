"""The online grading service (``autograder serve``): students of several courses submit over HTTP, queues grade.

Three layers, pointing one way (``tests/test_layers.py``): the core, :mod:`.lti` (the LTI 1.3 protocol: launches,
deep linking, AGS and NRPS calls to the platforms) and :mod:`.web` (HTTP).  The core never sees HTTP, raises
:mod:`.errors`, and owns every table:

* :mod:`.site`, :mod:`.courses`, :mod:`.roles` - the site and its courses, each course's roles and permissions;
* :mod:`.service` - :class:`~.service.Service`, one course's core in one object (what the web layer calls);
* :mod:`.accounts` - signing in with a code, failed sign-ins, the roster, enrolling students;
* :mod:`.submissions` - may a student submit now (and why not), accepting, attempts, one shape of a score;
* :mod:`.policy`, :mod:`.overrides` - ``course.yml`` and an instructor's exceptions for one student;
* :mod:`.database`, :mod:`.lms_tables`, :mod:`.schema` - the tables (a course's next to its nbgrader gradebook;
  the site's), and their alembic migrations (``migrations/``);
* :mod:`.roster`, :mod:`.codes`, :mod:`.sessions` - roster files, access codes (argon2 hashes only), signed
  sessions and CSRF tokens;
* :mod:`.uploads` - an uploaded notebook checked and stored in the data folder;
* :mod:`.queue`, :mod:`.dispatcher`, :mod:`.worker` - the durable queue and the grading loop (batch pools);
* :mod:`.counting`, :mod:`.outbox` - which attempt counts, its score (one source of truth), the gradebook that
  follows it, and the LMS lines each change must reach;
* :mod:`.regrade`, :mod:`.dashboard` - regrades and the instructors' figures.

:mod:`.web` (Starlette, Jinja2) is the HTTP layer: the app factory, authentication, the error mapping, the
handlers of the API and the pages.  ``tests/test_layers.py`` keeps the core free of both, the layers pointing one
way and the package free of import cycles.  The service uses the batch layer's jobs and pools (never the sandbox directly), the
store's gradebook and feedback pages, and the result types of :mod:`autograder.model`.
"""
