"""Screenshots of every page of a built site on a phone (375 px), light and dark, to LOOK at.

    .venv/bin/python bench/bench_pages_shots.py [--site _build/html] [--out artifacts/page-shots] [--pages roc,auc]

Serves the site as ``bench/bench_pages.py`` does and opens each page (``bench_pages.site_pages``) in Debian's
chromium at 375x812 in light and in dark mode (the theme's setting in ``localStorage``), every section of
the article drawn (``course-all-sections``, as after an in-page link).  For each page it writes the full
page (``<page>-<mode>.png``) and one contact sheet ``sheet-<page>.png``: the first screen and the screen
with the most display formulas, light then dark, side by side at their real size (formulas, headings and
the header buttons readable).  ``sidebars-<mode>.png`` shows both sidebars open on the first page.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import sys
import threading
from pathlib import Path

from PIL import Image
from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_pages  # noqa: E402

WIDTH, HEIGHT = 375, 812
MODES = ("light", "dark")
#: The top of the screen (812 px high) with the most display formulas, in page pixels.
BUSIEST_SCREEN = """() => {
  const tops = [...document.querySelectorAll('article mjx-container[display="true"]')]
    .map(e => e.getBoundingClientRect().top + window.scrollY);
  let best = 0, count = 0;
  for (const top of tops) {
    const n = tops.filter(t => t >= top - 100 && t < top - 100 + %d).length;
    if (n > count) { count = n; best = Math.max(0, top - 100); }
  }
  return best;
}""" % HEIGHT


def shoot(page, url: str, mode: str, full: Path) -> tuple[Image.Image, Image.Image]:
    """Open ``url`` in ``mode``; write the full page to ``full``; (first screen, busiest screen)."""
    page.goto(url, wait_until="load")
    page.evaluate("document.documentElement.classList.add('course-all-sections')")
    page.wait_for_timeout(400)  # the theme's colour transitions
    page.screenshot(path=str(full), full_page=True)
    top = int(page.evaluate(BUSIEST_SCREEN))
    image = Image.open(full)
    first = image.crop((0, 0, WIDTH, min(HEIGHT, image.height)))
    top = min(top, max(0, image.height - HEIGHT))
    return first, image.crop((0, top, WIDTH, min(top + HEIGHT, image.height)))


def sheet(tiles: list[Image.Image], path: Path) -> None:
    """``tiles`` side by side, 8 px apart, on grey."""
    out = Image.new("RGB", (len(tiles) * (WIDTH + 8), HEIGHT), (128, 128, 128))
    for i, tile in enumerate(tiles):
        out.paste(tile, (i * (WIDTH + 8), 0))
    out.save(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=bench_pages.SITE)
    parser.add_argument("--out", type=Path, default=bench_pages.ROOT / "artifacts" / "page-shots")
    parser.add_argument("--pages", help="comma-separated substrings of page paths (default: every page)")
    args = parser.parse_args(argv)
    site = args.site.resolve()
    pages = bench_pages.site_pages(site)
    if args.pages:
        pages = [p for p in pages if any(k in p for k in args.pages.split(","))]
    args.out.mkdir(parents=True, exist_ok=True)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(bench_pages.GzipHandler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}/"
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=bench_pages.CHROMIUM, args=["--no-sandbox"])
            contexts = {}
            for mode in MODES:
                contexts[mode] = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT}, device_scale_factor=1)
                contexts[mode].add_init_script(f"localStorage.setItem('mode', '{mode}');"
                                               f"localStorage.setItem('theme', '{mode}');")
            for name in pages:
                stem = name.removesuffix(".html").replace("/", "_")
                tiles = {mode: shoot(contexts[mode].new_page(), base + name, mode, args.out / f"{stem}-{mode}.png")
                         for mode in MODES}
                sheet([tiles["light"][0], tiles["light"][1], tiles["dark"][0], tiles["dark"][1]],
                      args.out / f"sheet-{stem}.png")
                print(f"  {name}", file=sys.stderr, flush=True)
                for ctx in contexts.values():
                    for open_page in ctx.pages:
                        open_page.close()
            for mode in MODES:  # both sidebars open on a phone
                page = contexts[mode].new_page()
                page.goto(base + pages[0], wait_until="load")
                shots = []
                for button in ("button.primary-toggle", "button.secondary-toggle"):
                    page.locator(f"{button}:visible").first.click()
                    page.wait_for_timeout(600)
                    shots.append(Image.open(page.screenshot(path=str(args.out / "tmp.png")) and args.out / "tmp.png").copy())
                    page.keyboard.press("Escape")
                    page.wait_for_timeout(400)
                sheet(shots, args.out / f"sidebars-{mode}.png")
            (args.out / "tmp.png").unlink(missing_ok=True)
            browser.close()
    finally:
        server.shutdown()
    print(f"{len(pages)} pages -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
