"""Sphinx extension: what the book's 编程作业 page takes from the grader and from the deployment setting.

* ``{assignment}`ps2_roc_auc``` -- the assignment's name, linked to its page on the submission service:
  the deployment setting's ``submit_url`` (an opaque base, :meth:`coursebook.deployment.SiteSettings.assignment_url`)
  followed by ``assignments/<name>``;
* ````{misconception-catalogue}```` -- the grader's catalogue of known mistakes
  (:mod:`autograder.check.misconceptions`) for assignments 1-4 as a list: per mistake its title, the
  functions it concerns, the book's section (a link) and the grader's hint.  The page is read again
  whenever the catalogue or the assignments' specifications change (their files are its dependencies),
  so the list never comes from an outdated build.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

ASSIGNMENTS_WITH_CATALOGUE = ("ps1_threshold_metrics", "ps2_roc_auc", "ps3_pr_ap", "ps4_calibration")


def _literal_markdown(text: str) -> str:
    """The catalogue's text as literal Markdown (its formulas use _ and *)."""
    return re.sub(r"([\\`*_{}\[\]<>|$#])", r"\\\1", text)


def assignment_role(name: str, rawtext: str, text: str, lineno: int, inliner: Any,
                    options: dict | None = None, content: list | None = None):
    """``{assignment}`name``` -> the name in code type, linked to the assignment's page on the submission service."""
    settings = inliner.document.settings.env.app.course_site_settings
    try:
        url = settings.assignment_url(text)
    except ValueError as exc:
        message = inliner.reporter.error(str(exc), line=lineno)
        return [inliner.problematic(rawtext, rawtext, message)], [message]
    link = nodes.reference(rawtext, "", nodes.literal(text, text), refuri=url, classes=["course-assignment"])
    return [link], []


class MisconceptionCatalogue(SphinxDirective):
    """The grader's known mistakes of assignments 1-4, grouped by assignment."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        from autograder.check import misconceptions, specs
        from autograder.check.misconceptions import for_assignment
        from autograder.check.specs import get_assignment

        for module in (misconceptions, specs):
            source = Path(module.__file__)
            for path in ([source] if source.name != "__init__.py" else sorted(source.parent.glob("*.py"))):
                self.env.note_dependency(str(path))
        lines: list[str] = []
        for name in ASSIGNMENTS_WITH_CATALOGUE:
            lines.append(f"**{get_assignment(name).title}**（`{name}`）\n")
            for m in for_assignment(name):
                functions = "、".join(f"`{f}`" for f in m.functions)
                lines.append(f"- **{_literal_markdown(m.title)}**（{functions}；课本：{{ref}}`{m.label}`）：{_literal_markdown(m.hint)}")
            lines.append("")
        return self.parse_text_to_nodes("\n".join(lines))


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the role and the directive."""
    app.add_role("assignment", assignment_role)
    app.add_directive("misconception-catalogue", MisconceptionCatalogue)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
