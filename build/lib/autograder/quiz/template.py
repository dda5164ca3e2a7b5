"""A question template and what turns one draw of it into a variant, and an answer into a verdict.

A template's ``pose`` reads numbers from a :class:`~.seeds.Draw` and returns a :class:`Posed` question: the
stem, the key (computed with :mod:`autograder.reference`), and the wrong answers that named mistakes give
(:class:`Candidate`), in order of priority.  :func:`variant_of` keeps the draw only if it is well posed --
``pose`` did not raise :class:`~.model.IllPosed` (a zero denominator, a tie the question needs missing), every
value is finite, and the key and the chosen wrong answers are pairwise farther apart than the tolerance and
read differently -- and otherwise draws again from the next attempt of the same seed.
"""

from __future__ import annotations

import hashlib
import inspect
import math
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Union

from .mistakes import mistake
from .model import FORMS, Answer, AnswerError, Diagnosis, IllPosed, NumericKey, Option, TemplateError, Variant, Verdict
from .seeds import Draw, check_seed

__all__ = ["Template", "Posed", "Candidate", "variant_of", "grade", "parse_answer", "parse_number",
           "MAX_DRAWS", "DISTRACTORS", "LETTERS"]

#: A value a question asks for: a number, a tuple of numbers (e.g. a point), or a statement.
Value = Union[float, tuple[float, ...], str]

MAX_DRAWS = 200
#: How many wrong options a multiple-choice variant shows (and wrong numbers a numeric one diagnoses), unless the
#: template says otherwise (``Posed.distractors``).
DISTRACTORS = 3
LETTERS = "ABCD"


@dataclass(frozen=True)
class Candidate:
    """A wrong answer: the value that ``mistake`` (an id) gives and ``why`` (plain text, with the numbers).

    A ``required`` candidate is the point of the question: if it coincides with the key or an earlier
    candidate, the draw is not well posed.
    """

    value: Value
    mistake: str
    why: str
    required: bool = False


@dataclass(frozen=True)
class Posed:
    """One draw of a template as a question (before it is checked and lettered).

    ``show`` writes a value as the student reads it; ``tolerance`` is the numeric answer's and also how close
    two options may not be; ``decimals`` the numeric answer's precision; ``distractors`` how many wrong answers
    the variant shows (a question with fewer plausible answers, such as "which of two models", has fewer).
    """

    stem: tuple[str, ...]
    key: Value
    solution: str
    candidates: tuple[Candidate, ...]
    show: Callable[[Any], str]
    data: dict[str, Any]
    tolerance: float = 0.0
    decimals: int = 3
    distractors: int = DISTRACTORS


@dataclass(frozen=True)
class Template:
    """A question whose numbers are drawn from a seed.

    ``page``/``label`` name the book section the question practises; ``quiz`` the book's quiz (by number) whose
    numbers it varies, under which the book shows it (else a page places it with the ``quiz-variant``
    directive); ``forms`` the ways it can be answered, ``book_form`` the one the book uses.
    """

    id: str
    title: str
    page: str
    label: str
    pose: Callable[[Draw], Posed]
    forms: tuple[str, ...] = ("choice", "numeric")
    book_form: str = "choice"
    quiz: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", self.id):
            raise TemplateError(f"模板的 id 只能由小写字母、数字和连字符组成：{self.id!r}")
        if not self.forms or set(self.forms) - set(FORMS) or self.book_form not in self.forms:
            raise TemplateError(f"模板 {self.id}：forms 必须取自 {FORMS}，且包含 book_form")

    @property
    def fingerprint(self) -> str:
        """SHA-256 of the source of ``pose``: it changes when the question changes (for a service's regrade)."""
        return hashlib.sha256(inspect.getsource(self.pose).encode("utf-8")).hexdigest()

    def url(self) -> str:
        return f"book/{self.page}.html#{self.label}"


# ------------------------------------------------------------------------------------------ variants
def _finite(value: Value) -> bool:
    if isinstance(value, str):
        return True
    items = value if isinstance(value, tuple) else (value,)
    return all(isinstance(v, (int, float)) and math.isfinite(v) for v in items)


