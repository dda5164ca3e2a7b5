"""The course's licences, stated the same way everywhere a reader looks before the site is built: the two licence
files, the README, the package metadata and the book's page 版权与许可 (``coursebook.licence`` is the one source).
The rendered footer, the PDF's cover and the credits of the built site: tests/book/test_public_course.py."""

from __future__ import annotations

import tomllib

from coursebook import licence

from .prose import ROOT


def test_the_licence_files_hold_the_licences_they_are_named_for():
    code = (ROOT / licence.CODE.file).read_text(encoding="utf-8")
    text = (ROOT / licence.TEXT.file).read_text(encoding="utf-8")
    assert code.startswith("MIT License\n") and "THE SOFTWARE IS PROVIDED \"AS IS\"" in code
    assert "Attribution 4.0 International" in text and "Section 1 -- Definitions." in text
    assert "Creative Commons may be contacted at creativecommons.org." in text  # the legal code is whole
    assert f"MIT License ({licence.CODE.file})" in text  # the text licence's preamble points at the code's


def test_the_package_and_the_readme_name_the_same_licences():
    assert tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["license"] == licence.CODE.short
    lines = [line for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
             if licence.TEXT.short in line and licence.CODE.short in line]
    assert len(lines) == 1, "README.md: one line that states both licences"
    assert licence.TEXT.file in lines[0] and licence.CODE.file in lines[0] and "book/licence.md" in lines[0]


def test_the_notice_names_both_licences_and_links_the_page():
    plain = licence.notice("课程团队", "2026")
    assert plain.startswith("© 2026 课程团队。") and licence.TEXT.short in plain and licence.CODE.short in plain
    linked = licence.notice("课程团队", "2026", lambda text, target: f"[{text}]({target})")
    assert f"[{licence.TEXT.short} 许可]({licence.TEXT.url})" in linked and f"({licence.PAGE})" in linked


def test_the_licence_page_says_why_and_is_in_the_book():
    page = (ROOT / f"{licence.PAGE}.md").read_text(encoding="utf-8")
    assert "(licence-why)=" in page and "CC BY-SA 4.0" in page and "Apache-2.0" in page
    assert f"- file: {licence.PAGE}" in (ROOT / "_toc.yml").read_text(encoding="utf-8")


def test_every_credit_knows_its_version_or_has_none():
    for credit in licence.CREDITS:
        version = credit.version()
        assert version == "" or version[0].isdigit(), (credit.name, version)
    assert all(c.version() for c in licence.BUNDLED)  # software whose files the site serves has a version
