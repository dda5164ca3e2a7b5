"""The theme's script without its eager measuring of scrollable boxes (used by ``page_speed.py``).

pydata-sphinx-theme (0.17) gives every code block, cell output and table that scrolls sideways a tab stop:
on the window's ``load`` it reads the ``scrollWidth`` of every such box of the page and writes its
``tabIndex`` in the same loop (``addTabStopsToScrollableElements``).  Each write invalidates the style that
the next read needs, so a long page is styled and laid out again and again, the sections that are not on
screen included (``course.css`` lets the browser skip those): one long task of the phone's main thread
(Lighthouse's Total Blocking Time).  The course's ``_static/a11y.js`` gives the same boxes, and the
display formulas, their tab stops in small batches while the browser is idle.

:func:`without_eager_tab_stops` removes the measuring loop from the theme's (minified) script; the
listeners that call it stay and do nothing.  A theme whose script no longer has that loop (another
version) is an error: its behaviour must be looked at again.
"""

from __future__ import annotations

import re

#: The measuring loop of ``addTabStopsToScrollableElements`` in pydata-sphinx-theme 0.17's minified script.
EAGER_TAB_STOPS = re.compile(
    r'document\.querySelectorAll\(\["pre",[^\]]*"\.pst-scrollable-table-container"\]\.join\(", "\)\)'
    r'\.forEach\((?P<arg>\w+)=>\{(?P=arg)\.tabIndex=(?P=arg)\.scrollWidth>(?P=arg)\.clientWidth\|\|'
    r'(?P=arg)\.scrollHeight>(?P=arg)\.clientHeight\?0:-1\}\)')


class ThemeScriptChanged(ValueError):
    """The theme's script does not measure its scrollable boxes as expected (another theme version)."""


def without_eager_tab_stops(script: str) -> str:
    """``script`` (pydata-sphinx-theme.js) with its loop that measures every scrollable box replaced by ``0``.

    Parameters
    ----------
    script : str
        The theme's minified script.

    Returns
    -------
    str
        The same script; ``addTabStopsToScrollableElements`` measures nothing.

    Raises
    ------
    ThemeScriptChanged
        If the loop is not found exactly once.

    Examples
    --------
    >>> loop = ('document.querySelectorAll(["pre",".pst-scrollable-table-container"].join(", ")).forEach('
    ...         'e=>{e.tabIndex=e.scrollWidth>e.clientWidth||e.scrollHeight>e.clientHeight?0:-1})')
    >>> without_eager_tab_stops("function I(){const e=()=>{" + loop + "};e()}")
    'function I(){const e=()=>{0};e()}'
    """
    found = EAGER_TAB_STOPS.findall(script)
    if len(found) != 1:
        raise ThemeScriptChanged(f"pydata-sphinx-theme.js: the loop of addTabStopsToScrollableElements was found "
                                 f"{len(found)} times, expected once (a new theme version? see book/_ext/theme_script.py)")
    return EAGER_TAB_STOPS.sub("0", script)