def _apart(a: Value, b: Value, show: Callable[[Any], str], tolerance: float) -> bool:
    """Whether two answers are told apart: they read differently and, as numbers, differ by more than twice the
    tolerance (so no typed number is accepted for both)."""
    if show(a) == show(b):
        return False
    if isinstance(a, str) or isinstance(b, str):
        return a != b
    xs, ys = (a if isinstance(a, tuple) else (a,)), (b if isinstance(b, tuple) else (b,))
    if len(xs) != len(ys):
        return True
    return max(abs(x - y) for x, y in zip(xs, ys)) > 2 * tolerance + 1e-9


def _choose(posed: Posed) -> list[Candidate] | None:
    """The wrong answers to show, or None if the draw is not well posed."""
    if not _finite(posed.key):
        return None
    chosen: list[Candidate] = []
    for c in posed.candidates:
        ok = _finite(c.value) and all(_apart(c.value, v, posed.show, posed.tolerance)
                                      for v in [posed.key, *(x.value for x in chosen)])
        if ok and len(chosen) < posed.distractors:
            chosen.append(c)
        elif c.required and not ok:
            return None
    return chosen if len(chosen) == posed.distractors else None


def _order(seed: int, key: Value, chosen: list[Candidate]) -> list[tuple[Value, Candidate | None]]:
    """The options in the order shown: drawn from the seed, so the key's letter tells nothing (sorted by value,
    the key of a question whose mistakes all overshoot would never be the largest option)."""
    items: list[tuple[Value, Candidate | None]] = [(key, None), *((c.value, c) for c in chosen)]
    return Draw(seed, -1).shuffled(items)


def variant_of(t: Template, seed: int, form: str | None = None) -> Variant:
    """The variant of template ``t`` for ``seed`` in ``form`` (default: the book's); see :func:`autograder.quiz.make_variant`.

    Raises
    ------
    TemplateError
        Unknown form, a bad seed, or no well-posed draw in :data:`MAX_DRAWS` attempts.
    """
    check_seed(seed)
    form = t.book_form if form is None else form
    if form not in t.forms:
        raise TemplateError(f"模板 {t.id} 没有 {form!r} 这种作答方式（可用：{'、'.join(t.forms)}）")
    for attempt in range(MAX_DRAWS):
        try:
            posed = t.pose(Draw(seed, attempt))
        except IllPosed:
            continue
        chosen = _choose(posed)
        if chosen is None:
            continue
        if form == "numeric" and not all(isinstance(v, (int, float)) for v in [posed.key, *(c.value for c in chosen)]):
            raise TemplateError(f"模板 {t.id} 的答案不是一个数，不能用数值作答")
        return _build(t, seed, form, posed, chosen, attempt)
    raise TemplateError(f"模板 {t.id} 在 {MAX_DRAWS} 次抽取中没有得到一道良定的题（seed={seed}）")


def _build(t: Template, seed: int, form: str, posed: Posed, chosen: list[Candidate], redraws: int) -> Variant:
    value = posed.key if isinstance(posed.key, str) else (
        tuple(float(x) for x in posed.key) if isinstance(posed.key, tuple) else float(posed.key))
    common = dict(template=t.id, seed=seed, form=form, stem=posed.stem, solution=posed.solution, data=posed.data,
                  value=value, redraws=redraws)
    if form == "numeric":
        key = NumericKey(float(posed.key), posed.tolerance, posed.decimals, posed.show(posed.key))
        diagnoses = tuple(Diagnosis(float(c.value), posed.show(c.value), mistake(c.mistake), c.why) for c in chosen)
        return Variant(**common, answer_text=key.text, key=key, diagnoses=diagnoses)
    options = []
    for letter, (value, c) in zip(LETTERS, _order(seed, posed.key, chosen)):
        if c is None:
            options.append(Option(letter, posed.show(value), True, posed.solution))
        else:
            options.append(Option(letter, posed.show(value), False, c.why, mistake(c.mistake)))
    right = next(o for o in options if o.correct)
    return Variant(**common, answer_text=f"{right.letter}. {right.text}", options=tuple(options))


