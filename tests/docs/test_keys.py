"""The reference's sources without a build: the parser's commands all reached, and ``course.yml``'s key table
(:data:`autograder.service.policy.KEYS`) is exactly what the parser accepts, with an example that uses every key."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs" / "_ext"))

from guide_reference import commands  # noqa: E402

from autograder.check import all_assignments  # noqa: E402
from autograder.service.policy import ASSIGNMENT, KEYS, QUIZ, PolicyError, children, load_policy, parse_policy  # noqa: E402

from .pages import DOCS, code_blocks  # noqa: E402

COMMANDS = [path for path, _, _ in commands()]


def test_every_command_of_the_program_has_a_section():
    """The walk over the parser reaches every sub-command (a group's sub-commands too)."""
    names = {" ".join(p) for p in COMMANDS}
    for expected in ("grade", "serve", "course add", "roster import", "roster instructor", "admin add",
                     "lti add-platform", "lti bind", "lti passback", "sandbox setup", "sandbox check"):
        assert expected in names


def test_the_key_table_is_the_parsers(tmp_path):
    """Every key the reference lists is accepted by the parser, and every key the parser accepts is listed."""
    listed = {k.path for k in KEYS}
    for parent in ("", "login_failures", f"assignments.{ASSIGNMENT}", f"assignments.{ASSIGNMENT}.late", "hub",
                   f"quizzes.{QUIZ}"):
        for name in children(parent):
            assert (f"{parent}.{name}" if parent else name) in listed
    # a file using every key parses
    example = next(b for b in code_blocks(DOCS / "instructors" / "reference" / "course-yml.md") if b.language == "yaml")
    (tmp_path / "course.yml").write_text(example.text, encoding="utf-8")
    policy = load_policy(tmp_path / "course.yml", list(all_assignments()))
    data = yaml.safe_load(example.text)
    used = set()

    def walk(node, prefix):
        for name, value in node.items():
            path = f"{prefix}.{name}" if prefix else str(name)
            if prefix == "assignments":  # an assignment's name: its keys are those of any assignment
                path = f"assignments.{ASSIGNMENT}"
            elif prefix == "quizzes":  # a quiz's name, likewise
                path = f"quizzes.{QUIZ}"
            else:
                used.add(path)
            if isinstance(value, dict) and any(k.path.startswith(path + ".") for k in KEYS):  # not a map of names (hub.staff)
                walk(value, path)

    walk(data, "")
    assert used == listed, f"the example leaves out {sorted(listed - used)}"
    assert policy.assignments["ps2_roc_auc"].late_penalty == 0.8
    assert policy.upload_limit_bytes == 20 << 20


def test_a_key_left_out_of_the_table_is_refused():
    """The parser takes its keys from the table: a key the table does not list is an unknown key."""
    import pytest

    with pytest.raises(PolicyError, match="未知的键 grace"):
        parse_policy({"assignments": {"ps1_threshold_metrics": {"grace": 3}}}, list(all_assignments()))
