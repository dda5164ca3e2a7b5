"""Grading one question of a quiz attempt, and the item statistics of a quiz: pure functions, no tables.

A question is graded against the variant its template gives *now* for the stored seed and form
(:func:`autograder.quiz.make_variant`), so a fixed template grades again with the same numbers.  A typed number
is graded as it is.  A picked option is graded by what it said, not by its letter: the option of the corrected
variant with the same text as the one the student picked (a fix may reorder or change the options); when no
option says it any more, the answer is wrong and the verdict says why.  While the template is unchanged the
corrected variant is the shown one, and the option is the same.

The variant a student saw is stored as :meth:`~autograder.quiz.Variant.to_json` data (written by the server,
never sent by a client) and read back by :func:`variant_from_json` to show it again and to read the picked option.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

from ..quiz import (Answer, Diagnosis, Mistake, NumericKey, Option, QuizError, Variant, Verdict, grade, make_variant,
                    mistake)

__all__ = ["variant_from_json", "canonical", "Graded", "grade_item", "ItemStatistics", "item_statistics"]

#: What a verdict says when the corrected variant has no option with the text the student picked.
OPTION_GONE = "你选的“{text}”不在修正后的选项中，所以按答错计。修正后的正确答案是 {key}。"
#: The note of a verdict whose option has another letter in the corrected variant.
OPTION_MOVED = "题目修正后，你选的“{text}”是选项 {letter}（原来是 {was}）。"


def _mistake(mistake_id: str | None) -> Mistake | None:
    if mistake_id is None:
        return None
    try:
        return mistake(mistake_id)
    except QuizError:  # a mistake since removed from the catalogue: still shown by its id
        return Mistake(mistake_id, mistake_id, "", "", "")


def variant_from_json(data: dict[str, Any]) -> Variant:
    """The :class:`~autograder.quiz.Variant` of stored :meth:`~autograder.quiz.Variant.to_json` data."""
    key = data.get("key")
    value = data["value"]
    return Variant(
        template=data["template"], seed=int(data["seed"]), form=data["form"], stem=tuple(data["stem"]),
        solution=data["solution"], answer_text=data["answer_text"],
        value=tuple(value) if isinstance(value, list) else value, data=data["data"],
        options=tuple(Option(o["letter"], o["text"], bool(o["correct"]), o["explanation"], _mistake(o.get("mistake")))
                      for o in data.get("options", ())),
        key=NumericKey(key["value"], key["tolerance"], key["decimals"], key["text"]) if key else None,
        diagnoses=tuple(Diagnosis(d["value"], d["text"], _mistake(d["mistake"]), d["explanation"])
                        for d in data.get("diagnoses", ())),
        redraws=int(data.get("redraws", 0)))


def canonical(variant: Variant) -> dict[str, Any]:
    """A variant's JSON data as it reads back from storage (tuples become lists), for comparing with stored data."""
    return json.loads(json.dumps(variant.to_json()))


@dataclass(frozen=True)
class Graded:
    """One question graded: the variant graded against, the verdict (None: not answered), its points, and a note."""

    variant: Variant
    verdict: Verdict | None
    score: float
    note: str | None = None

    def verdict_json(self) -> str | None:
        if self.verdict is None:
            return None
        return json.dumps({**self.verdict.to_json(), "note": self.note}, ensure_ascii=False)


def grade_item(template: str, seed: int, form: str, points: float, shown: Variant, answer: Answer | None) -> Graded:
    """Grade ``answer`` (None: unanswered) to the question issued as ``shown`` (template, seed, form), against the
    variant the template gives now (see the module's docstring); ``points`` for a right answer."""
    current = make_variant(template, seed, form)
    if answer is None:
        return Graded(current, None, 0.0)
    note = None
    if form == "choice":
        picked = next((o for o in shown.options if o.letter == answer.choice), None)
        text = picked.text if picked is not None else answer.choice
        match = next((o for o in current.options if o.text == text), None)
        if match is None:
            verdict = Verdict(False, 0.0, answer, OPTION_GONE.format(text=text, key=current.answer_text),
                              current.answer_text)
            return Graded(current, verdict, 0.0)
        if match.letter != answer.choice:
            note = OPTION_MOVED.format(text=text, letter=match.letter, was=answer.choice)
        verdict = grade(current, Answer(choice=match.letter))
        verdict = Verdict(verdict.correct, verdict.score, answer, verdict.feedback, verdict.answer_text, verdict.mistake)
    else:
        verdict = grade(current, answer)
    return Graded(current, verdict, points * verdict.score, note)


# ------------------------------------------------------------------------------------------ item statistics
@dataclass(frozen=True)
class ItemStatistics:
    """One question of a quiz over the students' counting attempts.

    ``difficulty``: the share who answered it right; ``discrimination``: the point-biserial correlation of being
    right with the score on the rest of the quiz (None when either does not vary); ``upper_lower``: the share right
    among the top 27 % of students by total score minus that among the bottom 27 % (None under 4 students);
    ``mistakes``: the share of students whose answer named each mistake (id -> share), most frequent first;
    ``unanswered`` and ``other_wrong``: the shares who gave no answer, or a wrong one no known mistake gives.
    """

    position: int
    template: str
    students: int
    difficulty: float | None
    discrimination: float | None
    upper_lower: float | None
    mistakes: dict[str, float]
    unanswered: float
    other_wrong: float


UPPER_LOWER_SHARE = 0.27


def _correlation(xs: list[float], ys: list[float]) -> float | None:
    n = len(xs)
    if n < 2:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx <= 1e-12 or syy <= 1e-12:
        return None
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / math.sqrt(sxx * syy)


def item_statistics(positions: list[tuple[int, str]], students: list[dict[int, tuple[float, dict | None]]]
                    ) -> list[ItemStatistics]:
    """Statistics of every question (``positions``: (position, template)) over ``students``: for each student,
    position -> (points scored, verdict data or None when unanswered) of their counting attempt."""
    n = len(students)
    totals = [sum(score for score, _ in s.values()) for s in students]
    band = max(1, round(UPPER_LOWER_SHARE * n)) if n >= 4 else 0
    ranked = sorted(range(n), key=lambda i: totals[i])
    lower, upper = ranked[:band], ranked[n - band:]
    out = []
    for position, template in positions:
        answers = [s.get(position, (0.0, None)) for s in students]
        verdicts = [v for _, v in answers]
        right = [1.0 if v is not None and v["correct"] else 0.0 for v in verdicts]
        rest = [totals[i] - answers[i][0] for i in range(n)]
        wrong = [v for v in verdicts if v is not None and not v["correct"]]
        named = Counter(v["mistake"]["id"] for v in wrong if v.get("mistake"))
        out.append(ItemStatistics(
            position, template, n, sum(right) / n if n else None, _correlation(right, rest),
            (sum(right[i] for i in upper) - sum(right[i] for i in lower)) / band if band else None,
            {m: k / n for m, k in named.most_common()},
            sum(1 for v in verdicts if v is None) / n if n else 0.0,
            sum(1 for v in wrong if not v.get("mistake")) / n if n else 0.0))
    return out