# ------------------------------------------------------------------------------------------ answers
_FULL_WIDTH = str.maketrans("０１２３４５６７８９．－＋／，", "0123456789.-+/,")
_NUMBER = re.compile(r"^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:/(\d+(?:\.\d*)?|\.\d+))?$")
#: What a student reads about a typed answer: a wrong number that no known mistake gives, text that is not a
#: number, nothing at all.  The book's script shows the same words (the page carries them: quiz_variants.py).
UNKNOWN_WRONG = "这个数不是常见错误清单中任何一种错误给出的结果。请再检查一遍计算，也可以查看解答。"
NOT_A_NUMBER = "“{}”不是一个数：请写成小数（如 0.25）或分数（如 1/4）"
EMPTY_ANSWER = "请先填写答案：一个小数（如 0.25）或分数（如 1/4）"


def parse_number(text: str) -> float:
    """A typed number: a decimal (``0.875``, ``-0.1``, ``.5``) or a fraction (``7/8``); full-width digits and
    spaces are accepted.  The book's script (``book/_static/quiz_variants.js``) reads numbers by the same rule.

    Raises
    ------
    AnswerError
        If ``text`` is not such a number (or divides by zero).
    """
    if not isinstance(text, str):
        raise AnswerError(f"答案必须是文字，收到的是 {type(text).__name__}")
    cleaned = re.sub(r"\s+", "", unicodedata.normalize("NFKC", text).translate(_FULL_WIDTH))
    match = _NUMBER.match(cleaned)
    if not match:
        raise AnswerError(NOT_A_NUMBER.format(text.strip()[:40]) if text.strip() else EMPTY_ANSWER)
    sign, num, den = match.groups()
    value = float(num)
    if den is not None:
        if float(den) == 0:
            raise AnswerError("分数的分母不能为 0")
        value /= float(den)
    return -value if sign == "-" else value


def parse_answer(variant: Variant, text: str) -> Answer:
    """The answer a student typed or picked (a form field's text) for ``variant``.

    Raises
    ------
    AnswerError
        An option letter the variant does not have, or text that is not a number for a numeric variant.
    """
    if not isinstance(text, str):
        raise AnswerError(f"答案必须是文字，收到的是 {type(text).__name__}")
    if variant.form == "numeric":
        return Answer(number=parse_number(text))
    letter = unicodedata.normalize("NFKC", text).strip().upper()
    letters = [o.letter for o in variant.options]
    if letter not in letters:
        raise AnswerError(f"这道题的选项是 {'、'.join(letters)}，收到的是“{text.strip()[:10]}”")
    return Answer(choice=letter)


def grade(variant: Variant, answer: Answer) -> Verdict:
    """The verdict on ``answer`` for ``variant``: right (score 1) or wrong (0), naming the mistake when the wrong
    answer is one a known mistake gives.

    Raises
    ------
    AnswerError
        A number for a multiple-choice variant, a letter for a numeric one, or a letter it does not have.
    """
    if not isinstance(answer, Answer):
        raise AnswerError(f"answer 必须是 Answer，收到的是 {type(answer).__name__}")
    if variant.form == "choice":
        if answer.choice is None:
            raise AnswerError("这是一道选择题：请选择一个选项，而不是填写一个数")
        option = next((o for o in variant.options if o.letter == answer.choice), None)
        if option is None:
            raise AnswerError(f"这道题没有选项“{answer.choice}”（选项是 {'、'.join(o.letter for o in variant.options)}）")
        return Verdict(option.correct, 1.0 if option.correct else 0.0, answer, option.explanation,
                       variant.answer_text, option.mistake)
    if answer.number is None:
        raise AnswerError("这道题要填写一个数，而不是选择一个选项")
    assert variant.key is not None
    if variant.key.accepts(answer.number):
        return Verdict(True, 1.0, answer, variant.solution, variant.answer_text)
    near = [d for d in variant.diagnoses if abs(answer.number - d.value) <= variant.key.tolerance + 1e-12]
    if near:
        d = near[0]
        return Verdict(False, 0.0, answer, d.explanation, variant.answer_text, d.mistake)
    return Verdict(False, 0.0, answer, UNKNOWN_WRONG, variant.answer_text)
