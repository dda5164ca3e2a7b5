"""Where the published course lives: one deployment setting read at build time.

The book, its PDF edition and the deployment files all need the same few addresses: the site's
base URL, the interactive demo, the submission service and (optionally) a JupyterHub, a BinderHub,
Colab and the source repository for launch buttons.  They come from ONE YAML file:

* ``COURSE_SITE_CONFIG=/path/to/site.yml`` (environment variable) names the file;
* unset, :data:`LOCAL_SETTINGS` (``deploy/local.yml``) is used: the addresses of ``make serve`` with its
  default ports (book on 127.0.0.1:8000, demo on :8050, submission service on :8060).  The Makefile's targets
  that build or start the course set it to a file written from their HOST and ports (``SERVE_SITE``), so
  ``make serve PORT=9000 ...`` links to its own ports everywhere.

Keys (all optional in the file; missing keys take the local value, launch keys default to off)::

    site_url: https://course.example.edu/binary-eval/   # html_baseurl, sitemap, Open Graph, 404 page
    demo_url: https://course.example.edu/demo/
    submit_url: https://course.example.edu/submit/
    repository_url: https://github.com/OWNER/REPO        # launch buttons need it
    repository_branch: main
    jupyterhub_url: https://hub.example.edu              # JupyterHub + nbgitpuller button
    binderhub_url: https://mybinder.org                  # Binder button
    colab: true                                          # Colab button (GitHub repositories only)
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

ENV_VAR = "COURSE_SITE_CONFIG"
ROOT = Path(__file__).resolve().parents[2]
LOCAL_SETTINGS = ROOT / "deploy" / "local.yml"
COLAB_URL = "https://colab.research.google.com"
_URL_KEYS = ("site_url", "demo_url", "submit_url", "repository_url", "jupyterhub_url", "binderhub_url")
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1", "0.0.0.0")
ASSIGNMENT_NAME = re.compile(r"[A-Za-z0-9_]+")


#: The folder of the site that holds the guides (``make guide`` builds docs/ into ``_build/html/guide``).
GUIDE_FOLDER = "guide"


def book_pages(outdir: Path) -> list[Path]:
    """The book's HTML files in a build folder: every ``.html`` under ``outdir`` except the guides' (their own build
    writes them into :data:`GUIDE_FOLDER`; the book's post-processing leaves them alone)."""
    guides = outdir / GUIDE_FOLDER
    return sorted(page for page in outdir.rglob("*.html") if guides not in page.parents)


class SettingsError(ValueError):
    """The deployment settings file is malformed."""


@dataclass(frozen=True)
class SiteSettings:
    """Addresses of the published course (see the module docstring for the keys)."""

    site_url: str = "http://127.0.0.1:8000/"
    demo_url: str = "http://127.0.0.1:8050/"
    submit_url: str = "http://127.0.0.1:8060/"
    repository_url: str = ""
    repository_branch: str = "main"
    jupyterhub_url: str = ""
    binderhub_url: str = ""
    colab: bool = False

    @property
    def site_path(self) -> str:
        """The path part of ``site_url`` (``/`` or ``/sub/path/``): the prefix of the 404 page's links."""
        return urlsplit(self.site_url).path or "/"

    @property
    def launch_buttons(self) -> dict[str, Any]:
        """``launch_buttons`` theme options: each hub switched on only when its URL is given."""
        return {
            "notebook_interface": "classic",
            "jupyterhub_url": self.jupyterhub_url if self.repository_url else "",
            "binderhub_url": self.binderhub_url if self.repository_url else "",
            "colab_url": COLAB_URL if self.colab and self.repository_url else "",
            "thebe": False,
        }

    @property
    def guide_url(self) -> str:
        """The instructors' and maintainers' guides: built with the site into its folder :data:`GUIDE_FOLDER`."""
        return f"{self.site_url}{GUIDE_FOLDER}/"

    def assignment_url(self, assignment: str) -> str:
        """The page of ``assignment`` on the submission service: ``submit_url`` (an opaque base, whatever its path)
        followed by ``assignments/<name>``.

        Raises
        ------
        ValueError
            ``assignment`` is not an assignment's name (letters, digits and ``_``).
        """
        if not ASSIGNMENT_NAME.fullmatch(assignment):
            raise ValueError(f"{assignment!r} is not an assignment's name (letters, digits and _)")
        return f"{self.submit_url}assignments/{assignment}"


def is_loopback(url: str) -> bool:
    """True for a URL whose host is this machine (127.0.0.0/8, localhost, ::1, 0.0.0.0)."""
    host = (urlsplit(url).hostname or "").lower()
    return host in LOOPBACK_HOSTS or host.startswith("127.") or host.endswith(".localhost")


def _check_url(key: str, value: Any) -> str:
    if not isinstance(value, str):
        raise SettingsError(f"{key}: expected a URL string, got {value!r}")
    value = value.strip()
    if not value:
        return ""
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise SettingsError(f"{key}: {value!r} is not an absolute http(s) URL")
    if key in ("site_url", "demo_url", "submit_url") and not value.endswith("/"):
        value += "/"
    return value


def load_settings(path: str | os.PathLike[str] | None = None) -> SiteSettings:
    """Read the deployment settings.

    Parameters
    ----------
    path : path-like, optional
        The YAML file.  Default: ``$COURSE_SITE_CONFIG`` if set, else :data:`LOCAL_SETTINGS`
        (and the built-in local values if that file is missing too).

    Raises
    ------
    SettingsError
        Unknown key, a value that is not an absolute http(s) URL, or a file that is not a mapping.
    """
    if path is None:
        path = os.environ.get(ENV_VAR, "").strip() or LOCAL_SETTINGS
    path = Path(path)
    if not path.is_absolute() and not path.exists():
        path = ROOT / path
    if not path.is_file():
        if path == LOCAL_SETTINGS:
            return SiteSettings()
        raise SettingsError(f"{ENV_VAR}: no such file {path}")
    raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(raw, dict):
        raise SettingsError(f"{path}: expected a mapping of settings")
    known = {f.name for f in fields(SiteSettings)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise SettingsError(f"{path}: unknown settings {unknown} (known: {sorted(known)})")
    values = asdict(SiteSettings())
    for key, value in raw.items():
        if value is None:
            continue
        if key in _URL_KEYS:
            values[key] = _check_url(key, value)
        elif key == "colab":
            if not isinstance(value, bool):
                raise SettingsError(f"colab: expected true or false, got {value!r}")
            values[key] = value
        else:
            values[key] = str(value).strip()
    for key in ("site_url", "demo_url", "submit_url"):
        if not values[key]:
            raise SettingsError(f"{path}: {key} must not be empty")
    if not is_loopback(values["site_url"]):
        local = [k for k in ("demo_url", "submit_url", "jupyterhub_url", "binderhub_url") if values[k] and is_loopback(values[k])]
        if local:
            raise SettingsError(f"{path}: a published site (site_url {values['site_url']}) must not send readers to "
                                f"their own machine: {', '.join(local)} point to loopback")
    return SiteSettings(**values)
