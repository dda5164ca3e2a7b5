"""The JupyterLab side as it ships: the ``autograder-lab`` wheel holds the prebuilt labextension and the server
config that enables it, and what its server extension sends is what the service's upload parser reads."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from autograder.service.web.forms import parse_form
from autograder_lab import _jupyter_labextension_paths, _jupyter_server_extension_points
from autograder_lab.handlers import multipart, service_url

REPO = Path(__file__).resolve().parents[3]
LAB = REPO / "lab"


@pytest.mark.slow  # builds the wheel (about 10 s)
def test_the_wheel_holds_the_prebuilt_labextension_and_enables_the_server_extension(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(tmp_path),
                    str(LAB)], check=True, capture_output=True, timeout=300)
    (wheel,) = tmp_path.glob("autograder_lab-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    data = "autograder_lab-0.1.0.data/data/"
    ext = data + "share/jupyter/labextensions/@autograder/lab-submit/"
    assert ext + "package.json" in names
    assert any(n.startswith(ext + "static/remoteEntry.") for n in names)
    assert ext + "schemas/@autograder/lab-submit/plugin.json" in names
    assert data + "etc/jupyter/jupyter_server_config.d/autograder_lab.json" in names
    built = json.loads(zipfile.ZipFile(wheel).read(ext + "package.json"))
    assert built["name"] == "@autograder/lab-submit" and built["jupyterlab"]["_build"]["load"].startswith("static/remoteEntry.")
    schema = json.loads(zipfile.ZipFile(wheel).read(ext + "schemas/@autograder/lab-submit/plugin.json"))
    assert schema["jupyter.lab.toolbars"]["Notebook"] == [{"name": "autograder-submit", "command": "autograder:submit", "rank": 5}]
    assert _jupyter_labextension_paths() == [{"src": "labextension", "dest": "@autograder/lab-submit"}]
    assert _jupyter_server_extension_points() == [{"module": "autograder_lab"}]


def test_what_the_server_extension_sends_is_what_the_service_reads():
    notebook = (REPO / "exercises" / "ps1_threshold_metrics" / "threshold_metrics.ipynb").read_bytes()
    body, kind = multipart({"course": "bin-2026"}, '作业 "1".ipynb', notebook)
    form = parse_form(body, kind, 20 << 20)
    assert bytes(form["notebook"].data) == notebook and form["notebook"].filename == '作业 "1".ipynb'
    assert bytes(form["course"].data) == b"bin-2026" and form["course"].filename is None


def test_the_service_address_comes_from_the_environment_and_must_be_a_web_address():
    assert service_url({"AUTOGRADER_URL": "https://grader.example.edu/"}) == "https://grader.example.edu"
    assert service_url({"AUTOGRADER_URL": "grader.example.edu"}) == "" and service_url({}) == ""
