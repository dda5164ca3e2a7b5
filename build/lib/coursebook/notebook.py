"""What a page's downloaded notebook uses in place of the book build's own tools.

In the book, a page's code hands numbers to its text with myst-nb's ``glue``; the downloaded notebook
(``book/_ext/notebook_download.py``) has those numbers already written into its text, so it does not
need myst-nb (a Sphinx extension, absent from Colab or a plain Jupyter).  Its code imports :func:`glue`
from here instead: the same call, which shows the value where the book's ``glue`` would show it.
"""

from __future__ import annotations

from typing import Any


def glue(name: str, variable: Any, display: bool = True) -> None:
    """Stand-in for ``myst_nb.glue`` in a downloaded notebook.

    Parameters
    ----------
    name : str
        The name the book's text uses for the value (kept for the reader; nothing reads it here).
    variable : object
        The value.
    display : bool, default True
        Show the value as the cell's output, as ``myst_nb.glue`` does.
    """
    if display:
        from IPython.display import display as show

        show(variable)
