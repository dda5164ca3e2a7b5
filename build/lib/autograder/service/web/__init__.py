"""The service's web layer (Starlette): the only part of :mod:`autograder.service` that sees HTTP.

* :mod:`.app` - the app factory: Mounts for the API, the instructors' pages, static files, the students' pages;
* :mod:`.auth` - who is asking: access codes, session cookies, roles, CSRF tokens, ``Origin``;
* :mod:`.errors` - the one mapping from the core's refusals to HTTP statuses, JSON and error pages;
* :mod:`.forms` - request bodies read with hard caps (uploads, forms);
* :mod:`.render` - the pages' Jinja2 environment (the store's, overlaid), times, relative links;
* :mod:`.api`, :mod:`.student_pages`, :mod:`.instructor_pages` - the handlers, module-level functions that
  translate between HTTP and the core (``request.app.state.service``).
"""
