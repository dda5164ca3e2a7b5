"""The gradebook database's URL, one rule for every command and the service.

``--db`` (a SQLAlchemy URL) or the default ``sqlite:///FOLDER/gradebook.db``; a PostgreSQL URL without a driver
(``postgresql://``, or Heroku-style ``postgres://``) gets the installed one: SQLAlchemy 2.1 defaults to psycopg 3,
and we ship psycopg2, so psycopg2 is named unless psycopg 3 is installed.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path


def engine_url(url: str) -> str:
    """``url`` with the installed PostgreSQL driver (other URLs unchanged)."""
    if url.startswith(("postgresql://", "postgres://")):
        rest = url.split("://", 1)[1]
        if importlib.util.find_spec("psycopg") is None and importlib.util.find_spec("psycopg2") is not None:
            return "postgresql+psycopg2://" + rest
        return "postgresql://" + rest
    return url


def database_url(given: str | None, folder: Path) -> str:
    """The URL of ``--db`` (``given``), or the SQLite file ``gradebook.db`` in ``folder``; with its driver."""
    return engine_url(given or f"sqlite:///{Path(folder) / 'gradebook.db'}")
