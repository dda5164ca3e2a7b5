"""Screenshots of every page of a built site on a phone (375 px), light and dark, to LOOK at.

    .venv/bin/python bench/bench_pages_shots.py [--site _build/html] [--out artifacts/page-shots] [--pages roc,auc]

Serves the site as ``bench/bench_pages.py`` does and opens each page (``bench_pages.site_pages``) in Debian's
chromium at 375x812 in light and in dark mode (the theme's setting in ``localStorage``), every section of
the article drawn (``course-all-sections``, as after an in-page link) and every lazy figure loaded.  For each page it writes the full
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

from PIL import Image, ImageDraw
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
    # lazy figures far below the first screen load only when scrolled to: all of them now, for the full page
    page.evaluate("""() => Promise.all([...document.images].map(img => { img.loading = 'eager';
      return (img.complete ? Promise.resolve() : new Promise(done => { img.onload = img.onerror = done; }))
        .then(() => img.decode()).catch(() => null); }))""")
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


def overview(out: Path, names: list[str], mode: str, scale: float = 0.4, rows: int = 800, columns: int = 10) -> list[Path]:
    """Every full-page screenshot of ``mode`` cut into columns (``scale`` of their size, ``rows`` pixels
    high) side by side, ``columns`` to a sheet: ``overview-<mode>-<n>.png``.  Each page starts a column,
    under its name; the whole site fits in a few images (a layout fault, a white block in dark mode, a
    cut figure show at this size; the page sheets show the text)."""
    strips: list[Image.Image] = []
    for name in names:
        full = out / f"{name.removesuffix('.html').replace('/', '_')}-{mode}.png"
        if not full.is_file():
            continue
        image = Image.open(full).convert("RGB")
        image = image.resize((int(image.width * scale), int(image.height * scale)))
        label_height = 14
        for i, top in enumerate(range(0, image.height, rows - (label_height if not strips else 0))):
            strip = Image.new("RGB", (int(WIDTH * scale) + 2, rows), (128, 128, 128))
            offset = label_height if i == 0 else 0
            strip.paste(image.crop((0, top, image.width, min(top + rows - offset, image.height))), (0, offset))
            if i == 0:
                ImageDraw.Draw(strip).text((2, 1), name.removesuffix(".html")[-24:], fill=(255, 255, 0))
            strips.append(strip)
    sheets = []
    for n in range(0, len(strips), columns):
        group = strips[n:n + columns]
        sheet_image = Image.new("RGB", (sum(s.width + 6 for s in group), rows), (60, 60, 60))
        for i, strip in enumerate(group):
            sheet_image.paste(strip, (i * (strip.width + 6), 0))
        path = out / f"overview-{mode}-{n // columns + 1:02d}.png"
        sheet_image.save(path)
        sheets.append(path)
    return sheets


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=bench_pages.SITE)
    parser.add_argument("--out", type=Path, default=bench_pages.ROOT / "artifacts" / "page-shots")
    parser.add_argument("--pages", help="comma-separated substrings of page paths (default: every page)")
    parser.add_argument("--overview-only", action="store_true", help="only the overview sheets, from the last shots")
    args = parser.parse_args(argv)
    site = args.site.resolve()
    pages = bench_pages.site_pages(site)
    if args.pages:
        pages = [p for p in pages if any(k in p for k in args.pages.split(","))]
    args.out.mkdir(parents=True, exist_ok=True)
    if args.overview_only:
        for mode in MODES:
            print(*overview(args.out, pages, mode), sep="\n")
        return 0
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
    for mode in MODES:
        overview(args.out, pages, mode)
    print(f"{len(pages)} pages -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
