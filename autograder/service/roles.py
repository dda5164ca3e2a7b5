"""Who may do what in a course: the three roles and their permissions, in one table.

A person's role holds in one course only (an account belongs to one course, :mod:`.courses`); the same person
may be a student in one course and a teaching assistant in another.  Above the courses stands the service
administrator (:mod:`.admins`), who creates courses, appoints their instructors and binds LMS courses.

What a teaching assistant may do follows Canvas's and Moodle's default TA ("non-editing teacher") role: see
every student's work with full feedback, download grades, regrade, and grant one student a later deadline or
extra attempts (the everyday requests of a section); not change who is in the course or how they sign in
(roster import, access codes), not bind the course to an LMS course, and not confirm such a binding.
"""

from __future__ import annotations

from enum import Enum


class Role(str, Enum):
    """A role in one course (stored as its value in ``service_accounts.role``)."""

    STUDENT = "student"
    TA = "ta"
    INSTRUCTOR = "instructor"

    @property
    def label(self) -> str:
        """The role's name on the pages."""
        return LABELS[self.value]


class Permission(str, Enum):
    """An action of a course's staff (a student's own actions - submitting, reading their work - are not listed)."""

    VIEW_CLASS = "view_class"  # every student's attempts with full feedback, dashboards, grades.csv
    REGRADE = "regrade"
    GRANT = "grant"  # a later deadline, extra attempts or a waived late penalty for one student
    MANAGE_ROSTER = "manage_roster"  # import a roster, reset access codes
    MANAGE_LMS = "manage_lms"  # bind and unbind LMS courses, confirm requests, roster sync, passback retries


ADMIN = "admin"  # the role of every site administrator (``site_admins``): above the courses, in none of them
LABELS = {Role.STUDENT.value: "学生", Role.TA.value: "助教", Role.INSTRUCTOR.value: "教师", ADMIN: "管理员"}

PERMISSIONS: dict[Role, frozenset[Permission]] = {
    Role.STUDENT: frozenset(),
    Role.TA: frozenset({Permission.VIEW_CLASS, Permission.REGRADE, Permission.GRANT}),
    Role.INSTRUCTOR: frozenset(Permission),
}


def can(role: str, permission: Permission) -> bool:
    """Does ``role`` (a :class:`Role` value) hold ``permission``?  Unknown roles hold nothing."""
    try:
        return permission in PERMISSIONS[Role(role)]
    except ValueError:
        return False


def is_staff(role: str) -> bool:
    """Instructors and teaching assistants: the people who see the class, not only their own work."""
    return can(role, Permission.VIEW_CLASS)
