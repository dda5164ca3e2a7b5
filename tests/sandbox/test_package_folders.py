"""Which package folders a sandbox masks: every ``site-packages``/``dist-packages`` but the environment's own.

Both layouts are laid out in a temporary folder: a non-Debian installation (the base interpreter's
``lib/python3.X/site-packages``, as pyenv or python.org builds have it) and Debian's (``/usr/lib/python3/dist-packages``,
``/usr/local/lib/python3.X/dist-packages``, the standard library in ``/usr/lib/python3.X``).  That the masks hold
inside a real sandbox is ``tests/sandbox/test_sandbox_isolation.py::test_only_the_environments_packages_are_importable``.
"""

from __future__ import annotations

from pathlib import Path

from autograder.sandbox.command import foreign_package_folders


def _folders(root: Path, *paths: str) -> list[str]:
    for p in paths:
        (root / p).mkdir(parents=True)
    return [str(root / p) for p in paths]


def test_the_base_interpreters_site_packages_is_masked_and_the_environments_kept(tmp_path):
    base = tmp_path / "pyenv" / "versions" / "3.11.7"
    venv = tmp_path / "checkout" / ".venv"
    (foreign,) = _folders(base, "lib/python3.11/site-packages")
    (own,) = _folders(venv, "lib/python3.11/site-packages")
    (venv / "lib64").symlink_to("lib")  # as venv makes it on some systems: the same folder under a second name
    roots = [str(venv), str(base), str(base / "lib" / "python3.11")]
    assert foreign_package_folders(roots, [own]) == [foreign]


def test_debians_dist_packages_are_masked(tmp_path):
    usr = tmp_path / "usr"
    expected = _folders(usr, "lib/python3/dist-packages", "lib/python3.11/dist-packages",
                        "local/lib/python3.11/dist-packages")
    venv = tmp_path / "venv"
    (own,) = _folders(venv, "lib/python3.11/site-packages")
    roots = [str(usr), str(venv), str(usr / "lib" / "python3.11")]
    assert foreign_package_folders(roots, [own]) == sorted(expected)


def test_a_folder_that_holds_the_environment_is_not_masked(tmp_path):
    (own,) = _folders(tmp_path, "site-packages/inner/lib/python3.11/site-packages")
    assert foreign_package_folders([str(tmp_path)], [own]) == []
