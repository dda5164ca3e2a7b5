"""Why grading a submission (or a check) ended without a result: the kinds of failure, stored as data.

A finished row with a :class:`Failure` in its ``failure`` column failed for that reason; its ``error`` column holds
the kind's detail (see each kind).  A ``failed`` row has no result; a ``graded`` row with a failure kept its
previous result after its regrade failed (:func:`.queue.finish_failed`).  What each reader sees is rendered from
the kind and the detail (:func:`.queue.error_for`); which kinds still take one of the student's attempts is part of
the attempts rule (:data:`.attempts.COUNTED_FAILURES`).
"""

from __future__ import annotations

import enum

import sqlalchemy as sa


class Failure(enum.Enum):
    """The kind of a failure, with the detail its row's ``error`` keeps."""

    #: The service's process exited again and again while grading it; detail: how many times.
    GAVE_UP = "gave_up"
    #: The stored notebook is gone or does not match its checksum; no detail.
    FILE_LOST = "file_lost"
    #: Its assignment is no longer in the course's configuration; detail: the assignment's name.
    NOT_CONFIGURED = "not_configured"
    #: The grading system's own failure; detail: the pool's error (a worker's host name, a grader's exception, a
    #: sandbox's or a scratch folder's details), for instructors only.
    SYSTEM = "system"

    @property
    def told_to_students(self) -> bool:
        """Whether a student reads its reason as it is (else only that the grading system failed)."""
        return self is not Failure.SYSTEM


#: The column type: the kind's value as text (no database enum type, so a new kind needs no type change).
COLUMN_TYPE = sa.Enum(Failure, native_enum=False, length=16, validate_strings=True,
                      values_callable=lambda kinds: [k.value for k in kinds])
