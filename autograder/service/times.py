"""The course's time zone, and times as the pages and ``grades.csv`` write them.

Every time a page shows is written in one zone, the course's: that of the deadlines in ``course.yml`` (UTC
when no assignment has one).  The instructor's forms read and write times in that zone too, so what a page
says and what a form means never differ by a device's setting.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone, tzinfo

__all__ = ["course_zone", "utc_offset", "stamp", "as_datetime"]


def course_zone(policy) -> tzinfo:
    """The zone of the first deadline (or late cut-off) of ``policy`` (a :class:`.policy.CoursePolicy`: its assignments,
    then its quizzes); UTC without any."""
    for p in [*policy.assignments.values(), *policy.quizzes.values()]:
        for t in (p.deadline, p.late_until):
            if t is not None and t.tzinfo is not None:
                return t.tzinfo
    return timezone.utc


def utc_offset(dt: datetime) -> str:
    """``UTC+08:00``: the offset of ``dt``'s zone at ``dt``."""
    off = dt.utcoffset() or timedelta(0)
    sign = "-" if off < timedelta(0) else "+"
    minutes = abs(int(off.total_seconds())) // 60
    return f"UTC{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def as_datetime(t: float | datetime) -> datetime:
    """An aware datetime from epoch seconds (UTC) or a datetime."""
    return t if isinstance(t, datetime) else datetime.fromtimestamp(t, timezone.utc)


def stamp(t: float | datetime, tz: tzinfo) -> str:
    """``2026-12-20 23:59（UTC+08:00）``: ``t`` in the zone ``tz``, with the zone said."""
    shown = as_datetime(t).astimezone(tz)
    return f"{shown:%Y-%m-%d %H:%M}（{utc_offset(shown)}）"
