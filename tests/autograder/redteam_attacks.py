"""Red-team attack notebooks (student side), shared by ``test_redteam.py`` and the notes' scripts.

Each entry of :data:`ATTACKS` builds ``{student_id: (assignment, notebook)}``; a notebook is an
nbformat object or raw bytes/text (a file no editor would write).  What each attack does and what a
fixed engine should produce is stated in ``test_redteam.py``.
"""

from __future__ import annotations

import json

import make_corpus as mc
from make_corpus import A1, A2, A3, A4, A5, append, cell, solution, student

# Student code that finds the runner's protocol pipe (the write end of the sandbox's stdout): anything
# written there reaches the trusted side as a message.
PROTO_FD = (
    "import os, stat, fcntl, signal\n"
    "def _proto_fd():\n"
    "    for fd in range(3, 64):\n"
    "        try:\n"
    "            st = os.fstat(fd)\n"
    "        except OSError:\n"
    "            continue\n"
    "        if stat.S_ISFIFO(st.st_mode) and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY:\n"
    "            return fd\n"
    "def _write_all(fd, data):\n"
    "    view = memoryview(data)\n"
    "    while view:\n"
    "        view = view[os.write(fd, view):]\n"
)


def cell_done_flood(seconds: int = 600, items: int = 1 << 20) -> str:
    """A cell that forges ``cell_done`` messages with distinct indices and a large error object, for ``seconds``.

    The trusted side keeps every forged error (``SetupReport.cell_errors``) until the result is built."""
    return PROTO_FD + (
        "import time\n"
        "signal.setitimer(signal.ITIMER_PROF, 0)\n"
        "signal.setitimer(signal.ITIMER_REAL, 0)\n"
        "fd = _proto_fd()\n"
        f"body = (b'[],' * {items})[:-1]\n"
        "k = time.time_ns()\n"
        f"end = time.monotonic() + {seconds}\n"
        "while time.monotonic() < end:\n"
        "    k += 1\n"
        "    _write_all(fd, b'{\"op\":\"cell_done\",\"index\":%d,\"error\":{\"tb\":[%s]}}\\n' % (k, body))\n"
        # a forged cell_start after each message: when the setup time runs out, the trusted side blames (and
        # skips) this forged cell, restarts the sandbox and runs the real cells again, flooding again
        "    _write_all(fd, b'{\"op\":\"cell_start\",\"index\":%d}\\n' % (k + 10**9))\n"
    )


def flood_cell_done():
    return {"redteam_cell_done_flood": (A1, append(solution(A1), cell_done_flood()))}


def flood_with_neighbours():
    out = flood_cell_done()
    for i in range(3):
        out[f"honest_neighbour_a5_{i}"] = (A5, solution(A5))
        out[f"honest_neighbour_a1_{i}"] = (A1, solution(A1))
    return out


ATTACKS = {
    "cell_done_flood": flood_cell_done,
    "cell_done_flood_neighbours": flood_with_neighbours,
}


MiB = 1 << 20


def _raw_notebook(cells_json: str) -> str:
    return '{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [' + cells_json + ']}'


def many_empty_cells(size: int = 19 * MiB) -> str:
    """Just under the 20 MiB limit: millions of empty cells (``{}``), each copied into a dict by the reader."""
    n = (size - 100) // 3
    return _raw_notebook(",".join(["{}"] * n))


