"""The typed data of a question with variants: a variant as a student sees it, an answer and its verdict.

Every type converts to and from JSON data by hand (``to_json`` / ``from_json``), so the shape a service
stores is stated here once; :meth:`Variant.from_json` is not needed by a service that keeps
``(template, seed, form)`` and regenerates the variant (:func:`autograder.quiz.make_variant`), which is
the safe way: the variant is then never taken from anything a client sent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = ["Mistake", "Option", "NumericKey", "Diagnosis", "Variant", "Answer", "Verdict", "FORMS",
           "QuizError", "TemplateError", "AnswerError", "IllPosed"]

#: The two ways a variant can be answered: pick one of the options, or type a number.
FORMS = ("choice", "numeric")


class QuizError(ValueError):
    """Base of the errors of the question templates; the message is Chinese and names the problem."""


class TemplateError(QuizError):
    """A template, a form or a seed that does not exist or cannot be used."""


class AnswerError(QuizError):
    """An answer that cannot be graded against this variant (the student may correct it and answer again)."""


class IllPosed(Exception):
    """Raised by a template while posing a draw that is not well posed (e.g. a zero denominator): draw again."""


@dataclass(frozen=True)
class Mistake:
    """A named misconception and the book section that explains the point.

    ``page`` is the book page's document name (``book/ap_auc/auc``), ``label`` a ``(label)=`` target on it and
    ``section`` that section's heading as the page writes it.
    """

    id: str
    title: str
    page: str
    label: str
    section: str

    def url(self) -> str:
        """The section's address relative to the book's root."""
        return f"{self.page}.html#{self.label}"

    def to_json(self) -> dict[str, str]:
        return {"id": self.id, "title": self.title, "page": self.page, "label": self.label, "section": self.section}


@dataclass(frozen=True)
class Option:
    """One option of a multiple-choice variant: its letter, its text and why it is right or wrong.

    A wrong option names its ``mistake``; the right one has none.
    """

    letter: str
    text: str
    correct: bool
    explanation: str
    mistake: Mistake | None = None

    def to_json(self) -> dict[str, Any]:
        return {"letter": self.letter, "text": self.text, "correct": self.correct, "explanation": self.explanation,
                "mistake": self.mistake.id if self.mistake else None}


@dataclass(frozen=True)
class NumericKey:
    """The answer of a numeric variant: a typed number is right when ``|x - value| <= tolerance``.

    ``decimals`` is how many decimals the student is asked to give and ``text`` the key as shown.
    """

    value: float
    tolerance: float
    decimals: int
    text: str

    def accepts(self, number: float) -> bool:
        return abs(number - self.value) <= self.tolerance + 1e-12

    def instruction(self) -> str:
        """What the student is told about the form and the tolerance of the answer (Chinese)."""
        if self.decimals == 0:
            return "请填写一个整数。" if self.tolerance == 0 else f"请填写一个整数；与正确答案相差不超过 {_plain(self.tolerance)} 即算对。"
        return f"请保留 {self.decimals} 位小数作答；与正确答案相差不超过 {_plain(self.tolerance)} 即算对。"

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "tolerance": self.tolerance, "decimals": self.decimals, "text": self.text,
                "instruction": self.instruction()}


@dataclass(frozen=True)
class Diagnosis:
    """A wrong number that a known mistake gives, for a numeric variant: a typed answer within the key's
    tolerance of ``value`` is named as that mistake."""

    value: float
    text: str
    mistake: Mistake
    explanation: str

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "text": self.text, "mistake": self.mistake.id, "explanation": self.explanation}


@dataclass(frozen=True)
class Variant:
    """One variant of a template, as a student sees it.

    ``stem`` is a tuple of paragraphs (plain text).  A ``choice`` variant has ``options`` (exactly one
    correct); a ``numeric`` one has a ``key`` and the ``diagnoses`` of known wrong numbers.  ``solution``
    explains the right answer with the variant's numbers; ``answer_text`` is the right answer as shown
    (``"C. 0.875"`` or ``"0.875"``) and ``value`` the key itself (a number, a tuple of numbers or a statement,
    unrounded); ``data`` holds the drawn numbers (JSON data, for independent checks and
    for an instructor); ``redraws`` counts the draws of this seed that were not well posed.
    """

    template: str
    seed: int
    form: str
    stem: tuple[str, ...]
    solution: str
    answer_text: str
    value: float | tuple[float, ...] | str
    data: dict[str, Any]
    options: tuple[Option, ...] = ()
    key: NumericKey | None = None
    diagnoses: tuple[Diagnosis, ...] = ()
    redraws: int = 0

    @property
    def mistakes(self) -> tuple[Mistake, ...]:
        """The mistakes this variant names, in the order of its options (or diagnoses)."""
        if self.form == "choice":
            return tuple(o.mistake for o in self.options if o.mistake is not None)
        return tuple(d.mistake for d in self.diagnoses)

    def to_json(self) -> dict[str, Any]:
        return {"template": self.template, "seed": self.seed, "form": self.form, "stem": list(self.stem),
                "solution": self.solution, "answer_text": self.answer_text,
                "value": list(self.value) if isinstance(self.value, tuple) else self.value, "data": self.data,
                "options": [o.to_json() for o in self.options],
                "key": self.key.to_json() if self.key else None,
                "diagnoses": [d.to_json() for d in self.diagnoses], "redraws": self.redraws}


@dataclass(frozen=True)
class Answer:
    """A student's answer: the letter of an option (``choice``) or a number (``number``), exactly one of them."""

    choice: str | None = None
    number: float | None = None

    def __post_init__(self) -> None:
        if (self.choice is None) == (self.number is None):
            raise AnswerError("答案必须是一个选项或一个数，二者只能有一个")
        if self.choice is not None and (not isinstance(self.choice, str) or not self.choice.strip()):
            raise AnswerError(f"选项必须是一个字母，收到的是 {self.choice!r}")
        if self.number is not None:
            if isinstance(self.number, bool) or not isinstance(self.number, (int, float)) or not math.isfinite(self.number):
                raise AnswerError(f"答案必须是一个有限的数，收到的是 {self.number!r}")

    @property
    def shown(self) -> str:
        """The answer as it is shown back to the student."""
        return self.choice if self.choice is not None else _plain(float(self.number))

    def to_json(self) -> dict[str, Any]:
        return {"choice": self.choice} if self.choice is not None else {"number": self.number}

    @classmethod
    def from_json(cls, data: Any) -> Answer:
        if not isinstance(data, dict) or set(data) not in ({"choice"}, {"number"}):
            raise AnswerError("答案的数据必须是 {\"choice\": 字母} 或 {\"number\": 数} 之一")
        return cls(**data)


@dataclass(frozen=True)
class Verdict:
    """The grade of one answer: right or wrong, the score (1 or 0), the mistake it names (if a known one), and the
    feedback to show (plain text), with the right answer as shown."""

    correct: bool
    score: float
    answer: Answer
    feedback: str
    answer_text: str
    mistake: Mistake | None = None

    def to_json(self) -> dict[str, Any]:
        return {"correct": self.correct, "score": self.score, "answer": self.answer.to_json(), "feedback": self.feedback,
                "answer_text": self.answer_text, "mistake": self.mistake.to_json() if self.mistake else None}


def _plain(x: float) -> str:
    """A number without a trailing ``.0`` or float noise (``0.001``, ``3``, ``0.875``)."""
    text = f"{x:.10f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text
