"""Session fixture: grade the whole sample corpus once with the real command."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))


@pytest.fixture(scope="session")
def graded(tmp_path_factory):
    import make_corpus

    root = tmp_path_factory.mktemp("grading")
    corpus = root / "corpus"
    make_corpus.write(corpus)
    out = root / "out"
    gradebook = out / "gradebook.db"
    target = corpus / "attack_write_gradebook" / "ps1_threshold_metrics" / "threshold_metrics.ipynb"
    target.write_text(target.read_text(encoding="utf-8").replace(make_corpus.GRADEBOOK_PLACEHOLDER, str(gradebook)), encoding="utf-8")
    expected = json.loads((corpus / "expected.json").read_text(encoding="utf-8"))
    (corpus / "expected.json").unlink()
    t0 = time.monotonic()
    proc = subprocess.run([str(REPO / ".venv" / "bin" / "autograder"), "grade", str(corpus), "--out", str(out)],
                          capture_output=True, text=True, timeout=900)
    seconds = time.monotonic() - t0
    rows = list(csv.DictReader((out / "grades.csv").open(encoding="utf-8"))) if (out / "grades.csv").exists() else []
    results = {}
    for f in (out / "results").glob("*/*.json"):
        data = json.loads(f.read_text(encoding="utf-8"))
        results[(data["student"], data["assignment"])] = data
    return {"proc": proc, "out": out, "corpus": corpus, "expected": expected, "rows": rows, "results": results, "seconds": seconds}
