"""The grading set-up shared by ``autograder grade`` and ``autograder serve``: the same options with the same
meaning, one database URL rule, one folder lock, generation only of what changed."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

from autograder import cli
from autograder.commands import grading
from autograder.store.urls import database_url, engine_url

GRADING_OPTIONS = ["--db", "--no-sandbox", "--jobs", "--scheduler", "--scratch", "--db-wait", "--solutions",
                   "--call-timeout", "--memory-mib", "--submission-timeout"]


def _options(name: str) -> dict[str, argparse.Action]:
    """The options of ``autograder NAME``, as the real command line defines them."""
    sub = next(a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return {o: a for a in sub.choices[name]._actions for o in a.option_strings}


def test_grade_and_serve_take_the_same_grading_options_with_the_same_meaning():
    grade, serve = _options("grade"), _options("serve")
    for option in GRADING_OPTIONS:
        assert option in grade and option in serve, option
        assert grade[option].default == serve[option].default, option
        if option != "--db":  # the default gradebook's folder differs (OUT, DATA)
            assert grade[option].help == serve[option].help, option
    assert "CPU 时间" in grade["--call-timeout"].help and "墙钟时限（秒）" not in grade["--call-timeout"].help
    assert "OUT/gradebook.db" in grade["--db"].help and "DATA/gradebook.db" in serve["--db"].help


def test_one_database_url_rule():
    assert database_url(None, Path("/srv/out")) == "sqlite:////srv/out/gradebook.db"
    assert database_url("sqlite:///x.db", Path("/srv/out")) == "sqlite:///x.db"
    # only psycopg2 is installed (requirements.txt): a bare PostgreSQL URL gets it, also in the Heroku spelling
    assert engine_url("postgresql://u@h/db") == "postgresql+psycopg2://u@h/db"
    assert engine_url("postgres://u@h/db") == "postgresql+psycopg2://u@h/db"
    assert engine_url("postgresql+psycopg2://u@h/db") == "postgresql+psycopg2://u@h/db"


def test_a_folder_is_locked_once_and_the_refusal_names_the_holder(tmp_path):
    fd = grading.lock_folder(tmp_path, ".lock", lambda holder: f"busy {holder}", RuntimeError)
    try:
        with pytest.raises(RuntimeError, match=f"busy {os.getpid()}"):
            grading.lock_folder(tmp_path, ".lock", lambda holder: f"busy {holder}", RuntimeError)
    finally:
        os.close(fd)
    os.close(grading.lock_folder(tmp_path, ".lock", lambda holder: f"busy {holder}", RuntimeError))


class MemoryStamps:
    def __init__(self) -> None:
        self.data: dict[str, str] = {}

    def get(self, name):
        return self.data.get(name)

    def put(self, done):
        self.data.update(done)


def test_generation_runs_only_for_changed_sources(tmp_path, monkeypatch):
    from autograder.store import gradebook

    calls = []
    monkeypatch.setattr(gradebook, "generate", lambda solutions, names, course, url: calls.append(list(names)))
    src = {n: tmp_path / f"{n}.ipynb" for n in ("a", "b")}
    for p in src.values():
        p.write_text("{}")
    setup = grading.Grading(tmp_path, src, False, None, None, 1, None, 1.0)
    stamps = MemoryStamps()
    assert grading.generate_changed(setup, ["a", "b"], tmp_path, "sqlite:///g.db", stamps, RuntimeError, print) == ["a", "b"]
    assert grading.generate_changed(setup, ["a", "b"], tmp_path, "sqlite:///g.db", stamps, RuntimeError, print) == []
    src["b"].write_text('{"changed": 1}')
    assert grading.generate_changed(setup, ["a", "b"], tmp_path, "sqlite:///g.db", stamps, RuntimeError, print) == ["b"]
    assert grading.generate_changed(setup, ["a"], tmp_path, "sqlite:///other.db", stamps, RuntimeError, print) == ["a"]
    assert calls == [["a", "b"], ["b"], ["a"]]

    def broken(*a):
        raise ValueError("nbgrader says no")

    monkeypatch.setattr(gradebook, "generate", broken)
    src["a"].write_text('{"again": 1}')
    with pytest.raises(RuntimeError, match="nbgrader generate_assignment 失败（ValueError: nbgrader says no）"):
        grading.generate_changed(setup, ["a"], tmp_path, "sqlite:///g.db", stamps, RuntimeError, print)
    assert calls == [["a", "b"], ["b"], ["a"]]  # nothing recorded: the next run generates it again
