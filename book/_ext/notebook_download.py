"""Sphinx extension: each notebook page's download, a notebook that runs anywhere as the page shows it.

``_sources/<page>.ipynb`` (offered in every notebook page's download menu) is written after the HTML build:

* the executed notebook: the page's cells with the outputs of the build's run (from the execution cache,
  ``execute.cache`` in ``_config.yml``; myst-nb's own copy in ``jupyter_execute/`` has none);
* its Markdown as Jupyter shows it (:mod:`download_markdown`): glued numbers, equation numbers, section
  titles, citations and figures written in, cross-references linked to the published book (the
  deployment setting's ``site_url``); Markdown that code cells display is converted the same way;
* its code as the page's, except that ``glue`` comes from :mod:`coursebook.notebook` instead of myst-nb
  (a Sphinx extension that a reader's Jupyter or Colab lacks); the outputs that only carried glued values
  to the text are dropped;
* first, a note and one code cell that installs the course's helper code (the figure style, and in the
  instructor edition the reference metrics ``autograder.reference``) from the published book: the wheel
  of :mod:`helper_wheel`, written to ``_downloads/course/``.  The pages compute with that code, so the
  download keeps it rather than rewriting the pages' computations; its requirements are public packages.
  The public edition's wheel holds no reference source (it is the assignments' answers): there the
  download's outputs are the book's, and the note says what re-running a cell that uses it needs.

The public build replaces every ``{instructor-only}`` block by a placeholder first
(:func:`instructor.scrub_text`).  A page whose Markdown has a role or directive without a rule fails the
build, naming it.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util import logging

from download_markdown import Attachments, ConversionError, to_notebook_markdown
from helper_wheel import build_wheel

logger = logging.getLogger(__name__)

WHEEL_DIR = "_downloads/course"
#: The page code's imports of the book build's ``glue``, and what the download imports instead.
GLUE_IMPORT = re.compile(r"^from myst_nb import glue\b", re.MULTILINE)
DOWNLOAD_GLUE_IMPORT = "from coursebook.notebook import glue"
EXPLICIT = re.compile(r"^(?P<title>.*?)\s*<(?P<target>[^<>]+)>$", re.DOTALL)
DOMAIN_OF = {"eq": ("math", "eq"), "ref": ("std", "ref"), "numref": ("std", "numref"), "doc": ("std", "doc"),
             "term": ("std", "term"), "cite:t": ("cite", "t"), "cite:p": ("cite", "p"), "cite": ("cite", "p")}


class SphinxPageLinks:
    """:class:`download_markdown.PageLinks` of one page, from the built environment."""

    def __init__(self, app: Sphinx, docname: str, site_url: str) -> None:
        self.app, self.docname = app, docname
        self.url = site_url + app.builder.get_target_uri(docname)
        self._glue: dict[str, dict[str, Any]] = {}
        self._doctree: nodes.document | None = None

    def _glue_of(self, docname: str) -> dict[str, Any]:
        if docname not in self._glue:
            path = Path(self.app.outdir).parent / "jupyter_execute" / f"{docname}.glue.json"
            self._glue[docname] = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        return self._glue[docname]

    def glued(self, key: str) -> dict[str, str]:
        doc, _, name = key.rpartition("::")
        docname = self.docname if not doc else str((Path(self.docname).parent / doc).with_suffix("").as_posix())
        output = self._glue_of(docname).get(name)
        if output is None:
            raise ConversionError(f"{self.docname}: no glued value {key!r}")
        return {mime.removeprefix("application/papermill.record/"): data for mime, data in output["data"].items()}

    def cross_reference(self, role: str, target: str) -> tuple[str, str | None]:
        domain_name, kind = DOMAIN_OF[role]
        explicit = EXPLICIT.match(target) if role not in ("eq", "cite:t", "cite:p", "cite") else None
        title, label = (explicit["title"], explicit["target"]) if explicit else (target, target)
        label = label.lower() if role in ("ref", "numref") else label
        content = nodes.inline(title, title)
        node = addnodes.pending_xref("", content, refdomain=domain_name, reftype=kind, reftarget=label,
                                     refexplicit=bool(explicit), refdoc=self.docname, refwarn=True)
        domain = self.app.env.get_domain(domain_name)
        resolved = domain.resolve_xref(self.app.env, self.docname, self.app.builder, kind, label, node, content)
        if resolved is None:
            raise ConversionError(f"{self.docname}: {{{role}}}`{target}` does not resolve")
        references = [resolved, *resolved.findall(nodes.reference)] if isinstance(resolved, nodes.reference) \
            else list(resolved.findall(nodes.reference))
        if role.startswith("cite") or not references:
            return resolved.astext(), None
        first = references[0]
        uri = first.get("refuri") or ("#" + first["refid"] if first.get("refid") else "")
        return resolved.astext(), urljoin(self.url, uri) if uri else None

    def directive_title(self, label: str) -> str:
        if self._doctree is None:
            self._doctree = self.app.env.get_and_resolve_doctree(self.docname, self.app.builder)
        for node in self._doctree.findall(nodes.Element):
            if label in node.get("ids", ()) and node.children and isinstance(node.children[0], nodes.title):
                title = "".join(f"${child.astext()}$" if isinstance(child, nodes.math) else child.astext()
                                for child in node.children[0].findall(lambda n: isinstance(n, (nodes.math, nodes.Text)))
                                if not isinstance(child.parent, nodes.math)).strip()
                return f"{self._number(node)}{title}"
        raise ConversionError(f"{self.docname}: no titled element {label!r}")

    def _number(self, node: nodes.Element) -> str:
        """``练习 5`` of a numbered exercise (the HTML writer adds it to the title), else nothing."""
        numbers = self.app.env.toc_fignumbers.get(self.docname, {})
        for kind, ids in numbers.items():
            for ident in node["ids"]:
                if ident in ids:
                    return self.app.config.numfig_format[kind] % ".".join(map(str, ids[ident])) + " "
        return ""

    def page_url(self) -> str:
        return self.url

    def substitution(self, name: str) -> str:
        values = self.app.config.myst_substitutions or {}
        if name not in values:
            raise ConversionError(f"{self.docname}: no substitution {{{{ {name} }}}}")
        return str(values[name])


def is_notebook(app: Sphinx, docname: str) -> bool:
    """Whether the page is a notebook (a MyST page with a kernel in its header)."""
    return "kernelspec" in app.env.metadata.get(docname, {})


def executed_notebook(app: Sphinx, docname: str) -> dict[str, Any] | None:
    """The page's notebook with the outputs of the build's run (``None``: the page is not a notebook)."""
    import nbformat
    from jupyter_cache import get_cache

    written = Path(app.outdir).parent / "jupyter_execute" / f"{docname}.ipynb"
    if not is_notebook(app, docname) or not written.is_file():
        return None
    notebook = nbformat.reads(written.read_text(encoding="utf-8"), as_version=4)
    if any(c.get("outputs") for c in notebook.cells if c.cell_type == "code"):
        return json.loads(nbformat.writes(notebook))  # executed in the build itself (execution_mode: force)
    cache_path = Path(app.config.nb_execution_cache_path or ".jupyter_cache")
    cache = get_cache(str(cache_path if cache_path.is_absolute() else Path(app.srcdir) / cache_path))
    try:
        _, merged = cache.merge_match_into_notebook(notebook)
    except KeyError:
        if any(c.cell_type == "code" for c in notebook.cells):
            raise ExtensionError(f"{docname}: its executed notebook is not in the execution cache") from None
        merged = notebook
    return json.loads(nbformat.writes(merged))


def _source(cell: dict[str, Any]) -> str:
    return cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])


def _is_glue_record(output: dict[str, Any]) -> bool:
    return "scrapbook" in output.get("metadata", {})


#: What the download's note says of the reference metrics: instructor edition, public edition.
REFERENCE_NOTE = (
    "页中的代码用到课程自己的辅助代码（参考指标 `autograder.reference`、作图风格 `coursebook`）："
    "先运行下面这个单元安装它（它只需要 NumPy、Matplotlib 等公开的包），再从上到下运行各单元即可。",
    "页中的代码用到课程自己的辅助代码：作图风格 `coursebook` 由下面这个单元安装（它只需要 NumPy、Matplotlib 等公开的包）；"
    "参考指标 `autograder.reference` 实现了编程作业要评分的函数，公开版不附带，"
    "用到它的单元请看保存的输出，或换成你在作业中自己写的实现再运行。",
)


def download_notebook(notebook: dict[str, Any], links: SphinxPageLinks, wheel_url: str, title: str,
                      scrub=None) -> dict[str, Any]:
    """The reader's notebook of an executed page notebook (see the module docstring); ``scrub`` is given
    for the public edition."""
    note = [
        {"cell_type": "markdown", "id": "course-download-note", "metadata": {}, "source":
         f"这是课程《评价二分类模型》中[“{title}”]({links.page_url()})一页的笔记本，附有构建课本时运行得到的输出。"
         + REFERENCE_NOTE[scrub is not None]},
        {"cell_type": "code", "id": "course-helper-install", "metadata": {}, "execution_count": None, "outputs": [],
         "source": f"%pip install -q {wheel_url}"},
    ]
    cells: list[dict[str, Any]] = []
    for cell in notebook["cells"]:
        cell = copy.deepcopy(cell)
        if cell["cell_type"] == "markdown":
            attachments = Attachments()
            text = scrub(_source(cell)) if scrub else _source(cell)
            cell["source"] = to_notebook_markdown(text, links, attachments).strip("\n")
            if attachments.files:
                cell["attachments"] = attachments.files
        elif cell["cell_type"] == "code":
            cell["source"] = GLUE_IMPORT.sub(DOWNLOAD_GLUE_IMPORT, _source(cell))
            outputs = []
            for output in cell.get("outputs", []):
                if _is_glue_record(output):
                    continue
                data = output.get("data", {})
                if "text/markdown" in data:
                    data["text/markdown"] = to_notebook_markdown(_source({"source": data["text/markdown"]}), links)
                outputs.append(output)
            cell["outputs"] = outputs
        cell.get("metadata", {}).pop("editable", None)
        cells.append(cell)
    # the note and the install cell right under the page's title (or first, on a page whose first cell is not it)
    at = 1 if cells and cells[0]["cell_type"] == "markdown" and cells[0]["source"].startswith("# ") else 0
    cells[at:at] = note
    metadata = {key: value for key, value in notebook.get("metadata", {}).items() if key in ("kernelspec", "language_info")}
    return {"cells": cells, "metadata": metadata, "nbformat": 4, "nbformat_minor": max(5, notebook.get("nbformat_minor", 5))}


def _write_downloads(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html" or app.builder.name == "singlehtml":
        return
    from instructor import is_instructor_build, scrub_text

    settings = app.course_site_settings  # type: ignore[attr-defined]  # set by publishing.py
    instructor = is_instructor_build(app)
    wheel = build_wheel(Path(app.outdir) / WHEEL_DIR, reference=instructor)
    wheel_url = f"{settings.site_url}{WHEEL_DIR}/{wheel.name}"
    scrub = None if instructor else scrub_text
    written = 0
    for docname in sorted(app.env.found_docs):
        notebook = executed_notebook(app, docname)
        if notebook is None:
            continue
        title = app.env.titles[docname].astext() if docname in app.env.titles else docname
        try:
            download = download_notebook(notebook, SphinxPageLinks(app, docname, settings.site_url), wheel_url, title, scrub)
        except ConversionError as exc:
            raise ExtensionError(f"{docname}: the downloadable notebook: {exc}") from None
        target = Path(app.outdir) / "_sources" / f"{docname}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(download, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        written += 1
    logger.info(f"notebook_download: {written} notebooks for download; helper {wheel.name}")


def _offer_notebook(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    """Let the theme's download menu offer ``_sources/<page>.ipynb``."""
    if doctree is None or app.builder.format != "html" or app.builder.name == "singlehtml":
        return
    if is_notebook(app, pagename):
        context["ipynb_source"] = f"{pagename}.ipynb"


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the hooks."""
    app.connect("html-page-context", _offer_notebook)
    app.connect("build-finished", _write_downloads, priority=450)  # before instructor.py scrubs _sources
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
