"""Generate the sample-submission corpus from the instructor sources and the generated student versions.

Usage: ``python tests/autograder/make_corpus.py [DEST]`` (default ``tests/autograder/corpus``).
Layout: ``DEST/<student_id>/<assignment>/<notebook>.ipynb`` plus ``DEST/expected.json``.
Each student id says what the notebook does.  Expectations are either an exact
score, a list of case ids that must fail (all others pass), or ``"oracle"``:
the failing cases are computed by calling the notebook's answer code directly in
the test process and comparing with the reference (see ``test_grade_e2e.py``).
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from autograder.check.specs import all_assignments  # noqa: E402

A = all_assignments()
A1, A2, A3, A4, A5 = "ps1_threshold_metrics", "ps2_roc_auc", "ps3_pr_ap", "ps4_calibration", "ps5_testing"
GRADEBOOK_PLACEHOLDER = "@GRADEBOOK@"


def solution(name: str):
    return nbformat.read(REPO / "solutions" / name / f"{A[name].notebook}.ipynb", as_version=4)


def student(name: str):
    return nbformat.read(REPO / "exercises" / name / f"{A[name].notebook}.ipynb", as_version=4)


def cell(nb, gid: str):
    return next(c for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == gid)


def answer_id(name: str) -> str:
    return {"ps1_threshold_metrics": "a1", "ps2_roc_auc": "a2", "ps3_pr_ap": "a3", "ps4_calibration": "a4", "ps5_testing": "a5"}[name] + "_solution"


def replace_in_answer(name: str, old: str, new: str, count: int = 1):
    nb = solution(name)
    c = cell(nb, answer_id(name))
    assert old in c.source, (name, old)
    c.source = c.source.replace(old, new, count)
    return nb


def append(nb, *sources: str):
    nb = copy.deepcopy(nb)
    for s in sources:
        # a cell id derived from the source keeps the committed corpus reproducible byte for byte
        nb.cells.append(new_code_cell(s, id=hashlib.sha256(s.encode()).hexdigest()[:8]))
    return nb


def build() -> dict[str, tuple[str, object, object]]:
    """student_id -> (assignment, notebook, expectation)."""
    c = {}
    full = lambda n: {"score": A[n].max_score()}  # noqa: E731
    zero = {"score": 0}
    for n in A:
        c[f"instructor_solution_{n}"] = (n, solution(n), full(n))
        c[f"untouched_student_version_{n}"] = (n, student(n), zero)
    # realistic wrong answers: expected failures from the oracle
    c["wrong_strict_threshold"] = (A1, replace_in_answer(A1, "scores >= tau", "scores > tau"), "oracle")
    c["wrong_recall_denominator"] = (A1, replace_in_answer(A1, 'recall=_divide(tp, tp + fn, policy, "recall")', 'recall=_divide(tp, tp + fp, policy, "recall")'), "oracle")
    c["wrong_epsilon_denominator"] = (A1, replace_in_answer(A1, "    if den != 0:\n        return num / den", "    if True:\n        return num / (den + 1e-12)"), "oracle")
    c["wrong_labels_coerced"] = (A1, replace_in_answer(A1, "    is_one = arr == 1\n    if not (is_one | (arr == 0)).all():", "    is_one = arr != 0\n    if False:"), "oracle")
    c["wrong_accepts_any_zero_division"] = (A1, replace_in_answer(A1, "    raise ValueError(f'zero_division 只能是", "    return float(zero_division)\n    raise ValueError(f'zero_division 只能是"), "oracle")
    c["wrong_roc_no_tie_groups"] = (A2, replace_in_answer(A2, "    last_of_group = np.r_[s_sorted[1:] != s_sorted[:-1], True]", "    last_of_group = np.ones(s_sorted.size, dtype=bool)"), "oracle")
    c["wrong_roc_missing_start_point"] = (A2, replace_in_answer(A2, "fpr=np.r_[0.0, fps / n_neg], tpr=np.r_[0.0, tps / n_pos], thresholds=np.r_[np.inf, thresholds]",
                                                                                   "fpr=fps / n_neg, tpr=tps / n_pos, thresholds=thresholds"), "oracle")
    c["wrong_pairwise_ties_count_zero"] = (A2, replace_in_answer(A2, "int(below.sum() + at_or_below.sum())", "2 * int(below.sum())"), "oracle")
    c["wrong_roc_missing_pairwise_function"] = (A2, replace_in_answer(A2, "def pairwise_auc(y_true, y_score):", "def pairwise_auc_unfinished(y_true, y_score):"), "oracle")
    c["wrong_ap_interpolated"] = (A3, replace_in_answer(A3, "    return float(np.dot(d_tp, tps / (tps + fps)) / int(pos.sum()))",
                                                        "    prec = np.maximum.accumulate((tps / (tps + fps))[::-1])[::-1]\n    return float(np.dot(d_tp, prec) / int(pos.sum()))"), "oracle")
    c["wrong_calibration_left_closed_bins"] = (A4, replace_in_answer(A4, 'side="left")  # 右闭区间', 'side="right")  # 右闭区间'), "oracle")
    c["wrong_brier_baseline_half"] = (A4, replace_in_answer(A4, "    return float(rate * (1.0 - rate))", "    return 0.25"), "oracle")
    c["wrong_syntax_error_in_answer"] = (A3, replace_in_answer(A3, "def pr_curve(y_true, y_score):", "def pr_curve(y_true, y_score)"), zero)
    c["wrong_tests_accept_everything"] = (A5, replace_in_answer(A5, "def test_binary_metrics(binary_metrics):", "def test_binary_metrics(binary_metrics):\n    return\n"),
                                          {"failed": [x.id for x in A[A5].cases if x.function == "test_binary_metrics" and "correct" not in x.id]})
    c["wrong_tests_reject_everything"] = (A5, append(solution(A5), "def test_roc(*impls):\n    raise AssertionError('一律拒绝')"),
                                          {"failed": [x.id for x in A[A5].cases if x.function == "test_roc"]})
    # forbidden shortcuts
    c["forbidden_reference_import"] = (A2, replace_in_answer(A2, "def pairwise_auc(y_true, y_score):\n",
                                                             "def pairwise_auc(y_true, y_score):\n    from autograder.reference import pairwise_auc as p\n    return p(y_true, y_score)\n"),
                                       {"failed": [x.id for x in A[A2].cases if x.function == "pairwise_auc"]})
    c["forbidden_sklearn_metrics"] = (A2, append(solution(A2), "from sklearn.metrics import roc_auc_score\n\n\ndef roc_auc(y_true, y_score):\n    return float(roc_auc_score(y_true, y_score))"),
                                      {"failed": [x.id for x in A[A2].cases if x.function == "roc_auc"]})
    # attacks: each on top of the untouched student version (nothing to gain) or the solution (nothing to lose)
    wrong_bm = "def binary_metrics(y_true, y_score, threshold, *, zero_division='nan'):\n    return BinaryMetrics(0, 0, 0, 0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)\n"
    wrong_auc = "def roc_auc(y_true, y_score):\n    return 0.123\n"
    c["attack_monkeypatch_reference"] = (A1, append(student(A1), "import sys, types\nfor m in ('autograder', 'autograder.reference'):\n    sys.modules[m] = types.ModuleType(m)\n"
                                                   "sys.modules['autograder.reference'].binary_metrics = lambda *a, **k: BinaryMetrics(0, 0, 0, 0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)\n" + wrong_bm), zero)
    c["attack_monkeypatch_numpy_testing"] = (A2, append(student(A2), "import numpy as np\nnp.testing.assert_allclose = lambda *a, **k: None\nnp.allclose = lambda *a, **k: True\n"
                                                       "np.isclose = lambda *a, **k: True\nnp.array_equal = lambda *a, **k: True\n" + wrong_auc), zero)
    c["attack_monkeypatch_builtins"] = (A1, append(student(A1), "import builtins\nbuiltins.isinstance = lambda *a: True\nbuiltins.abs = lambda x: 0\nbuiltins.float = lambda *a: 0.0\n" + wrong_bm), zero)
    c["attack_ipython_input_transformer"] = (A2, append(student(A2), "def _wrap(lines):\n    return ['try:\\n'] + ['    ' + l for l in lines] + ['except BaseException:\\n    pass\\n']\n"
                                                       "get_ipython().input_transformers_cleanup.append(_wrap)\n", wrong_auc), zero)
    c["attack_eq_always_true"] = (A2, append(student(A2), "class Anything(float):\n    def __eq__(self, other):\n        return True\n    __ne__ = lambda self, other: False\n    __hash__ = float.__hash__\n\n\n"
                                             "class AnyArray(list):\n    def __eq__(self, other):\n        return True\n\n\n"
                                             "def roc_auc(y_true, y_score):\n    return Anything(0.37)\n\n\ndef pairwise_auc(y_true, y_score):\n    return Anything(0.37)\n\n\n"
                                             "def roc_curve(y_true, y_score):\n    return RocCurve(AnyArray(), AnyArray(), AnyArray())\n"), zero)
    c["attack_read_hidden_tests_and_gradebook"] = (A1, append(student(A1), "import glob, os\nFOUND = []\nfor pattern in ('/work/*', '/work/main/*', '/work/main/autograder/check/specs/*.py', '/work/main/solutions/*/*', '/root/*', '/home/*/*', '/tmp/*', '../*'):\n"
                                                              "    try:\n        FOUND += glob.glob(pattern, recursive=True)[:50]\n    except Exception:\n        pass\n"
                                                              "def binary_metrics(y_true, y_score, threshold, *, zero_division='nan'):\n    raise RuntimeError('visible files: ' + ', '.join(FOUND[:20]))\n"), zero)
    c["attack_write_gradebook"] = (A1, append(student(A1), "import sqlite3\ntry:\n    con = sqlite3.connect(" + repr(GRADEBOOK_PLACEHOLDER) + ")\n"
                                              "    con.execute('UPDATE grade SET auto_score = 999')\n    con.commit()\nexcept Exception as exc:\n    ERR = exc\n"
                                              "with open('/tmp/scratch.txt', 'w') as fh:\n    fh.write('只有临时目录可写')\n"), zero)
    c["attack_exit_and_kill"] = (A1, append(replace_in_answer(A1, "    policy = _check_zero_division(zero_division)\n    pos = _check_labels(y_true, \"y_true\")",
                                                              "    policy = _check_zero_division(zero_division)\n    if threshold == 2.0:\n        import os, signal\n        os.kill(os.getpid(), signal.SIGKILL)\n"
                                                              "    if threshold == -1.0:\n        raise SystemExit(0)\n    pos = _check_labels(y_true, \"y_true\")"),
                                            "import sys\nsys.exit('退出')", "import os\nos._exit(3)"),
                                     {"failed": ["edge.predict_all_negative", "edge.predict_all_positive", "edge.int_scores_threshold"]})
    c["attack_infinite_loop"] = (A2, append(replace_in_answer(A2, "def roc_auc(y_true, y_score):\n", "def roc_auc(y_true, y_score):\n    if list(y_true) == [0, 1]:\n        while True:\n            pass\n"),
                                            "while True:\n    pass"), {"failed": ["edge.auc_two_samples"]})
    c["attack_memory_bomb"] = (A3, append(replace_in_answer(A3, "def average_precision(y_true, y_score):\n",
                                                            "def average_precision(y_true, y_score):\n    if list(y_true) == [0, 0, 1, 0]:\n        hog = [bytearray(1 << 20) for _ in range(100000)]\n"),
                                          "hog = bytearray(8 << 30)"), {"failed": ["edge.ap_single_positive"]})
    c["attack_output_bomb"] = (A4, append(replace_in_answer(A4, "def brier_baseline(y_true):\n", "def brier_baseline(y_true):\n    if len(y_true) == 10:\n        while True:\n            print('x' * 1000000)\n"),
                                          "import sys\nfor _ in range(3000):\n    print('y' * 1000000)\n    sys.stderr.write('z' * 1000000)"),
                                 # a basic case of brier_baseline: its two validation cases are voided with it
                                 {"failed": ["edge.baseline_imbalanced", "invalid.brier_baseline.empty", "invalid.brier_baseline.label_half"]})
    nb = solution(A1)
    nb.cells = [x for x in nb.cells if not x.get("metadata", {}).get("nbgrader", {}).get("grade")]
    c["attack_deleted_test_cells"] = (A1, nb, full(A1))
    nb = solution(A1)
    cell(nb, "a1_visible").source = "pass"
    cell(nb, "a1_setup").source = cell(nb, "a1_setup").source.replace("    tp: int\n    fp: int", "    tp: int\n    fpp: int", 1)
    cell(nb, "a1_hidden_edge").metadata["nbgrader"]["points"] = 1000
    c["attack_edited_test_cells"] = (A1, nb, full(A1))
    nb = solution(A4)
    for x in nb.cells:
        meta = x.get("metadata", {}).get("nbgrader")
        if meta:
            meta["locked"] = False
            meta["grade_id"] = meta["grade_id"] + "_renamed" if meta.get("grade") else meta["grade_id"]
    c["attack_changed_metadata"] = (A4, nb, full(A4))
    c["attack_network_access"] = (A1, replace_in_answer(A1, "    policy = _check_zero_division(zero_division)\n",
                                                        "    policy = _check_zero_division(zero_division)\n    import socket\n    try:\n        socket.create_connection(('1.1.1.1', 53), timeout=0.5).close()\n"
                                                        "        return None  # 联网成功则返回错误结果\n    except OSError:\n        pass\n"), full(A1))
    c["attack_syntax_error_cell"] = (A1, append(solution(A1), "def broken(:\n    pass"), full(A1))
    c["attack_fork_bomb"] = (A1, append(solution(A1), "import os\nkids = 0\ntry:\n    for _ in range(200):\n        if os.fork() == 0:\n            import time\n            time.sleep(60)\n            os._exit(0)\n        kids += 1\nexcept OSError:\n    pass"), full(A1))
    c["attack_not_json_notebook"] = (A1, None, zero)
    # honest habits that must keep full marks (the grading environment has no scikit-learn; a cell uses it to compare)
    c["honest_cross_check_import_first_line"] = (A2, replace_in_answer(A2, "### BEGIN SOLUTION\n", "### BEGIN SOLUTION\nfrom sklearn.metrics import roc_auc_score  # 只用来对照\n"), full(A2))
    c["honest_docstring_and_local_named_metrics"] = (A2, append(replace_in_answer(
        A2, "def roc_auc(y_true, y_score):\n", 'def roc_auc(y_true, y_score):\n    """结果与 sklearn.metrics.roc_auc_score 相同。"""\n    metrics = {"auc": None}\n'),
        "from sklearn import metrics\nprint(metrics.roc_auc_score([0, 1], [0.2, 0.8]))"), full(A2))
    c["honest_display_and_magics"] = (A1, replace_in_answer(A1, "### BEGIN SOLUTION\n", "### BEGIN SOLUTION\n%matplotlib inline\ndisplay('开始作答')\n!echo 你好\nWIDTH = (10\n% 3)\n"), full(A1))
    # stubs that only reject: validation cases count only for functions that also compute
    for n in (A1, A2, A3, A4):
        stubs = "".join(f"def {fn}(*args, **kwargs):\n    raise ValueError('未实现')\n\n\n" for fn in A[n].functions)
        c[f"stub_only_raises_value_error_{n}"] = (n, append(student(n), stubs), zero)
    # hostile output: what comes back from the sandbox is bounded before the grader materialises it
    cases_of = lambda n, fn: [x.id for x in A[n].cases if x.function == fn]  # noqa: E731
    escape_json = ("import json, wire\n"
                   "wire.dumps = lambda m: json.dumps(m, ensure_ascii=True, allow_nan=False, separators=(',', ':')).encode() + b'\\n'\n")
    c["hostile_lone_surrogate"] = (A1, append(solution(A1), escape_json + "_bm = binary_metrics\n\n\n"
                                              "def binary_metrics(*args, **kwargs):\n    _bm(*args, **kwargs)\n    raise RuntimeError('\\ud800 坏')\n"),
                                   {"failed": cases_of(A1, "binary_metrics")})
    c["hostile_tuple_subclass_huge_field_name"] = (A2, append(solution(A2), "_rc = roc_curve\n\n\n"
                                                              "class Huge(tuple):\n    _fields = ('x' * 5_000_000, 'y', 'z')\n\n\n"
                                                              "def roc_curve(y_true, y_score):\n    return Huge(_rc(y_true, y_score))\n"),
                                                   {"failed": cases_of(A2, "roc_curve")})
    c["hostile_int_beyond_float"] = (A2, append(solution(A2), "_auc = roc_auc\n\n\n"
                                                "def roc_auc(y_true, y_score):\n    _auc(y_true, y_score)\n    return 10 ** 400\n"),
                                     {"failed": cases_of(A2, "roc_auc")})
    nb = solution(A1)
    cell(nb, "a1_hidden_edge").metadata["nbgrader"]["points"] = int("9" * 400)
    c["hostile_points_metadata"] = (A1, nb, full(A1))
    c["hostile_deep_expression"] = (A1, append(solution(A1), "DEEP = " + "+".join(["1"] * 100_000)), full(A1))
    c["hostile_wire_dtype_bomb"] = (A1, append(solution(A1), "import wire\n"
                                              "wire.encode = lambda x, *a, **k: {'t': 'ndarray', 'dtype': '<U250000000', 'shape': [4], 'v': ['a'] * 4}\n"),
                                    zero)
    c["hostile_wire_colliding_keys"] = (A1, append(solution(A1), "import wire\nM = (1 << 61) - 1\n"
                                                  "BIG = {'t': 'dict', 'v': [[{'t': 'int', 'v': str(k * M)}, {'t': 'none'}] for k in range(40_000)]}\n"
                                                  "wire.encode = lambda x, *a, **k: BIG\n"), zero)
    c["hostile_ps5_huge_inputs"] = (A5, replace_in_answer(A5, "def test_roc(roc_curve, roc_auc, pairwise_auc):\n",
                                                          "def test_roc(roc_curve, roc_auc, pairwise_auc):\n    import numpy as np\n"
                                                          "    pairwise_auc(np.r_[np.ones(40_000), np.zeros(40_000)].astype(int), np.zeros(80_000))\n"),
                                    {"failed": cases_of(A5, "test_roc")})
    # assignment 5: a "test" that remembers earlier runs (files in every scratch directory, a daemon
    # holding an abstract socket) and rejects whatever runs after the first one. Every run is isolated,
    # so it never finds a mark and accepts everything, whatever the (random) order of the runs.
    c["attack_ps5_cross_run_memory"] = (A5, replace_in_answer(A5, "def test_binary_metrics(binary_metrics):\n", (
        "def test_binary_metrics(binary_metrics):\n"
        "    import os, socket\n"
        "    mark, found = 'cross-run-mark', False\n"
        "    dirs = ('/tmp', '/dev/shm', os.path.expanduser('~'), '.')\n"
        "    found = any(n.startswith(mark) for d in dirs for n in os.listdir(d))\n"
        "    for d in dirs:\n"
        "        try:\n"
        "            open(os.path.join(d, mark), 'w').close()\n"
        "        except OSError:\n"
        "            pass\n"
        "    probe = socket.socket(socket.AF_UNIX)\n"
        "    found = found or probe.connect_ex('\\0' + mark) == 0\n"
        "    if os.fork() == 0:\n"
        "        os.setsid()\n"
        "        if os.fork() == 0:\n"
        "            srv = socket.socket(socket.AF_UNIX)\n"
        "            srv.bind('\\0' + mark)\n"
        "            srv.listen()\n"
        "            __import__('time').sleep(300)\n"
        "        os._exit(0)\n"
        "    os.wait()\n"
        "    assert not found, '之前的运行留下了痕迹'\n"
        "    return\n")),
        {"failed": [x.id for x in A[A5].cases if x.function == "test_binary_metrics" and "correct" not in x.id]})
    return c


def write(dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    expected = {}
    for sid, (name, nb, exp) in build().items():
        d = dest / sid / name
        d.mkdir(parents=True, exist_ok=True)
        path = d / f"{A[name].notebook}.ipynb"
        if nb is None:
            path.write_text("{ 这不是 JSON", encoding="utf-8")
        else:
            nbformat.write(nb, path)
        expected[sid] = {"assignment": name, "expect": exp}
    (dest / "expected.json").write_text(json.dumps(expected, ensure_ascii=False, indent=1), encoding="utf-8")


if __name__ == "__main__":
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "corpus")
