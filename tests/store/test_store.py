"""The store retries a database that is briefly away, gives up with a clear error, and records exactly once."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.exc import OperationalError

from autograder.store.ledger import DatabaseUnavailable, Store


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    logged: list[str] = []
    s = Store(f"sqlite:///{tmp_path_factory.mktemp('store') / 'gradebook.db'}", wait=3.0, log=logged.append)
    s.logged = logged
    yield s
    s.close()


def _locked() -> OperationalError:
    return OperationalError("UPDATE grade", {}, Exception("database is locked"))


def test_transient_errors_are_retried(store):
    calls = []

    def flaky():
        calls.append(1)
        if len(calls) < 3:
            raise _locked()
        return "ok"

    store.logged.clear()
    assert store._retry(flaky, "测试") == "ok"
    assert len(calls) == 3
    assert store.logged[0].startswith("警告：成绩库暂时不可用") and store.logged[-1] == "成绩库已恢复，继续测试"


def test_a_database_that_stays_away_is_reported(store):
    def down():
        raise _locked()

    with pytest.raises(DatabaseUnavailable, match="3 秒内一直不可用（测试）"):
        store._retry(down, "测试")


def test_other_errors_are_not_retried(store):
    calls = []

    def broken():
        calls.append(1)
        raise KeyError("bug")

    with pytest.raises(KeyError):
        store._retry(broken, "测试")
    assert calls == [1]


def test_an_empty_ledger(store):
    assert store.fingerprints(["ps1_threshold_metrics"]) == {}
    assert store.results(["ps1_threshold_metrics"]) == []


def test_a_new_gradebook_is_stamped_with_the_revision_alembic_names(tmp_path):
    """nbgrader stamps every gradebook it creates with its schema's alembic head; the store reads that head in
    process (:func:`autograder.store.gradebook.alembic_head`) instead of running ``alembic heads``: the same
    revision as that command prints."""
    import sqlite3
    import subprocess
    import sys

    from nbgrader.dbutil import _temp_alembic_ini

    from autograder.store.gradebook import Gradebook

    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}"):
        pass
    with sqlite3.connect(tmp_path / "gradebook.db") as con:
        stamped = con.execute("SELECT version_num FROM alembic_version").fetchall()
    with _temp_alembic_ini("sqlite:////tmp/gradebook.db") as ini:
        heads = subprocess.run([str(Path(sys.executable).parent / "alembic"), "-c", ini, "heads"], capture_output=True,
                               text=True, check=True).stdout
    assert stamped == [(heads.split()[0],)], (stamped, heads)

