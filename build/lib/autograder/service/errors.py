"""The service's domain errors: what the core refuses, in Chinese, without knowing about HTTP.

The web layer (:mod:`autograder.service.web.errors`) is the one place that turns each kind into an HTTP status
(:data:`~autograder.service.web.errors.STATUS`), a JSON body for the API and an error page for people.
``retry_after`` (seconds) says when a refusal of :class:`TooMany` ends.
"""

from __future__ import annotations


class ServiceError(Exception):
    """A refusal the person can act on: ``message`` in Chinese, ``retry_after`` seconds when waiting helps."""

    def __init__(self, message: str, *, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after


class Invalid(ServiceError):
    """The input is not acceptable (a form field, a file, a roster line)."""


class NotSignedIn(ServiceError):
    """No valid access code or session."""


class Forbidden(ServiceError):
    """Signed in, but not allowed (a role, a closed assignment, a foreign origin, a wrong CSRF token)."""


class NotFound(ServiceError):
    """Nothing of that name the caller may see (another student's submission looks exactly like this)."""


class NotReady(ServiceError):
    """The thing exists but is not in the state asked for (a submission not graded yet)."""


class TooLarge(ServiceError):
    """A body or a file over its limit."""


class Unsupported(ServiceError):
    """A body in a form the service does not read (compressed)."""


class TooSlow(ServiceError):
    """A request body that did not arrive in its time (a grace period plus a minimum rate)."""


class Busy(ServiceError):
    """No room now (every upload slot taken, or the caller's share of them); ``retry_after`` says when to retry."""


class TooMany(ServiceError):
    """A limit per time window is used up (attempts per 24 hours, wrong access codes)."""
