"""The feedback's diagnosis blocks, the wrong metrics, the grouped voided validation cases, property calls, the Chinese
names of the cases, and the course switch."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from markupsafe import escape

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
    assert f"它解释了 {len(d.cases)} 个未通过的用例" in text
    described = {c.id: c.description for c in walker.cases}
    assert all(f"{described[cid]} {cid}" in text for cid in d.cases)  # each named in Chinese, its id after it
    assert "见上面的诊断：并列得分被拆成多个点" in text


@pytest.fixture(scope="module")
def constant_auc():
    """roc_auc answers 0.5 whatever the input: it fails its basic cases, so its validation cases are voided."""
    a = get_assignment("ps2_roc_auc")
    return grade_in_process(a, solution_namespace(a, "def roc_auc(y_true, y_score):\n    _validated(y_true, y_score)\n"
                                                     "    return 0.5\n"))


def test_voided_validation_cases_are_one_line_that_says_what_to_fix_first(constant_auc):
    voided = [c for c in constant_auc.cases if c.voided]
    assert len(voided) == 10 and {c.function for c in voided} == {"roc_auc"}
    text = _text(feedback_html("作业 2", constant_auc, "full"))
    assert text.count("函数拒绝了这个非法输入") == 0
    assert text.count("个检查非法输入的用例") == 1
    assert "roc_auc 的 10 个检查非法输入的用例（共 10 分" in text
    assert "在基本用例（四个样本的梯形 AUC；随机数据梯形 AUC（种子 34" in text and "先修正合法输入上的计算" in text
    assert "roc_auc：只有负类（单一真实类别） invalid.roc_auc.all_negative" in text  # the voided cases by name


def test_a_one_token_slip_is_explained_by_its_wrong_metric_in_chinese():
    """The recall slip under the "cases" policy (before a deadline): the field that is wrong, named in Chinese, the
    points each case keeps, and every failed case headed by what it checks; no input or value is shown."""
    a = get_assignment("ps1_threshold_metrics")
    r = grade_in_process(a, solution_namespace(a, edit=('recall=_divide(tp, tp + fn, policy, "recall")',
                                                         'recall=_divide(tp, tp + fp, policy, "recall")')))
    html = feedback_html(a.title, r, "cases")
    text = _text(html)
    assert "与参考实现不同的只有这些字段： 召回率（recall） ：16 个用例中不对" in text
    assert "只扣这几个指标的那一份" in text and "请先检查召回率（recall）的计算" in text
    assert "不对的指标： 召回率（recall） （其余的都对，得 0.9 分）" in text
    for c in r.listed_failures():
        assert re.search(rf'<h3 class="fail">{re.escape(escape(c.description))}</h3>', html), c.id
        assert c.group and (f"{c.group}（隐藏）" in text or not c.hidden)
    assert "暂不计分" not in text
    assert "array(" not in text and "参考实现的结果" not in text and "recall 应为" not in text


def test_every_case_names_what_its_cell_checks_in_chinese(walker):
    assert {c.group for c in walker.cases} == {"可见测试", "边界情况", "性质：变换得分后结果应有的关系", "非法输入应抛出 ValueError",
                                              "随机数据上与参考实现比较"}
    text = _text(feedback_html("作业 2", walker, "cases"))
    assert "边界情况 a2_hidden_edge" in text  # the table of grade cells


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
    text = _text(feedback_html("作业 4", result))
    assert "函数 brier_score 的错误不是课程已知的常见错误，评分程序不做猜测：请对照下面列出的用例（每个都写明了它检查什么）自己排查" in text


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
        a=a, account=SimpleNamespace(is_instructor=False, is_staff=False), csrf="t", root="/", tz=timezone.utc)  # render()'s context


def test_service_pages_show_the_stored_diagnosis_and_honour_the_switch(walker, constant_auc):
    assert "并列得分被拆成多个点" in _text(_service_attempt_html(walker, "cases", True))
    off = _text(_service_attempt_html(walker, "cases", False))
    assert "错误诊断" not in off and "未通过" in off
    assert "错误诊断" not in _text(_service_attempt_html(walker, "score", True))
    voided = _text(_service_attempt_html(constant_auc, "cases", False))
    assert "个检查非法输入的用例" in voided and "在基本用例（四个样本的梯形 AUC" in voided
