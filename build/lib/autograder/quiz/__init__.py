"""Questions with a variant per student: templates whose numbers are drawn from a seed.

A template (:class:`Template`) draws its numbers from a seed (:func:`variant_seed` of course, student,
question and attempt), computes the key with :mod:`autograder.reference`, and builds its wrong options from
named mistakes (the grader's catalogue :mod:`autograder.check.misconceptions` and :mod:`.mistakes`), each
naming the book section that explains it.  A variant is answered by picking an option or by typing a
number within a stated tolerance; :func:`grade` turns an answer into a :class:`Verdict`.

The book shows a few dozen variants of each template under its question (``book/_ext/quiz_variants.py``);
a grading service calls the same four functions::

    seed = variant_seed(course, student, template_id, attempt)   # derived on the server, never sent by a client
    variant = make_variant(template_id, seed, form)              # the same variant every time
    answer = parse_answer(variant, text)                         # AnswerError: a clear message to show
    verdict = grade(variant, answer)                             # score, mistake, feedback
"""

from .mistakes import ALL_MISTAKES, QUIZ_MISTAKES, mistake
from .model import (
    FORMS,
    Answer,
    AnswerError,
    Diagnosis,
    IllPosed,
    Mistake,
    NumericKey,
    Option,
    QuizError,
    TemplateError,
    Variant,
    Verdict,
)
from .seeds import Draw, variant_seed
from .template import Candidate, Posed, Template, grade, parse_answer, parse_number
from .templates import TEMPLATES, get_template, make_variant

__all__ = ["TEMPLATES", "get_template", "variant_seed", "make_variant", "parse_answer", "parse_number", "grade",
           "Template", "Posed", "Candidate", "Draw", "Variant", "Option", "NumericKey", "Diagnosis", "Answer", "Verdict",
           "Mistake", "mistake", "QUIZ_MISTAKES", "ALL_MISTAKES", "FORMS", "QuizError", "TemplateError", "AnswerError",
           "IllPosed"]
