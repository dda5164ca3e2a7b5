"""The feedback's diagnosis blocks, the grouped voided validation cases, property calls, and the course switch."""

from __future__ import annotations

import re
from datetime import datetime, timezone

import pytest


from ..check.diagnosis_students import WALKER  # noqa: E402
from ..check.inprocess_grading import grade_in_process, solution_namespace  # noqa: E402

from autograder.check.misconceptions import by_id  # noqa: E402
from autograder.check.specs import get_assignment  # noqa: E402
from autograder.service.policy import PolicyError, parse_policy  # noqa: E402
from autograder.store.report import feedback_html  # noqa: E402

@pytest.fixture(scope="module")
def walker():
    a = get_assignment("ps2_roc_auc")
    return grade_in_process(a, solution_namespace(a, WALKER))


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_diagnosis_block_comes_before_the_cases_with_explanation_hint_link_and_cases(walker):
    [d] = walker.diagnoses
    assert (d.function, d.misconception) == ("roc_auc", "roc_ties_split")
    html = feedback_html("作业 2", walker, "full", book_url="https://course.example/")
    entry = by_id("roc_ties_split")
    text = _text(html)
    assert text.index("错误诊断") < text.index(entry.explanation[:20]) < text.index("未通过的用例")
    assert entry.hint[:20] in text
    assert 'href="https://course.example/book/binary/roc.html#binary-roc-construction"' in html
    assert f"它解释了 {len(d.cases)} 个未通过的用例：{'、'.join(d.cases)}" in text
    assert "（见上面的诊断：并列得分被拆成多个点）" in text


def test_voided_validation_cases_are_one_line_that_says_what_to_fix_first(walker):
    voided = [c for c in walker.cases if c.voided]
    assert len(voided) == 10 and {c.function for c in voided} == {"roc_auc"}
    text = _text(feedback_html("作业 2", walker, "full"))
    assert text.count("函数拒绝了这个非法输入") == 0
    assert text.count("个检查非法输入的用例") == 1
    assert "roc_auc 的 10 个检查非法输入的用例（共 10 分" in text
    assert "先修正合法输入上的计算" in text and "只通过了" in text


def test_property_cases_show_the_calls_they_made(walker):
    negated = next(c for c in walker.cases if c.id == "property.negated_auc")
    monotone = next(c for c in walker.cases if c.id == "property.monotone_auc")
    assert negated.result.call.count("次调用") == 2 and monotone.result.call.count("次调用") == 3
    assert negated.result.call != monotone.result.call


def test_cases_policy_shows_the_diagnosis_but_no_input(walker):
    html = feedback_html("作业 2", walker, "cases")
    text = _text(html)
    assert "错误诊断" in text and by_id("roc_ties_split").explanation[:20] in text
    assert "第 1 次调用" not in text and "array(" not in text and "参考实现的结果" not in text


def test_score_policy_and_the_switch_hide_the_diagnosis(walker):
    assert "错误诊断" not in feedback_html("作业 2", walker, "score")
    off = _text(feedback_html("作业 2", walker, "cases", diagnoses=False))
    assert "错误诊断" not in off and "不是课程已知的常见错误" not in off and "未通过的用例" in off


def test_an_unknown_mistake_is_said_plainly():
    a = get_assignment("ps4_calibration")
    result = grade_in_process(a, solution_namespace(a, "def brier_score(y_true, y_prob):\n    return 0.3\n"))
    assert result.diagnoses == []
    assert "函数 brier_score 的错误不是课程已知的常见错误：评分程序不做猜测" in _text(feedback_html("作业 4", result))


def test_course_switch_diagnoses_before_deadline():
    known = ["ps2_roc_auc"]
    deadline = "2026-12-20T23:59:00+08:00"
    p = parse_policy({"assignments": {"ps2_roc_auc": {"deadline": deadline, "diagnoses_before_deadline": False}}}, known)
    a = p.assignments["ps2_roc_auc"]
    before, after = datetime(2026, 12, 1, tzinfo=timezone.utc), datetime(2026, 12, 25, tzinfo=timezone.utc)
    assert not a.shows_diagnoses(before) and a.shows_diagnoses(after)
    assert parse_policy({"assignments": {"ps2_roc_auc": {}}}, known).assignments["ps2_roc_auc"].shows_diagnoses(before)
    with pytest.raises(PolicyError, match="diagnoses_before_deadline"):
        parse_policy({"assignments": {"ps2_roc_auc": {"diagnoses_before_deadline": "no"}}}, known)


def _service_attempt_html(result, shown: str, named: bool) -> str:
    """The service's attempt fragment (the pages' own templates, the store's feedback body) for a stored result."""
    from datetime import timezone
    from types import SimpleNamespace

    from autograder.service.submissions import Attempt
    from autograder.service.web.render import environment
    from autograder.store.report import FEEDBACK_POLICIES

    a = Attempt("x1", 1, result.student, result.assignment, "graded", 0.0, 0.0, "roc_auc.ipynb", False, 1.0,
                result.score, result.score, result.max_score, None, None, True, result, shown, FEEDBACK_POLICIES[shown],
                show_diagnoses=named)
    return environment().get_template("_submission_live.html").render(
        a=a, account=SimpleNamespace(is_instructor=False), csrf="t", root="/", tz=timezone.utc)  # render()'s context


def test_service_pages_show_the_stored_diagnosis_and_honour_the_switch(walker):
    assert "并列得分被拆成多个点" in _text(_service_attempt_html(walker, "cases", True))
    off = _text(_service_attempt_html(walker, "cases", False))
    assert "错误诊断" not in off and "个检查非法输入的用例" in off
    assert "错误诊断" not in _text(_service_attempt_html(walker, "score", True))
