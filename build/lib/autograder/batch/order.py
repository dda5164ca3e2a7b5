"""The order in which a batch's submissions start grading, so that a run that waits is not left for last.

A submission's wall time is its CPU time plus whatever its student's code waits (a ``time.sleep``, a slow
read): a wait uses no core, and the local pool's admission gate (:mod:`.admission`) starts another job beside
a waiting one, so a wait costs nothing as long as enough other work is still to be started.  A wait that
starts near the end of the batch is what the whole batch waits for: the old order (the most expensive
assignment first, the cheap ones last) put every cheap submission at the end, and in the benchmark's 30
submissions three cheap notebooks that sleep 2 s were the last three jobs, a 2 s tail with idle cores.

Which submission will wait cannot be known in advance (a notebook does not say so, and nothing a student
writes may move their submission), so the order is decided from the assignments alone:

* each submission's **CPU cost** (:func:`estimate`: runs of the student's code and cases) and its
  **exposure**: a run may wait :data:`WAIT` seconds, and assignment 5 runs the student's code 16 times per
  submission (once per planted implementation), so its exposure is 16 waits;
* the submissions are grouped by exposure; within a group the assignments are interleaved (each one's
  submissions spread evenly over the group, so no assignment is graded entirely at the end);
* of the orders of the groups (most exposed first, as before, or least exposed first) the one is taken whose
  expected overshoot is smallest: the sum over submissions of how far past the batch's end (its CPU work
  over the cores) each would finish if it waited (:func:`overshoot`).  A large batch starts the
  16-run submissions first (their waits end long before the batch does) and ends with the cheap ones; a
  small batch, whose end no 16-run wait can be hidden before anyway, starts the cheap ones first, so that
  their waits overlap the expensive ones' computing.

The order is fair: it depends only on each submission's assignment and, within an assignment, on the
collection's order (by student id); the grade never depends on it (every cell and call is judged by its
own run's CPU time, whatever runs beside it).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable, Sequence, TypeVar

from ..check.specs import Assignment

T = TypeVar("T")

WAIT = 2.0  # seconds one run of a student's code may wait (sleep, a slow read) that the order tries to hide
RUN_SECONDS = 0.03  # CPU seconds of one run: fork of the warm zygote, isolation, the notebook's cells
CASE_SECONDS = 0.0015  # CPU seconds of one case: the call in the sandbox, the reference, the comparison
MAX_GROUPS = 4  # up to this many distinct exposures every order of them is tried


@dataclass(frozen=True)
class Estimate:
    """What grading one submission of an assignment is expected to cost."""

    seconds: float  # CPU seconds when nothing waits
    runs: int  # how often the student's code runs (each run may wait)

    @property
    def exposure(self) -> float:
        """Seconds the submission may wait in all: :data:`WAIT` for each run."""
        return self.runs * WAIT


def estimate(assignment: Assignment) -> Estimate:
    """The expected cost of one submission of ``assignment`` (calibrated on this machine's warm sandboxes:
    0.10-0.16 s for assignments 1-4, 0.35-0.6 s for assignment 5's 16 runs)."""
    runs = max(1, sum(c.kind == "mutant" for c in assignment.cases))
    return Estimate(RUN_SECONDS * runs + CASE_SECONDS * len(assignment.cases), runs)


def interleave(items: Sequence[T], assignment_of: Callable[[T], str], estimates: dict[str, Estimate]) -> list[T]:
    """``items`` with each assignment's items spread evenly: the k-th of an assignment's n items at (k + 1/2) / n
    of the list (the cheaper assignment first where two meet); each assignment keeps its items' order."""
    by: dict[str, list[T]] = {}
    for item in items:
        by.setdefault(assignment_of(item), []).append(item)
    placed = [((k + 0.5) / len(group), estimates[name].seconds, name, k, item)
              for name, group in by.items() for k, item in enumerate(group)]
    placed.sort(key=lambda p: p[:4])
    return [p[-1] for p in placed]


def overshoot(order: Sequence[T], assignment_of: Callable[[T], str], estimates: dict[str, Estimate],
              cores: int) -> float:
    """Seconds, summed over ``order``, by which each submission would end after the batch's estimated end (its
    CPU work over ``cores``) if it waited its whole exposure; a submission starts when the work before it is done."""
    cores = max(1, cores)
    end = sum(estimates[assignment_of(i)].seconds for i in order) / cores
    done = total = 0.0
    for item in order:
        e = estimates[assignment_of(item)]
        total += max(0.0, done / cores + e.exposure + e.seconds - end)
        done += e.seconds
    return total


def start_order(items: Sequence[T], assignment_of: Callable[[T], str], estimates: dict[str, Estimate],
                cores: int) -> list[T]:
    """The order in which to start grading ``items`` on ``cores`` job slots (see the module docstring).

    Parameters
    ----------
    items : sequence
        The submissions, in the collection's order (by student).
    assignment_of : callable
        The assignment name of an item.
    estimates : dict
        :func:`estimate` of every assignment that occurs.
    cores : int
        Jobs that compute at once (the pool's slots).
    """
    groups: dict[int, list[T]] = {}
    for item in items:
        groups.setdefault(estimates[assignment_of(item)].runs, []).append(item)
    mixed = {runs: interleave(group, assignment_of, estimates) for runs, group in groups.items()}
    most_exposed_first = sorted(mixed, reverse=True)
    best: list[T] | None = None
    best_cost = 0.0
    # the old order (most exposed first) is tried first and kept on a tie; with more than MAX_GROUPS kinds of
    # submission only it and its reverse
    if len(most_exposed_first) <= MAX_GROUPS:
        candidates = [list(p) for p in itertools.permutations(most_exposed_first)]
    else:
        candidates = [most_exposed_first, most_exposed_first[::-1]]
    for runs_order in candidates:
        order = [item for runs in runs_order for item in mixed[runs]]
        cost = overshoot(order, assignment_of, estimates, cores)
        if best is None or cost < best_cost - 1e-9:
            best, best_cost = order, cost
    return best or []
