"""The built pages of chapters 2-5: every exercise of a section's practice has its worked answer in the public
site, folded (a native ``<details>``, so it opens without JavaScript and the PDF prints it open), with the
numbers the page's code glued into it."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest

from .test_practice import PRACTICE_PAGES, _EXERCISE, _practice

pytestmark = pytest.mark.slow

_ANSWER = re.compile(r'<details class="[^"]*sd-dropdown[^"]*"( open[^>]*)?>\s*<summary[^>]*>.*?参考解答.*?</summary>(.*?)</details>', re.S)


@pytest.mark.parametrize("page", PRACTICE_PAGES)
def test_answers_are_public_folded_and_filled_in(book_html: Path, page: str):
    html = (book_html / "book" / f"{page}.html").read_text(encoding="utf-8")
    answers = _ANSWER.findall(html)
    assert len(answers) == len(list(_EXERCISE.finditer(_practice(page)))), f"{page}：参考解答的个数与题目数不符"
    for opened, body in answers:
        assert not opened, f"{page}：参考解答应当默认折叠，读者做完题再展开"
        text = unescape(re.sub(r"<[^>]+>", " ", body))
        assert "{glue" not in text and "glue:" not in text, f"{page}：参考解答里有没有替换的 glue"
        assert re.search(r"\d", text), f"{page}：参考解答里没有任何数字"
    assert 'class="quiz-group"' in html
