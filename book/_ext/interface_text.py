"""Sphinx extension: the words of the site's interface that neither Sphinx nor the themes give in mainland Chinese.

* the titles of exercises and solutions (sphinx-exercise writes ``练习 5 (标题)`` with half-width
  parentheses and a space): ``练习 5（标题）``, as Chinese text writes them;
* the download menu's "print this page" entry: sphinx-book-theme's zh_CN catalogue says 「列印成 PDF」
  (Taiwan's wording), beside the course's own 「全书 PDF」; it becomes 「打印本页」, so the two entries say
  what each one gives.

The rest of the interface words (the permalinks' "Link to this heading", the colour-mode switch's "System
Settings", ...) are translated by the catalogue ``locale/zh_CN/LC_MESSAGES/sphinx.po`` (``locale_dirs``).
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform

PRINT_BUTTON = "download-pdf-button"
PRINT_TEXT = "打印本页"
PRINT_TOOLTIP = "用浏览器把本页打印或存为 PDF（整本书请用“全书 PDF”）"


class FullWidthExerciseTitles(SphinxPostTransform):
    """``练习 5 (标题)`` -> ``练习 5（标题）`` in the titles of sphinx-exercise's exercises and solutions."""

    default_priority = 25  # after sphinx-exercise resolves the titles (20)

    def run(self, **kwargs: Any) -> None:
        for title in self.document.findall(nodes.title):
            box = title.parent
            if not isinstance(box, nodes.Element) or not {"exercise", "solution"} & set(box.get("classes", [])):
                continue
            texts = [t for t in title.findall(nodes.Text) if not isinstance(t.parent, nodes.math)]
            for text in texts:
                value = str(text)
                if value.rstrip().endswith(" (") or value == " (":
                    text.parent.replace(text, nodes.Text(value.rstrip()[:-1].rstrip() + "（"))
                elif value == ")":
                    text.parent.replace(text, nodes.Text("）"))


def _print_button(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    for group in context.get("header_buttons", []):
        for button in group.get("buttons", []) if isinstance(group, dict) else []:
            if button.get("label") == PRINT_BUTTON:
                button["text"] = PRINT_TEXT
                button["tooltip"] = PRINT_TOOLTIP


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the transform and the hook."""
    app.add_post_transform(FullWidthExerciseTitles)
    app.connect("html-page-context", _print_button, priority=502)  # after the theme built its menu
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