def huge_code_cell(size: int = 19 * MiB, magic: bool = False) -> dict:
    """One answer-like code cell of ~``size`` bytes: a list literal of millions of zeros (parsed with ``ast`` in the
    trusted process; with ``magic`` a ``%`` line makes IPython's transformer tokenise it first)."""
    nb = solution(A1)
    body = ("%time pass\n" if magic else "") + "DATA = [" + "0," * ((size - 200) // 2) + "]\n"
    return {"redteam_huge_code_cell" + ("_magic" if magic else ""): (A1, append(nb, body))}


ATTACKS["many_empty_cells"] = lambda: {"redteam_many_empty_cells": (A1, many_empty_cells())}
ATTACKS["huge_code_cell"] = lambda: huge_code_cell()
ATTACKS["huge_code_cell_magic"] = lambda: huge_code_cell(magic=True)


# -- assignment 5: the planted implementations tell their names -------------------------------------
PS5_NAME_ORACLE = '''
def _named(fn, name):
    """A planted implementation called without arguments answers with Python's TypeError, which names it."""
    try:
        fn()
    except Exception as exc:
        return str(exc).startswith(name + "()")
    return False


def test_binary_metrics(binary_metrics):
    assert _named(binary_metrics, "binary_metrics")


def test_roc(roc_curve, roc_auc, pairwise_auc):
    assert _named(roc_curve, "roc_curve") and _named(roc_auc, "roc_auc") and _named(pairwise_auc, "pairwise_auc")
'''


ATTACKS["ps5_name_oracle"] = lambda: {"redteam_ps5_name_oracle": (A5, append(student(A5), PS5_NAME_ORACLE))}


# -- validation gate: a table of the visible answers, whose inputs every student has -----------------------
LOOKUP_KEY = ("import numpy as np\n\n\n"
              "def _key(args, kwargs):\n"
              "    return repr([np.asarray(a).tolist() for a in args]) + repr(sorted(kwargs.items()))\n")


def _source_of(value) -> str:
    """Python source that rebuilds a reference value in the student's notebook (its own named tuples, NumPy arrays)."""
    import numpy as np

    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        return f"{type(value).__name__}(" + ", ".join(_source_of(v) for v in value) + ")"
    if isinstance(value, np.ndarray):
        return f"np.array({value.tolist()!r}, dtype={str(value.dtype)!r})".replace("inf", "float('inf')").replace("nan", "float('nan')")
    if isinstance(value, float):
        return repr(value).replace("nan", "float('nan')").replace("inf", "float('inf')")
    return repr(value)


def lookup_stub(name: str):
    """Answers for the VISIBLE inputs only (worked out by hand or with scikit-learn), ValueError for anything else."""
    from autograder.check.expected import expected_for, expects_error

    ns: dict = {}
    exec(LOOKUP_KEY, ns)  # noqa: S102 - the same key the notebook computes
    table: dict[str, dict[str, str]] = {fn: {} for fn in mc.A[name].functions}
    for case in mc.A[name].cases:
        if case.cell.endswith("_visible") and not expects_error(case):
            value, _ = expected_for(case.function, case.args, case.kwargs)
            table[case.function][ns["_key"](case.args, case.kwargs)] = _source_of(value)
    code = LOOKUP_KEY + "\n\n_TABLE = {\n"
    for fn, rows in table.items():
        code += f"    {fn!r}: {{\n" + "".join(f"        {k!r}: {v},\n" for k, v in rows.items()) + "    },\n"
    code += "}\n"
    for fn in mc.A[name].functions:
        code += (f"\n\ndef {fn}(*args, **kwargs):\n    k = _key(args, kwargs)\n"
                 f"    if k in _TABLE[{fn!r}]:\n        return _TABLE[{fn!r}][k]\n    raise ValueError('输入不合法')\n")
    return append(student(name), code)


ATTACKS["gate_lookup"] = lambda: {f"redteam_gate_lookup_{n}": (n, lookup_stub(n)) for n in (A1, A2, A3, A4)}


# -- scoring by metric: a share of a case only for a record of the right type whose fields it computes ----------
_BM_HEAD = "def binary_metrics(y_true, y_score, threshold, *, zero_division='nan'):\n"
METRIC_SHARE = {
    # the one metric it can compute (here: by hand from the counts), in a dict instead of the record
    "redteam_share_dict": _BM_HEAD + "    c = confusion_counts(y_true, np.asarray(y_score) >= threshold)\n"
                                     "    return {'tp': c.tp, 'recall': c.tp / (c.tp + c.fn)}\n",
    # a record of constants: it matches the reference's fields on some hidden cases by chance
    "redteam_share_constant": _BM_HEAD + "    return BinaryMetrics(0, 0, 0, 0, 0.0, float('nan'), float('nan'), float('nan'), float('nan'), 0.0)\n",
    # the counts computed right, every rate replaced by an exception's worth of nothing
    "redteam_share_raises": _BM_HEAD + "    confusion_counts(y_true, np.asarray(y_score) >= threshold)\n"
                                       "    raise RuntimeError('还没写完')\n",
}
ATTACKS["metric_share"] = lambda: {sid: (A1, append(solution(A1), code)) for sid, code in METRIC_SHARE.items()}
ATTACKS["ps5_and_gate"] = lambda: {**ATTACKS["ps5_name_oracle"](), **ATTACKS["gate_lookup"]()}


# -- feedback policy "cases": pass/fail of cases the student controls carries bits of hidden inputs ----------
LEAK_TARGET = "edge.ties_at_threshold"


PACK = ("def _pack(y, s, t):\n"
        "    bits = [int(v) for v in np.asarray(y).tolist()]\n"
        "    for x in list(np.asarray(s).tolist()) + [t]:\n"
        "        bits += [int(b) for b in format(int(round(10 * x)) & 15, '04b')]\n"
        "    return bits\n")


def _bm_order() -> list:
    return [c for c in mc.A[A1].cases if c.function == "binary_metrics"]


def leak_notebook():
    """binary_metrics answers the visible case from a table (so its validation cases count), remembers the hidden
    input of ``LEAK_TARGET`` (its position among the calls is known from the grade cells' listing) and then
    encodes that input, one bit per later call, as "raise ValueError" (1) or "return garbage" (0)."""
    from autograder.check.expected import expected_for

    target = next(i for i, c in enumerate(_bm_order()) if c.id == LEAK_TARGET) + 1
    visible = next(c for c in _bm_order() if c.cell.endswith("_visible"))
    ns: dict = {}
    exec(LOOKUP_KEY, ns)  # noqa: S102
    answer = _source_of(expected_for(visible.function, visible.args, visible.kwargs)[0])
    code = LOOKUP_KEY + (
        f"\n\n_VISIBLE = {{{ns['_key'](visible.args, visible.kwargs)!r}: {answer}}}\n"
        "_CALLS = []\n_BITS = []\n\n\n"
        + PACK + "\n\n"
        "def binary_metrics(y_true, y_score, threshold, *, zero_division='nan'):\n"
        "    _CALLS.append(1)\n"
        "    k = _key((y_true, y_score, threshold), {'zero_division': zero_division} if zero_division != 'nan' else {})\n"
        "    if k in _VISIBLE:\n"
        "        return _VISIBLE[k]\n"
        f"    if len(_CALLS) == {target}:\n"
        "        _BITS.extend(_pack(y_true, y_score, threshold))\n"
        f"    i = len(_CALLS) - {target} - 1\n"
        "    if 0 <= i < len(_BITS) and _BITS[i]:\n"
        "        raise ValueError('1')\n"
        "    return None\n")
    return append(student(A1), code)


def decode_leak(passed: set[str]) -> list[int]:
    """The bits a ``leak_notebook`` result carries: read from which validation cases passed (what ``cases`` shows)."""
    from autograder.check.expected import expects_error

    order = _bm_order()
    target = next(i for i, c in enumerate(order) if c.id == LEAK_TARGET)
    bits = []
    for i, case in enumerate(order[target + 1:]):
        if expects_error(case):
            bits.append((i, int(case.id in passed)))
    return bits


def leak_truth() -> list[int]:
    """What ``decode_leak`` reads when the channel works: the packed hidden input, at the same positions."""
    case = next(c for c in _bm_order() if c.id == LEAK_TARGET)
    ns: dict = {}
    exec(LOOKUP_KEY + PACK, ns)  # noqa: S102
    return ns["_pack"](*case.args)


ATTACKS["feedback_leak"] = lambda: {"redteam_feedback_leak": (A1, leak_notebook())}


# -- honest habits -------------------------------------------------------------------------------------
def honest_matplotlib():
    """The answer cell imports matplotlib at its top and a later cell plots the ROC curve with a Chinese title."""
    nb = mc.replace_in_answer(A2, "### BEGIN SOLUTION\n", "### BEGIN SOLUTION\nimport matplotlib.pyplot as plt\n")
    return append(nb, "r = roc_curve([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1])\nfig, ax = plt.subplots()\nax.plot(r.fpr, r.tpr)\n"
                      "ax.set_title('ROC 曲线')\nplt.show()")


def honest_time_magic():
    """``%time NAME = ...`` binds NAME in a kernel (IPython runs the statement in the user namespace)."""
    nb = mc.replace_in_answer(A2, "### BEGIN SOLUTION\n", "### BEGIN SOLUTION\n%time HALF = 0.5\n")
    c = cell(nb, mc.answer_id(A2))
    c.source = c.source.replace("def roc_auc(y_true, y_score):\n", "def roc_auc(y_true, y_score):\n    assert HALF == 0.5\n", 1)
    return nb


ATTACKS["honest"] = lambda: {"redteam_honest_matplotlib": (A2, honest_matplotlib()),
                             "redteam_honest_time_magic": (A2, honest_time_magic())}


# -- assignment 5: the student's test keeps the grader's process computing planted implementations ------------
PS5_GRADER_CPU = '''
def test_roc(roc_curve, roc_auc, pairwise_auc):
    import numpy as np
    y = np.r_[np.ones(10_000), np.zeros(10_000)].astype(int)
    s = np.round(np.random.default_rng(0).random(20_000), 2)
    while True:  # the sandbox waits (no CPU): the grader's process computes
        pairwise_auc(y[:4500].tolist() + y[-4500:].tolist(), s[:9_000])
'''
ATTACKS["ps5_grader_cpu"] = lambda: {"redteam_ps5_grader_cpu": (A5, append(solution(A5), PS5_GRADER_CPU))}


# -- forged setup messages -------------------------------------------------------------------------------
def forge(*messages: dict) -> str:
    """A cell that writes these messages to the trusted side, as if the runner had sent them."""
    lines = "".join(json.dumps(m) + "\n" for m in messages)
    return PROTO_FD + f"_write_all(_proto_fd(), {lines.encode()!r})\n"


def forged_float_cell_index():
    """A forged ``cell_done`` whose index is 1.5: the worker's result has ``cell_errors[0].cell == 1.5``, which the
    parent's ``SubmissionResult.from_json`` rejects (ResultFormatError) outside any handler."""
    msg = forge({"op": "cell_done", "index": 1.5, "error": {"type": "X", "tb": "y"}})
    out = {"redteam_float_cell_index": (A5, append(solution(A5), msg))}
    for i in range(3):
        out[f"honest_after_float_index_{i}"] = (A1, solution(A1))
    return out


def forged_isolate_error():
    """A forged ``isolate_error``: the trusted side takes it for a machine that cannot isolate (SandboxBroken), so the
    job is retried and finally not graded at all (exit status 1; an earlier grade of this student stays)."""
    msg = forge({"op": "isolate_error", "why": "OSError: 这台机器不能隔离（伪造）"})
    return {"redteam_forged_isolate_error": (A1, append(solution(A1), msg)),
            "honest_next_to_isolate_error": (A1, solution(A1))}


ATTACKS["float_cell_index"] = forged_float_cell_index
ATTACKS["isolate_error"] = forged_isolate_error
