"""The order in which a batch starts its submissions (autograder.batch.order): in process, no sandbox.

The old order (the most expensive assignment first, ``-cost`` of the case count with 20 per planted
implementation) is kept here as ``_old_order``: the tests that are about the change fail on it."""

from __future__ import annotations

import random

import pytest

from autograder.batch import order
from autograder.check import all_assignments

A = all_assignments()
EST = {name: order.estimate(a) for name, a in A.items()}
PS5 = "ps5_testing"
# the benchmark's 30 submissions (bench/bench_scale.py --n 30, seed 0): 15 of ps1, 5 of ps2, 3 of ps3, 1 of ps4, 6 of ps5
BENCH_30 = {"ps1_threshold_metrics": 15, "ps2_roc_auc": 5, "ps3_pr_ap": 3, "ps4_calibration": 1, PS5: 6}


def _batch(counts: dict[str, int], seed: int = 0) -> list[tuple[str, str]]:
    """(student, assignment) items in the collection's order (sorted by student), students drawn at random."""
    rng = random.Random(seed)
    items = [(f"s{rng.randrange(10**6):06d}", name) for name, k in counts.items() for _ in range(k)]
    return sorted(items)


def _old_order(items):
    cost = {name: sum(20 if c.kind == "mutant" else 1 for c in a.cases) for name, a in A.items()}
    return sorted(items, key=lambda i: -cost[i[1]])


def _order(items, cores=2):
    return order.start_order(items, lambda i: i[1], EST, cores)


def _starts(seq, cores=2):
    """Estimated start (seconds) of each item when ``cores`` jobs compute at once, and the batch's end."""
    done, starts = 0.0, []
    for item in seq:
        starts.append(done / cores)
        done += EST[item[1]].seconds
    return starts, done / cores


def test_the_estimates_say_which_assignment_runs_the_students_code_how_often():
    assert EST[PS5].runs == 16 and all(EST[n].runs == 1 for n in A if n != PS5)
    # assignment 5 is 3-6 times as expensive as the others (measured: 0.35-0.6 s against 0.10-0.16 s)
    assert all(3 <= EST[PS5].seconds / EST[n].seconds <= 6 for n in A if n != PS5)


@pytest.mark.parametrize("make_order", [_order, _old_order], ids=["new", "old"])
def test_an_order_is_a_permutation_that_keeps_each_assignments_collection_order(make_order):
    items = _batch(BENCH_30)
    seq = make_order(items)
    assert sorted(seq) == items
    for name in A:
        assert [i for i in seq if i[1] == name] == [i for i in items if i[1] == name]


def test_a_small_batch_starts_the_cheap_submissions_first_so_that_their_waits_overlap_the_expensive_ones():
    """The benchmark's 30: a 2 s wait of a one-run submission ends at most ~0.6 s after the batch's estimated end,
    and for a third of them before it; in the old order they all started after assignment 5 and every such wait
    ended after the batch (its three 2 s sleepers were the run's last 2 s)."""
    late = {}
    for make_order in (_order, _old_order):
        seq = make_order(_batch(BENCH_30))
        starts, end = _starts(seq)
        late[make_order] = [s + order.WAIT + EST[i[1]].seconds - end for s, i in zip(starts, seq) if i[1] != PS5]
    assert max(late[_order]) < 0.7 and sum(x <= 0 for x in late[_order]) >= len(late[_order]) / 3
    assert min(late[_old_order]) > 0 and max(late[_old_order]) > 2.0
    assert [i[1] for i in _order(_batch(BENCH_30))][-6:] == [PS5] * 6


def test_a_large_class_starts_assignment_5_first_where_its_16_waits_are_hidden_and_ends_with_cheap_ones():
    """1,000 students x 5 assignments: a wait in each of assignment 5's 16 runs (32 s) ends long before the batch
    does only when assignment 5 starts first (as the old order did); the end holds one-run submissions."""
    items = [(f"s{k:04d}", name) for k in range(1000) for name in A]
    seq = _order(items)
    starts, end = _starts(seq)
    assert all(s + EST[PS5].exposure + EST[PS5].seconds <= end for s, i in zip(starts, seq) if i[1] == PS5)
    assert {i[1] for i in seq[-100:]} != {PS5} and PS5 not in {i[1] for i in seq[-2000:]}
    assert order.overshoot(seq, lambda i: i[1], EST, 2) <= order.overshoot(
        [i for i in seq if i[1] != PS5] + [i for i in seq if i[1] == PS5], lambda i: i[1], EST, 2)


def test_no_assignment_is_left_for_the_end_of_its_group():
    """Within the one-run group each assignment's submissions are spread over the group: the last fifth holds
    several assignments (the old order graded assignment 3 entirely at the end, after ps1, ps4 and ps2)."""
    counts = {"ps1_threshold_metrics": 48, "ps2_roc_auc": 20, "ps3_pr_ap": 11, "ps4_calibration": 10}
    for make_order, ok in ((_order, True), (_old_order, False)):
        seq = make_order(_batch(counts, seed=1))
        tail = seq[-len(seq) // 5:]
        assert (len({i[1] for i in tail}) >= 3) is ok, make_order.__name__
        firsts = [next(n for n, i in enumerate(seq) if i[1] == name) for name in counts]
        assert all(n < len(seq) / 3 for n in firsts) is ok  # each assignment starts in the first third


def test_the_order_depends_on_assignments_and_collection_order_only():
    """Nothing a student writes moves their submission: the same students and assignments give the same order,
    whatever else is known about them (here: the items carry unrelated data that differs)."""
    items = _batch(BENCH_30, seed=3)
    plain = _order(items)
    tagged = order.start_order([(s, a, random.random()) for s, a in items], lambda i: i[1], EST, 2)
    assert [(s, a) for s, a, _ in tagged] == plain
    assert _order([]) == []
    one = [("s1", PS5)]
    assert _order(one) == one
