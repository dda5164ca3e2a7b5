"""Honest habits never cost points, and every lost point is explained once, in plain words.

Runs the real grading of one notebook without the sandbox (fast); tests/autograder grades the same
kinds of notebooks in the sandbox end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autograder.check import get_assignment, grade_notebook

REPO = Path(__file__).resolve().parents[2]
A2 = get_assignment("ps2_roc_auc")
SOURCE = REPO / "solutions" / A2.name / f"{A2.notebook}.ipynb"


def _nb() -> dict:
    return json.loads(SOURCE.read_text(encoding="utf-8"))


def _answer(nb: dict) -> dict:
    return next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "a2_solution")


def _grade(tmp_path, nb: dict | None, raw: str | None = None):
    path = tmp_path / f"{A2.notebook}.ipynb"
    path.write_text(raw if raw is not None else json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    return grade_notebook(A2, SOURCE, path, "s", sandbox=False)


def _code(text: str) -> dict:
    return {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": text}


def test_mentioning_scikit_learn_in_text_costs_nothing(tmp_path):
    nb = _nb()
    answer = _answer(nb)
    answer["source"] = "".join(answer["source"]).replace(
        "def roc_auc(y_true, y_score):\n",
        'def roc_auc(y_true, y_score):\n    """与 sklearn.metrics.roc_auc_score 相同的结果。"""\n    assert True, "对照 sklearn"\n', 1)
    r = _grade(tmp_path, nb)
    assert r.score == r.max_score and r.notes == []


def test_a_local_variable_named_like_an_imported_module_costs_nothing(tmp_path):
    nb = _nb()
    answer = _answer(nb)
    answer["source"] = "".join(answer["source"]).replace(
        "def roc_auc(y_true, y_score):\n", "def roc_auc(y_true, y_score):\n    metrics = {'name': 'auc'}\n", 1)
    nb["cells"].append(_code("from sklearn import metrics\nprint(metrics.roc_auc_score([0, 1], [0.1, 0.9]))\n"))
    r = _grade(tmp_path, nb)
    assert r.score == r.max_score
    assert len(r.notes) == 1 and "导入了 sklearn" in r.notes[0] and f"第 {len(nb['cells'])} 个单元第 1 行" in r.notes[0]


def test_a_cross_check_import_on_the_first_line_of_the_answer_keeps_the_answer(tmp_path):
    nb = _nb()
    answer = _answer(nb)
    answer["source"] = "from sklearn.metrics import roc_auc_score  # 只用来对照\n" + "".join(answer["source"])
    r = _grade(tmp_path, nb)
    assert r.score == r.max_score
    position = nb["cells"].index(answer) + 1
    assert r.notes[0].startswith(f"第 {position} 个单元第 1 行导入了 sklearn.metrics")


def test_a_function_that_uses_an_unavailable_module_loses_its_cases_with_the_reason(tmp_path):
    nb = _nb()
    nb["cells"].append(_code("from sklearn.metrics import roc_auc_score\n\n\ndef roc_auc(y_true, y_score):\n"
                             "    return float(roc_auc_score(y_true, y_score))\n"))
    r = _grade(tmp_path, nb)
    failed = {c.id for c in r.failed_cases()}
    assert failed == {c.id for c in A2.cases if c.function == "roc_auc"}
    reasons = {c.result.reason for c in r.failed_cases() if c.result.reason.startswith("函数用到了 roc_auc_score")}
    assert reasons  # the valid-input cases say why
    assert len([n for n in r.notes if "导入了 sklearn.metrics" in n]) == 1


def test_an_answer_cell_left_as_markdown_is_named_as_such(tmp_path):
    nb = _nb()
    answer = _answer(nb)
    answer["cell_type"] = "markdown"
    answer.pop("outputs", None)
    answer.pop("execution_count", None)
    r = _grade(tmp_path, nb)
    assert r.score == 0
    assert any("被改成了 markdown 单元" in n for n in r.notes)
    assert not any("被删除" in n for n in r.notes)


def test_answers_pasted_into_a_fresh_notebook_get_one_note(tmp_path):
    nb = _nb()
    fresh = {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
             "cells": [_code("".join(_answer(nb)["source"]))]}
    r = _grade(tmp_path, fresh)
    assert r.score == r.max_score
    assert len(r.notes) == 1 and "没有作业的 nbgrader 元数据" in r.notes[0]


@pytest.mark.parametrize("raw, phrase", [("", "空的"), ("{ 不是 JSON", "不是可以读取的 Jupyter 笔记本")])
def test_an_unreadable_file_is_explained_once_at_the_top(tmp_path, raw, phrase):
    r = _grade(tmp_path, None, raw)
    assert r.score == 0 and phrase in r.notes[0]
    assert {c.result.reason for c in r.cases} == {"未能评分（原因见页首的说明）"}


def test_cells_are_named_as_jupyterlab_shows_them(tmp_path):
    nb = _nb()
    nb["cells"].append(_code("raise RuntimeError('第几个？')\n"))
    r = _grade(tmp_path, nb)
    assert r.cell_errors[0].cell + 1 == len(nb["cells"])
    assert f"<第 {len(nb['cells'])} 个单元>" in r.cell_errors[0].traceback
