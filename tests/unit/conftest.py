"""Fixtures shared by the unit tests."""

from __future__ import annotations

import pytest

from autograder.service.database import Database


@pytest.fixture
def db(tmp_path):
    """A fresh service database (SQLite file in the test's folder) with its tables."""
    d = Database(f"sqlite:///{tmp_path / 'g.db'}")
    d.create()
    yield d
    d.dispose()
