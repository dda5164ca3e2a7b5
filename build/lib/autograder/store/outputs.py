"""The output folder of a grading run: the only writer of its files, each written atomically.

``results/<student>/<assignment>.json`` (the result data), ``feedback/<student>/<assignment>/<notebook>.html``,
``summary.json``, ``summary.html`` and ``run.json``.  ``results/`` and ``feedback/`` are derived from the
gradebook's ledger and can be rebuilt from it at any time.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..model import SubmissionResult
from . import report


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a reader sees the old file or the new one, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


class OutputFolder:
    """Files of the output folder ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def result_path(self, student: str, assignment: str) -> Path:
        return self.root / "results" / student / f"{assignment}.json"

    def has_current(self, result: SubmissionResult) -> bool:
        """Is the result file of ``result``'s submission there and of the same fingerprint?"""
        try:
            data = json.loads(self.result_path(result.student, result.assignment).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        return isinstance(data, dict) and data.get("fingerprint") == result.fingerprint

    def write_result(self, result: SubmissionResult, *, title: str, notebook: str, policy: str = "full") -> None:
        """The result JSON and the student's feedback page."""
        write_atomic(self.result_path(result.student, result.assignment),
                     json.dumps(result.to_json(), ensure_ascii=False, indent=1))
        self.write_feedback(result, title=title, notebook=notebook, policy=policy)

    def write_feedback(self, result: SubmissionResult, *, title: str, notebook: str, policy: str = "full") -> None:
        """The student's feedback page, showing what ``policy`` allows (:data:`report.FEEDBACK_POLICIES`)."""
        write_atomic(self.root / "feedback" / result.student / result.assignment / f"{notebook}.html",
                     report.feedback_html(title, result, policy))

    def write_summary(self, titles: dict[str, str], results: list[SubmissionResult],
                      not_graded: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """``summary.json`` and ``summary.html`` over these results, with the files this run did not grade."""
        data = report.summary(titles, results)
        links = {}
        for r in results:
            pages = sorted((self.root / "feedback" / r.student / r.assignment).glob("*.html"))
            if pages:
                links[(r.student, r.assignment)] = pages[0].relative_to(self.root).as_posix()
        write_atomic(self.root / "summary.json", json.dumps(data, ensure_ascii=False, indent=1))
        write_atomic(self.root / "summary.html", report.summary_html(data, not_graded, links))
        return data

    def write_run(self, stats: dict[str, Any]) -> None:
        write_atomic(self.root / "run.json", json.dumps(stats, ensure_ascii=False, indent=1))
