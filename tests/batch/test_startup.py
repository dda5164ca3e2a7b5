"""What a grading run pays before its first result: the gradebook's imports (issue 26)."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = r"""
import json, sys
import autograder.store.ledger  # what the grading command imports to record results
light = {"server_extensions": "nbgrader.server_extensions" in sys.modules,
         "rfc3987_parser": "rfc3987_syntax.syntax_helpers" in sys.modules}
import importlib.metadata, jsonschema, nbgrader
from nbgrader.apps import NbGraderAPI  # generation still imports (it is not in the light set)
checker = jsonschema.FormatChecker()
print(json.dumps({**light, "version": nbgrader.__version__, "dist": importlib.metadata.version("nbgrader"),
                  "extension_points": nbgrader._jupyter_server_extension_points(),
                  "extensions_loaded": "nbgrader.server_extensions.formgrader" in sys.modules,
                  "iri_ok": checker.conforms("http://例子.测试/路径?q=1", "iri"),
                  "iri_bad": checker.conforms("http://exa mple.com/\\", "iri"),
                  "api": NbGraderAPI.__module__}))
"""


def test_the_gradebook_imports_without_nbgraders_server_extensions_and_behaves_the_same():
    """The command imports nbgrader's ORM, not its Jupyter server extensions nor jsonschema's RFC 3987 parser
    (2.5 s of CPU on the cores the first jobs need); both are still there, unchanged, for whoever asks."""
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["server_extensions"] is False and seen["rfc3987_parser"] is False
    assert seen["version"] == seen["dist"]
    assert seen["extension_points"] == [{"module": "nbgrader"}] and seen["extensions_loaded"] is True
    assert seen["iri_ok"] is True and seen["iri_bad"] is False  # the real RFC 3987 check, loaded on first use
    assert seen["api"] == "nbgrader.apps.api"
