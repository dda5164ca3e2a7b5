"""Sphinx extension: the course glossary (术语表), rendered from ``book/glossary/terms.yml``.

Usage in a MyST page::

    ```{course-glossary} basics
    ```

renders every term of the group ``basics`` as a definition list: the term and its English name, the
one-sentence definition, a link to the section that introduces it, and the other words for the same
concept that the book does not use.  Each English name is also an entry of the book's index
(``genindex.html``, "索引"), ``recall（召回率）`` under R (``TP（真正例）``: names and words of a term listed in
the same order are paired), linking to the term's entry here: a reader who
knows a concept from English texts finds the book's word for it and its definition (the index would
otherwise be empty: the book has no other index entries).  Definitions are MyST Markdown (``$...$`` is math).  The data file
is also read by ``tests/book/test_vocabulary.py``, which keeps the variants out of the book.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from docutils import nodes
from docutils.statemachine import StringList
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

TERMS_DATA = Path(__file__).resolve().parent.parent / "glossary" / "terms.yml"
_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


class GlossaryDataError(ValueError):
    """The glossary data file is malformed."""


def variant_text(variant: str | dict[str, Any]) -> str:
    """How a variant is shown on the glossary page."""
    return variant if isinstance(variant, str) else str(variant["text"])


def variant_rule(variant: str | dict[str, Any]) -> tuple[re.Pattern[str], list[re.Pattern[str]]]:
    """The regex that finds a variant in prose, and the regexes whose matches excuse a hit."""
    if isinstance(variant, str):
        return re.compile(re.escape(variant)), []
    return re.compile(variant["pattern"]), [re.compile(e) for e in variant.get("except", [])]


def load_terms(path: Path = TERMS_DATA) -> dict[str, Any]:
    """Load and validate the glossary data.

    Returns
    -------
    dict
        ``{"groups": [...], "terms": [...], "overview_pages": [...]}`` as written in the file.

    Raises
    ------
    GlossaryDataError
        On a missing field, an unknown group, a duplicated id or term, or an invalid pattern.
    """
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    groups = {g["id"] for g in raw.get("groups", [])}
    seen_ids: set[str] = set()
    seen_terms: set[str] = set()
    for entry in raw.get("terms", []):
        for key in ("id", "term", "english", "group", "definition", "introduced"):
            if not str(entry.get(key, "")).strip():
                raise GlossaryDataError(f"term {entry.get('id', entry)!r}: missing {key}")
        if not _ID.match(entry["id"]) or entry["id"] in seen_ids:
            raise GlossaryDataError(f"term id {entry['id']!r} is not a lowercase ASCII key or is duplicated")
        if entry["term"] in seen_terms:
            raise GlossaryDataError(f"term {entry['term']!r} is listed twice")
        if entry["group"] not in groups:
            raise GlossaryDataError(f"term {entry['id']}: unknown group {entry['group']!r}")
        for variant in entry.get("variants", []):
            try:
                variant_rule(variant)
            except (KeyError, re.error) as exc:
                raise GlossaryDataError(f"term {entry['id']}: bad variant {variant!r}: {exc}") from exc
        seen_ids.add(entry["id"])
        seen_terms.add(entry["term"])
    return {"groups": raw.get("groups", []), "terms": raw.get("terms", []), "overview_pages": raw.get("overview_pages", [])}


_MATH_ASIDE = re.compile(r"\s*\([^()]*\$[^()]*\)")  # "(\$\tau\$)": a symbol, not a name to look up


def index_names(english: str) -> list[str]:
    """The English names of a term as index entries: one per name (``;`` or ``,`` between names), without a
    symbol in parentheses, ``$k$`` as ``k``.

    >>> index_names("recall; true positive rate (TPR)")
    ['recall', 'true positive rate (TPR)']
    >>> index_names("classification threshold ($\\tau$)")
    ['classification threshold']
    >>> index_names("$k$-fold cross-validation")
    ['k-fold cross-validation']
    """
    plain = _MATH_ASIDE.sub("", english).replace("$", "")
    return [name.strip() for name in re.split(r"[;,]", plain) if name.strip()]


def _markdown(entry: dict[str, Any]) -> list[str]:
    """One definition-list item in MyST Markdown."""
    lines = [f"{entry['term']}（{entry['english']}）", f": {entry['definition'].strip()}", ""]
    lines.append(f"  首次定义：{{ref}}`{entry['introduced']}`。")
    variants = [variant_text(v) for v in entry.get("variants", [])]
    if variants:
        lines[-1] += "本书不用的其他说法：" + "、".join(variants) + "。"
    return lines + [""]


class CourseGlossaryDirective(SphinxDirective):
    """``{course-glossary} GROUP`` -- the terms of one group of the glossary data."""

    required_arguments = 1
    has_content = False

    def run(self) -> list[nodes.Node]:
        self.env.note_dependency(str(TERMS_DATA))
        self.env.note_dependency(str(Path(__file__).resolve()))
        try:
            data = load_terms()
        except (OSError, GlossaryDataError, yaml.YAMLError) as exc:
            raise self.error(f"course-glossary: cannot load {TERMS_DATA}: {exc}") from exc
        group = self.arguments[0]
        entries = [t for t in data["terms"] if t["group"] == group]
        if not entries:
            raise self.error(f"course-glossary: no term in group {group!r}")
        box = nodes.container(classes=["course-glossary"])
        text = [line for entry in entries for line in _markdown(entry)]
        self.state.nested_parse(StringList(text, source=str(TERMS_DATA)), 0, box)
        items = list(box.findall(nodes.definition_list_item))
        if len(items) != len(entries):
            raise self.error(f"course-glossary: rendered {len(items)} items for {len(entries)} terms")
        index = addnodes.index(entries=[])
        for item, entry in zip(items, entries):
            term = next(iter(item.findall(nodes.term)))
            term["ids"].append(f"term-{entry['id']}")      # the anchor of the entry (the <dt> carries it)
            names, words = index_names(entry["english"]), entry["term"].replace("$", "").split("、")
            pairs = zip(names, words) if len(words) == len(names) else ((name, "、".join(words)) for name in names)
            index["entries"] += [("single", f"{name}（{word}）", f"term-{entry['id']}", "", None) for name, word in pairs]
        return [index, box]


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the directive."""
    app.add_directive("course-glossary", CourseGlossaryDirective)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
