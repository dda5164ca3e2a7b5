"""The admission gate's hand-on of a leaving extra job's place (:class:`autograder.batch.admission.CpuGate`).

In process, with the measurement replaced by a scripted one (its answer and how often it ran are what these
tests look at; the real measurement of a real pool is tested in ``tests/sandbox/test_oversubscription.py``).
"""

from __future__ import annotations

import threading
import time

import pytest

from autograder.batch import admission


class Measure:
    """Stands in for :func:`admission.cpu_demand`: answers ``demand`` and counts its calls."""

    def __init__(self, demand: float) -> None:
        self.demand, self.calls = demand, 0

    def __call__(self, root: int, interval: float = admission.INTERVAL, samples: int = 4) -> float:
        self.calls += 1
        time.sleep(0.01)
        return self.demand


@pytest.fixture
def measure(monkeypatch) -> Measure:
    m = Measure(0.0)
    monkeypatch.setattr(admission, "cpu_demand", m)
    monkeypatch.setattr(admission, "PAUSE", 60.0)  # after a refusal only a leaving job can let a waiter in
    return m


def _waiter(gate: admission.CpuGate) -> tuple[threading.Thread, list[bool]]:
    admitted: list[bool] = []
    t = threading.Thread(target=lambda: admitted.append(gate.enter()), daemon=True)
    t.start()
    return t, admitted


def _refused(gate: admission.CpuGate, measure: Measure, calls: int) -> None:
    """Wait until the waiter's measurement (the ``calls``-th) refused it."""
    for _ in range(500):
        if measure.calls >= calls and gate._refused.value:
            return
        time.sleep(0.01)
    raise AssertionError("the waiter never measured")


def _slot_and_measured_extra(measure: Measure) -> admission.CpuGate:
    gate = admission.CpuGate(1)
    assert gate.enter() is False and measure.calls == 0  # the slot: no measurement
    assert gate.enter() is True and measure.calls == 1  # the pool was measured idle: one job beyond the slot
    measure.demand = 5.0  # from now on every measurement refuses
    return gate


def test_a_leaving_extra_job_hands_its_place_to_a_waiting_one_without_a_measurement(measure, monkeypatch):
    # windows far longer than a loaded machine's scheduling delays (their lapsing is tested below)
    monkeypatch.setattr(admission, "HANDOFF_WINDOW", 30.0)
    monkeypatch.setattr(admission, "HANDOFF_FRESH", 30.0)
    gate = _slot_and_measured_extra(measure)
    t, admitted = _waiter(gate)
    _refused(gate, measure, 2)
    gate.leave(extra=True)  # the extra job ends: its core is free, the waiter takes its place at once
    t.join(5.0)
    assert admitted == [True] and measure.calls == 2
    assert gate.running.value == 2 and gate.admitted_extra.value == 2 and gate.handed_on.value == 1


def test_a_slot_job_that_leaves_hands_on_nothing_while_the_slots_stay_full(measure):
    gate = _slot_and_measured_extra(measure)
    t, admitted = _waiter(gate)
    _refused(gate, measure, 2)
    gate.leave(extra=False)  # the slot's job ends; the extra job now fills the slot: nothing is free
    t.join(0.5)
    assert t.is_alive() and not admitted and gate.running.value == 1 and gate.handed_on.value == 0
    gate.leave(extra=True)  # the last job ends: the slot is free, taken without a measurement
    t.join(5.0)
    assert admitted == [False] and measure.calls == 2


def test_no_hand_on_once_the_admitting_measurement_is_old(measure, monkeypatch):
    monkeypatch.setattr(admission, "HANDOFF_WINDOW", 0.2)
    gate = _slot_and_measured_extra(measure)
    t, admitted = _waiter(gate)
    _refused(gate, measure, 2)
    time.sleep(0.3)  # longer ago than the window: runs that waited may compute again; measure first
    gate.leave(extra=True)
    t.join(0.5)
    assert t.is_alive() and not admitted and gate.handed_on.value == 0
    gate.leave()
    t.join(5.0)
    assert admitted == [False]


def test_an_unclaimed_place_lapses_and_the_next_job_is_measured(measure, monkeypatch):
    monkeypatch.setattr(admission, "HANDOFF_FRESH", 30.0)  # taken at once below, however loaded the machine
    monkeypatch.setattr(admission, "PAUSE", 0.0)
    gate = admission.CpuGate(1)
    assert gate.enter() is False
    assert gate.enter() is True  # measured
    assert gate.enter() is True and measure.calls == 2  # measured again: the pool is still idle
    gate.leave(extra=True)  # nobody waits: its place is handed on for HANDOFF_FRESH seconds
    assert gate.enter() is True and measure.calls == 2 and gate.handed_on.value == 1  # taken at once
    monkeypatch.setattr(admission, "HANDOFF_FRESH", 0.05)
    gate.leave(extra=True)
    time.sleep(0.1)
    measure.demand = 5.0
    admitted: list[bool] = []
    t = threading.Thread(target=lambda: admitted.append(gate.enter()), daemon=True)
    t.start()
    t.join(0.5)
    assert t.is_alive() and not admitted and measure.calls >= 3 and gate.handed_on.value == 1
    gate.leave()
    gate.leave()  # the slot is free again
    t.join(5.0)
    assert admitted == [False]
