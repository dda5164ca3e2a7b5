"""book/_ext/theme_script.py removes the theme's eager measuring of scrollable boxes, and only that.

On the script of the installed pydata-sphinx-theme (the one the site ships): the loop that reads every
box's ``scrollWidth`` and writes its ``tabIndex`` is gone, the rest of the script is unchanged; a script
without that loop (another theme version) is refused.  The tab stops themselves are given by
``_static/a11y.js`` (audited by tests/book/test_accessibility.py: axe's scrollable-region-focusable).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pydata_sphinx_theme
import pytest

from .quizdata import ROOT

_spec = importlib.util.spec_from_file_location("course_theme_script", ROOT / "book" / "_ext" / "theme_script.py")
theme_script = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(theme_script)

THEME_JS = Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme" / "static" / "scripts" / "pydata-sphinx-theme.js"


def test_the_installed_theme_script_loses_its_measuring_loop_only():
    script = THEME_JS.read_text(encoding="utf-8")
    assert ".scrollWidth>" in script
    out = theme_script.without_eager_tab_stops(script)
    assert ".scrollWidth>" not in out
    removed = len(script) - len(out)
    assert 200 < removed < 300  # the loop only (244 characters in 0.17.1)
    start = script.index('document.querySelectorAll(["pre"')
    assert out[:start] == script[:start] and out[start] == "0" and out[start + 1:] == script[start + 1 + removed:]
    assert 'window.addEventListener("resize",' in out  # its listeners stay (and measure nothing)


def test_a_theme_without_that_loop_is_refused():
    with pytest.raises(theme_script.ThemeScriptChanged, match="found 0 times"):
        theme_script.without_eager_tab_stops("function I(){}")
