"""Every question template of the course, one module per chapter of the book."""

from __future__ import annotations

from ..model import TemplateError, Variant
from ..template import Template, variant_of
from . import ap_auc, binary, calibration, case_study, methodology

__all__ = ["TEMPLATES", "get_template", "make_variant"]

#: In the order of the book's chapters.
TEMPLATES: tuple[Template, ...] = (*binary.TEMPLATES, *ap_auc.TEMPLATES, *calibration.TEMPLATES, *methodology.TEMPLATES,
                                   *case_study.TEMPLATES)
_BY_ID = {t.id: t for t in TEMPLATES}
if len(_BY_ID) != len(TEMPLATES):
    raise TemplateError("two templates share an id")


def get_template(template_id: str) -> Template:
    """The template called ``template_id``."""
    try:
        return _BY_ID[template_id]
    except (KeyError, TypeError):
        raise TemplateError(f"没有名为 {template_id!r} 的题目模板") from None


def make_variant(template: Template | str, seed: int, form: str | None = None) -> Variant:
    """The variant of ``template`` (a template or its id) for ``seed`` (:func:`~autograder.quiz.variant_seed`) in
    ``form`` (``"choice"`` or ``"numeric"``; default: the one the book uses).

    Deterministic: the same arguments give the same variant everywhere.  A draw that is not well posed is replaced
    by the next draw of the same seed (``Variant.redraws`` counts them).

    Raises
    ------
    TemplateError
        Unknown template or form, a bad seed, or no well-posed draw.
    """
    return variant_of(template if isinstance(template, Template) else get_template(template), seed, form)
