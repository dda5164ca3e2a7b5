"""What a class's results tell the instructor, per assignment (no HTTP, no files: the summary page and the
service's live dashboard can both use it).

* **Misconceptions**: the students each known misconception was named for (from the results' diagnoses).
* **Cases**: for every hidden case its difficulty (share of students passing it; a voided validation case counts
  as passed: its input was rejected) and discrimination, the point-biserial correlation between passing the case
  (0/1) and the *rest score* (the score without this case's points)::

      r_pb = (M_pass - M_fail) / s * sqrt(p (1 - p))

  with ``M_pass``/``M_fail`` the mean rest score of those who passed/failed, ``s`` the population standard
  deviation of the rest score and ``p`` the share passing; None when everyone passed, everyone failed or the
  rest score does not vary.  A case is *flagged* when strong students fail it: at least half of the strong
  students (rest score in the top quarter of the class, at least one student) fail it, or its discrimination
  is negative.
* **Worth a look**: students whose wrong results are identical (same value or same error, as the feedback
  shows it) on at least :data:`MIN_SHARED` hidden cases that most students (more than half) pass.  Shown as
  something to look at, never as a verdict: a common mistake explained in the book also produces equal wrong
  values.
"""

from __future__ import annotations

import math
import statistics
from itertools import combinations
from typing import Any

from ..model import SubmissionResult

__all__ = ["assignment_figures", "point_biserial", "MIN_SHARED"]

MIN_SHARED = 5


def point_biserial(passed: list[bool], rest: list[float]) -> float | None:
    """Point-biserial correlation of ``passed`` with ``rest`` (None when it is undefined)."""
    n = len(passed)
    k = sum(passed)
    if n == 0 or k in (0, n):
        return None
    s = statistics.pstdev(rest)
    if s == 0:
        return None
    m1 = statistics.fmean(r for r, p in zip(rest, passed) if p)
    m0 = statistics.fmean(r for r, p in zip(rest, passed) if not p)
    p = k / n
    return (m1 - m0) / s * math.sqrt(p * (1 - p))


def _misconceptions(results: list[SubmissionResult]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for r in sorted(results, key=lambda r: r.student):
        for d in r.diagnoses:
            m = out.setdefault(d.misconception, {"title": d.title or d.misconception, "link": d.link, "students": [],
                                                 "functions": []})
            if r.student not in m["students"]:
                m["students"].append(r.student)
            if d.function not in m["functions"]:
                m["functions"].append(d.function)
    return dict(sorted(out.items(), key=lambda kv: (-len(kv[1]["students"]), kv[0])))


def _cases(results: list[SubmissionResult]) -> dict[str, dict[str, Any]]:
    hidden = [c for c in results[0].cases if c.hidden]
    by_student = {r.student: {c.id: c for c in r.cases} for r in results}
    rest_all = {r.student: r.score for r in results}
    out: dict[str, dict[str, Any]] = {}
    for case in hidden:
        rows = [(s, cases[case.id]) for s, cases in by_student.items() if case.id in cases]
        passed = [not c.failed for _, c in rows]  # a voided validation case rejected its input: the item was done
        rest = [rest_all[s] - c.earned for s, c in rows]
        cut = sorted(rest, reverse=True)[max(0, math.ceil(len(rest) / 4) - 1)] if rest else 0.0
        strong = [p for p, x in zip(passed, rest) if x >= cut]
        r_pb = point_biserial(passed, rest)
        strong_fail = sum(1 for p in strong if not p)
        out[case.id] = {"description": case.description, "students": len(rows), "passed": sum(passed),
                        "difficulty": sum(passed) / len(rows) if rows else None, "discrimination": r_pb,
                        "strong_students": len(strong), "strong_failed": strong_fail,
                        "flagged": bool(strong and 2 * strong_fail >= len(strong)) or (r_pb is not None and r_pb < 0)}
    return out


def _worth_a_look(results: list[SubmissionResult], cases: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    common = {cid for cid, c in cases.items() if c["students"] and 2 * c["passed"] > c["students"]}
    wrong: dict[str, set[tuple[str, str]]] = {}
    for r in results:
        wrong[r.student] = {(c.id, c.result.got) for c in r.cases
                            if c.id in common and c.failed and c.result.got not in ("", "—")}
    shared: dict[frozenset, set[str]] = {}
    for a, b in combinations(sorted(wrong), 2):
        same = wrong[a] & wrong[b]
        if len({cid for cid, _ in same}) >= MIN_SHARED:
            shared.setdefault(frozenset(same), set()).update((a, b))
    groups = [{"students": sorted(students), "cases": sorted({cid for cid, _ in same})} for same, students in shared.items()]
    return sorted(groups, key=lambda g: (-len(g["students"]), -len(g["cases"]), g["students"]))


def assignment_figures(results: list[SubmissionResult]) -> dict[str, Any]:
    """The three figures of one assignment's results (all of the same assignment)."""
    if not results:
        return {"misconceptions": {}, "cases": {}, "worth_a_look": []}
    cases = _cases(results)
    return {"misconceptions": _misconceptions(results), "cases": cases, "worth_a_look": _worth_a_look(results, cases)}
