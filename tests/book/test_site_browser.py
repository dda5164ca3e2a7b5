"""The whole site as a reader sees it (Debian's chromium via Playwright, no kernel, no network).

* every page listed in the table of contents is built (each is loaded in the browser, its math typeset
  and audited, by tests/book/test_accessibility.py);
* the ROC animations on the ROC page play: pressing 播放 advances the frame slider and changes the
  frame image, all in the static HTML.
Screenshots go to artifacts/screenshots/ (git-ignored).
"""

from __future__ import annotations

import pytest

from .prose import toc_docs
from .test_quiz_browser import SHOTS, open_page

pytestmark = pytest.mark.slow


def toc_pages() -> list[str]:
    """Every page of ``_toc.yml`` as a path relative to the built site, e.g. ``book/binary/roc.html``."""
    return [f"{doc}.html" for doc in toc_docs()]


PAGES = toc_pages()


def test_toc_lists_the_chapters(book_html):
    assert len(PAGES) >= 25
    assert "book/binary/roc.html" in PAGES and "book/binary/answers.html" in PAGES
    missing = [page for page in PAGES if not (book_html / page).is_file()]
    assert not missing, f"not built: {missing}"


def test_roc_animations_play_without_a_kernel(browser, site_url):
    ctx, tab, problems = open_page(browser, f"{site_url}/book/binary/roc.html", math=False)
    try:
        # every section drawn (as after an in-page link): a section skipped while off screen (course.css) gets
        # its real height when drawn, which would move an animation after scrolling to it
        tab.evaluate("document.documentElement.classList.add('course-all-sections')")
        animations = tab.locator("div.animation")
        assert animations.count() >= 2, "the ROC page should hold the Fawcett animation and the tie-group animation"
        for k in range(animations.count()):
            anim = animations.nth(k)
            anim.scroll_into_view_if_needed()
            slider = anim.locator("input.anim-slider")
            image = anim.locator("img").first
            n_frames = int(slider.get_attribute("max")) + 1
            assert n_frames >= 5, f"animation {k} has only {n_frames} frames"
            first_src = image.get_attribute("src")
            frames = (anim.get_attribute("data-frames") or "").split()
            assert len(frames) == n_frames and not any(f.startswith("data:") for f in frames), \
                "the other frames are files, loaded only when the animation plays"
            # the poster is the first frame's file (not inline in the HTML: book/_ext/page_speed.py), sized
            # before it arrives, and it is shown
            assert first_src == frames[0], (first_src, frames[0])
            assert image.get_attribute("width") and image.get_attribute("height")
            tab.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image.element_handle(),
                                  timeout=30_000)
            anim.locator("button[data-action='play'], button[title='Play'], button[aria-label='Play']").first.click()
            tab.wait_for_function(
                "([s, last]) => parseInt(s.value) === last",
                arg=[slider.element_handle(), n_frames - 1],
                timeout=30_000,
            )
            assert image.get_attribute("src") != first_src, "playing must change the frame image"
            SHOTS.mkdir(parents=True, exist_ok=True)
            anim.screenshot(path=str(SHOTS / f"roc-animation-{k}-last-frame.png"))
        assert not problems, "\n".join(problems)
    finally:
        ctx.close()
