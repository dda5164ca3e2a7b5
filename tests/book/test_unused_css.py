"""book/_ext/unused_css.py drops the rules no element of the site can match, and only those."""

from __future__ import annotations

import importlib.util

from .quizdata import ROOT

_spec = importlib.util.spec_from_file_location("course_unused_css", ROOT / "book" / "_ext" / "unused_css.py")
unused_css = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(unused_css)

CSS = """/*! Bootstrap (MIT) */
.btn{color:red}
.carousel-item{display:none}
.navbar .dropdown-menu.show,.offcanvas-backdrop{display:block}
.btn:not(.disabled):hover{color:blue}
html[data-theme=dark] .bd-header{background:#000}
@media (min-width:960px){.carousel{width:1px}.bd-sidebar{width:2px}}
@media print{.toast{display:none}}
@keyframes spin{from{transform:rotate(0)}to{transform:rotate(1turn)}}
p{margin:0}
"""


def test_rules_of_classes_on_no_page_and_in_no_script_go():
    pages = ['<div class="btn navbar bd-header"><ul class="dropdown-menu bd-sidebar"></ul></div>']
    scripts = ['el.classList.add("show")']
    used = unused_css.used_classes(pages, scripts)
    out = unused_css.purge(CSS, used)
    assert out.startswith("/*! Bootstrap (MIT) */")  # the licence notice stays
    assert ".btn{color:red}" in out
    assert "carousel" not in out and "toast" not in out and "@media print" not in out
    # a selector list keeps only the selectors that can match; the class added by a script counts
    assert ".navbar .dropdown-menu.show{display:block}" in out and "offcanvas" not in out
    assert ".btn:not(.disabled):hover{color:blue}" in out  # a class inside :not() is not required
    assert "html[data-theme=dark] .bd-header{background:#000}" in out
    assert "@media (min-width:960px){.bd-sidebar{width:2px}}" in out
    assert "@keyframes spin" in out and "p{margin:0}" in out


def test_a_class_from_an_inline_script_is_kept():
    used = unused_css.used_classes(['<p class="x"></p><script>document.body.classList.add("toast")</script>'], [])
    assert "toast" in unused_css.purge(CSS, used)
