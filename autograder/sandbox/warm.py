"""Warm sandboxes: a process keeps its idle zygote sandboxes between submissions.

A :class:`~.zygote.Zygote` is one bubblewrap sandbox whose runner has started Python, imported NumPy and the
runner, and waits for ``fork`` (it never runs student code; see ``payload/zygote.py``).  Starting one
costs most of a submission's time, so when a :class:`~.session.Session` is closed its zygote, if it is
healthy, goes back here (:func:`give`) and the next session of this process takes it (:func:`take`),
also for another student: every run is a freshly forked child with its own namespaces, scratch file
systems, seccomp filter and cgroups, and the zygote's memory holds nothing of any submission.

A zygote is not kept when:

* its session's settings say so (:attr:`~autograder.model.SandboxSettings.warm` False: one sandbox per
  submission, the cold path the benchmarks compare with; a grading command sets it from
  ``AUTOGRADER_SANDBOX=cold``, :func:`asked_cold`);
* it served :data:`MAX_RUNS` runs, or the resident memory of its processes grew by more than
  :data:`MAX_GROWTH` bytes since it started (recycled);
* it is dead, or its session could not bring it back to exactly its state before the run (then the
  session destroys it: a misbehaving zygote is replaced).

A process keeps at most :data:`MAX_IDLE` idle zygotes (a grading worker needs one); they die with the
process (bubblewrap's ``--die-with-parent``) and are destroyed at exit.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Mapping

from .zygote import Zygote

ENV_COLD = "AUTOGRADER_SANDBOX"  # "cold": never keep a sandbox for the next submission
MAX_RUNS = 500  # runs (forked children) one zygote serves before it is recycled
MAX_GROWTH = 64 << 20  # bytes its processes' resident memory may grow before it is recycled
MAX_IDLE = 2


def asked_cold(environ: Mapping[str, str]) -> bool:
    """Whether ``environ`` (a grading command's environment, read once) asks for the cold path
    (``AUTOGRADER_SANDBOX=cold``)."""
    return environ.get(ENV_COLD, "").strip().lower() == "cold"


def worn(z: Zygote) -> bool:
    """True when ``z`` should be recycled: too many runs, or its memory grew."""
    return z.runs >= MAX_RUNS or z.rss() > z.rss0 + MAX_GROWTH


_idle: list[Zygote] = []
_lock = threading.Lock()


def take(key: tuple) -> Zygote | None:
    """An idle zygote started with ``key``, or None (dead idle zygotes are destroyed on the way)."""
    found, dead = None, []
    with _lock:
        for z in list(_idle):
            if not z.alive():
                _idle.remove(z)
                dead.append(z)
            elif found is None and z.key == key:
                _idle.remove(z)
                found = z
    for z in dead:
        z.destroy()
    return found


def give(z: Zygote) -> None:
    """Keep an idle, healthy zygote for the next session of this process (or destroy it, see the module)."""
    if not z.alive() or worn(z):
        z.destroy()
        return
    with _lock:
        _idle.append(z)
        extra = _idle[:-MAX_IDLE]
        del _idle[:-MAX_IDLE]
    for old in extra:
        old.destroy()


def discard_all() -> None:
    """Destroy every idle zygote of this process (at exit; tests)."""
    with _lock:
        gone = list(_idle)
        _idle.clear()
    for z in gone:
        z.destroy()


def idle_count() -> int:
    with _lock:
        return len(_idle)


atexit.register(discard_all)
