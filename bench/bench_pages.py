"""Page weight and speed of every page of the built site, as a phone on 4G loads it (``make bench-pages``).

Serves ``_build/html`` (built by ``make book``) on 127.0.0.1 with gzip, as a static host does, and runs
Lighthouse (npm, pinned in ``bench/package.json``) against Debian's chromium (``CHROME_PATH``) on every
page of ``_toc.yml`` plus the search page, with Lighthouse's mobile profile: simulated slow 4G
(150 ms RTT, 1.6 Mbit/s) and a 4x slower CPU, i.e. a mid-range phone.  For each page it prints the
performance score, Largest Contentful Paint, Total Blocking Time, the number of requests and the bytes
transferred (compressed) before any interaction, the HTML's own size and the largest resource, so a
regression shows which page grew; and where the main thread's time goes (Lighthouse's
mainthread-work-breakdown: style and layout, script, the rest) with the number of DOM elements, so a
regression of TBT shows its cause.  The peer, measured in the same run, is a plain page with the same
text and no style, script or image: ``LCP / plain`` tells how much the course's theme, math and
figures cost over bare text on the same machine.

Targets, on every page: performance score >= 95, LCP <= 2.5 s and at most 3x the plain peer's,
TBT <= 150 ms, CLS <= 0.05, <= 500 kB transferred before interaction.  The table marks every missed
target of a page; the exit status is 1 if a page misses one.

    .venv/bin/python bench/bench_pages.py [--all | --pages roc,intro] [--site _build/html] [--instructor]
                                          [--json artifacts/bench-pages.json]

By default the pages of ``_toc.yml`` and the search page; ``--all``: every page of the built site (also
the index of terms and the "not found" page; not ``index.html``, which only redirects to the first page).

``--site`` measures another built site, e.g. a copy of an earlier build, for a before/after table;
``--instructor`` measures the instructor edition (``make book-instructor``:
``_build/instructor/_build/html``), whose table of contents has the same pages.  ``make bench-pages``
measures both editions when both are built.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import yaml

from coursebook.deployment import book_pages

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "_build" / "html"
INSTRUCTOR_SITE = ROOT / "_build" / "instructor" / "_build" / "html"
LIGHTHOUSE = ROOT / "bench" / "node_modules" / "lighthouse" / "cli" / "index.js"
CHROMIUM = "/usr/bin/chromium"
CHROME_FLAGS = "--headless=new --no-sandbox --disable-gpu --disable-quic --no-first-run " \
               "--disable-background-networking --disable-component-update --disable-sync"
COMPRESSIBLE = {".html", ".js", ".css", ".svg", ".json", ".xml", ".txt", ".map", ".ipynb", ".md"}
TARGET_SCORE = 95
TARGET_LCP_MS = 2500
TARGET_LCP_RATIO = 3.0
TARGET_TBT_MS = 150
TARGET_CLS = 0.05
TARGET_BYTES = 500_000
PEER = "_bench_plain_peer.html"


class GzipHandler(http.server.SimpleHTTPRequestHandler):
    """Static files; text types gzip-compressed when the client accepts it (as a static host does)."""

    _cache: dict[tuple[str, float], bytes] = {}

    def log_message(self, *args: object) -> None:
        pass

    def send_head(self):  # noqa: D102 - http.server hook
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        accepts = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (accepts and path.is_file() and path.suffix in COMPRESSIBLE):
            return super().send_head()
        key = (str(path), path.stat().st_mtime)
        body = self._cache.get(key)
        if body is None:
            body = self._cache[key] = gzip.compress(path.read_bytes(), compresslevel=6)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "max-age=600")
        self.end_headers()
        import io

        return io.BytesIO(body)


def toc_pages() -> list[str]:
    """Every page of ``_toc.yml`` (``book/binary/roc.html``, ...), then the search page."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    pages = [toc["root"]]

    def walk(entries: list | None) -> None:
        for entry in entries or []:
            if "file" in entry:
                pages.append(entry["file"])
            walk(entry.get("sections"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    return [f"{p}.html" for p in pages] + ["search.html"]


def site_pages(site: Path) -> list[str]:
    """Every page of a built site: the pages of ``_toc.yml`` in their order, then the other HTML files
    (not the theme's templates under ``_static``, nor a page that only redirects, as ``index.html`` does)."""
    pages = [p for p in toc_pages() if (site / p).is_file()]
    for path in book_pages(site):  # the guides built into the site are not the book's pages
        name = path.relative_to(site).as_posix()
        if name in pages or name.startswith("_static/") or name == PEER:
            continue
        if re.search(r'<meta http-equiv="refresh"', path.read_text(encoding="utf-8", errors="replace")[:2000], re.I):
            continue
        pages.append(name)
    return pages


def write_peer(site: Path) -> str:
    """A plain page with the text of the introduction and nothing else; returns its name."""
    html = (site / "book" / "intro.html").read_text(encoding="utf-8")
    main = re.search(r"<article[^>]*>(.*?)</article>", html, re.S)
    text = re.sub(r"<[^>]+>", " ", main.group(1) if main else html)
    text = re.sub(r"\s+", " ", text).strip()
    (site / PEER).write_text(f'<!doctype html><html lang="zh-CN"><meta charset="utf-8"><meta name="viewport" '
                             f'content="width=device-width"><title>plain</title><p>{text}</p></html>', encoding="utf-8")
    return PEER


@dataclass
class PageResult:
    page: str
    score: float
    lcp_ms: float
    tbt_ms: float
    cls: float
    requests: int
    transfer_bytes: int
    html_bytes: int
    largest: str
    largest_bytes: int
    style_layout_ms: float
    script_ms: float
    other_ms: float
    dom_elements: int


REPORTS = ROOT / "artifacts" / "bench-pages"


def lighthouse(url: str, name: str, reports: Path = REPORTS) -> dict:
    """One Lighthouse run (performance only, mobile profile, simulated throttling); the JSON report.

    The full report is kept as ``<reports>/<name>.json`` (``artifacts/bench-pages/<edition>/``; open it in
    Lighthouse's viewer to see why).
    """
    reports.mkdir(parents=True, exist_ok=True)
    out = reports / (name.replace("/", "_").removesuffix(".html") + ".json")
    env = dict(os.environ, CHROME_PATH=CHROMIUM)
    # its own process group: an interrupted or timed-out run takes Lighthouse's chromium with it
    proc = subprocess.Popen(
        ["node", str(LIGHTHOUSE), url, "--quiet", "--output=json", f"--output-path={out}",
         "--only-categories=performance", "--form-factor=mobile", "--throttling-method=simulate",
         f"--chrome-flags={CHROME_FLAGS}"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    try:
        _, stderr = proc.communicate(timeout=300)
    except BaseException:  # Lighthouse (chrome-launcher) stops its chromium on SIGINT
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        raise
    if proc.returncode != 0 or not out.is_file():
        raise RuntimeError(f"lighthouse failed on {url}: {stderr[-2000:]}")
    return json.loads(out.read_text(encoding="utf-8"))


#: Lighthouse's groups of main-thread work (mainthread-work-breakdown) reported as "script".
SCRIPT_GROUPS = {"scriptEvaluation", "scriptParseCompile"}


def main_thread(audits: dict) -> tuple[float, float, float]:
    """Milliseconds of main-thread work (with the simulated 4x slower CPU): style and layout, script, the rest."""
    groups: dict[str, float] = {}
    for item in audits.get("mainthread-work-breakdown", {}).get("details", {}).get("items", []):
        groups[item["group"]] = groups.get(item["group"], 0.0) + item["duration"]
    style = groups.pop("styleLayout", 0.0)
    script = sum(groups.pop(g, 0.0) for g in SCRIPT_GROUPS)
    return style, script, sum(groups.values())


def summarize(page: str, report: dict) -> PageResult:
    """The row of ``page`` from its Lighthouse report."""
    audits = report["audits"]
    items = audits["network-requests"]["details"]["items"]
    biggest = max(items, key=lambda i: i.get("transferSize", 0))
    document = next((i for i in items if i.get("resourceType") == "Document"), items[0])
    return PageResult(
        page=page,
        score=round(100 * (report["categories"]["performance"]["score"] or 0), 1),
        lcp_ms=audits["largest-contentful-paint"]["numericValue"],
        tbt_ms=audits["total-blocking-time"]["numericValue"],
        cls=audits["cumulative-layout-shift"]["numericValue"],
        requests=len(items),
        transfer_bytes=int(audits["total-byte-weight"]["numericValue"]),
        html_bytes=int(document.get("transferSize", 0)),
        largest=biggest["url"].rsplit("/", 1)[-1].split("?")[0][:38],
        largest_bytes=int(biggest.get("transferSize", 0)),
        **dict(zip(("style_layout_ms", "script_ms", "other_ms"), main_thread(audits))),
        dom_elements=int(audits.get("dom-size", {}).get("numericValue", 0)),
    )


def misses(result: PageResult, plain: PageResult) -> list[str]:
    """The targets ``result`` misses (empty: it meets them all)."""
    checks = [
        (result.score >= TARGET_SCORE, f"score < {TARGET_SCORE}"),
        (result.lcp_ms <= TARGET_LCP_MS, f"LCP > {TARGET_LCP_MS / 1000:g} s"),
        (result.lcp_ms <= TARGET_LCP_RATIO * plain.lcp_ms, f"LCP > {TARGET_LCP_RATIO:g}x plain"),
        (result.tbt_ms <= TARGET_TBT_MS, f"TBT > {TARGET_TBT_MS} ms"),
        (result.cls <= TARGET_CLS, f"CLS > {TARGET_CLS}"),
        (result.transfer_bytes <= TARGET_BYTES, f"> {TARGET_BYTES // 1000} kB"),
    ]
    return [why for ok, why in checks if not ok]


def measure(site: Path, pages: list[str], reports: Path) -> tuple[PageResult, list[PageResult]]:
    """Serve ``site`` and run Lighthouse on its plain peer, then on each of ``pages``: (peer, pages)."""
    peer = write_peer(site)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(GzipHandler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}/"
    results: list[PageResult] = []
    try:
        plain = summarize("(plain text peer)", lighthouse(base + peer, "plain-peer", reports))
        print(f"  {site.name}: plain peer LCP {plain.lcp_ms / 1000:.2f} s", file=sys.stderr, flush=True)
        for i, page in enumerate(pages, 1):
            started = time.monotonic()
            r = summarize(page, lighthouse(base + page, page, reports))
            results.append(r)
            # each page as soon as it is measured (the table comes at the end): an interrupted run still tells
            print(f"  measured {page} ({i}/{len(pages)}, {time.monotonic() - started:.0f} s, load "
                  f"{os.getloadavg()[0]:.1f}): score {r.score:.0f}, LCP {r.lcp_ms / 1000:.2f} s = "
                  f"{r.lcp_ms / plain.lcp_ms:.2f}x plain, TBT {r.tbt_ms:.0f} ms, CLS {r.cls:.3f}, "
                  f"{r.transfer_bytes / 1000:.0f} kB; misses: {', '.join(misses(r, plain)) or 'none'}",
                  file=sys.stderr, flush=True)
    finally:
        server.shutdown()
        (site / peer).unlink(missing_ok=True)
    return plain, results


def print_table(plain: PageResult, results: list[PageResult]) -> list[str]:
    """Print the table of one site (the peer first); the pages that miss a target."""
    header = (f"{'page':<36} {'score':>5} {'LCP s':>6} {'LCP/plain':>9} {'TBT ms':>7} {'CLS':>5} {'req':>4} "
              f"{'KB sent':>8} {'HTML KB':>8} {'style+layout':>12} {'script':>6} {'other':>6} {'DOM':>5}  "
              f"largest resource (KB)")
    print(header)
    print("-" * len(header))
    failing = []
    for r in [plain, *results]:
        flag = ""
        missed = misses(r, plain) if r is not plain else []
        if missed:
            flag = "  <-- misses: " + ", ".join(missed)
            failing.append(r.page)
        print(f"{r.page:<36} {r.score:>5.0f} {r.lcp_ms / 1000:>6.2f} {r.lcp_ms / plain.lcp_ms:>9.2f} {r.tbt_ms:>7.0f} "
              f"{r.cls:>5.3f} {r.requests:>4} {r.transfer_bytes / 1000:>8.0f} {r.html_bytes / 1000:>8.1f} "
              f"{r.style_layout_ms:>12.0f} {r.script_ms:>6.0f} {r.other_ms:>6.0f} {r.dom_elements:>5}  "
              f"{r.largest} ({r.largest_bytes / 1000:.0f}){flag}")
    worst = max(results, key=lambda r: r.transfer_bytes)
    print(f"{len(results)} pages; lowest score {min(r.score for r in results):.0f} (target >= {TARGET_SCORE}); "
          f"heaviest {worst.page} {worst.transfer_bytes / 1000:.0f} KB (target <= {TARGET_BYTES / 1000:.0f} KB); "
          f"{len(failing)} pages miss a target")
    return failing


def _stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")  # unwinds through lighthouse(), which stops its chromium


def main(argv: list[str] | None = None) -> int:
    """Measure the built editions (or ``--site``) and print a table per edition; 1 if a page misses a target."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    chosen = parser.add_mutually_exclusive_group()
    chosen.add_argument("--pages", help="comma-separated substrings of the paths of the pages to measure, among every "
                                        "page of the site (default: the pages of _toc.yml and the search page)")
    chosen.add_argument("--all", action="store_true", help="every page of the site (also genindex.html, 404.html)")
    parser.add_argument("--json", type=Path, default=ROOT / "artifacts" / "bench-pages.json")
    parser.add_argument("--site", type=Path, action="append",
                        help="a built site to measure (repeatable; default: _build/html and, if built, the instructor edition)")
    parser.add_argument("--instructor", action="store_true", help="measure only the instructor edition")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _stop)
    if args.instructor:
        sites = [INSTRUCTOR_SITE]
    else:
        sites = args.site or [SITE] + ([INSTRUCTOR_SITE] if (INSTRUCTOR_SITE / "index.html").is_file() else [])
    for site in sites:
        if not (site / "index.html").is_file():
            sys.exit(f"找不到 {site}/index.html：先运行 make book（教师版：make book-instructor）")
    if not LIGHTHOUSE.is_file():
        sys.exit("先运行 make bench-pages（npm 安装 bench/package.json 中的 Lighthouse）")
    load_before = os.getloadavg()[0]
    failing: list[str] = []
    record = []
    for site in sites:
        site = site.resolve()
        pages = site_pages(site) if args.all or args.pages else toc_pages()
        if args.pages:
            keys = args.pages.split(",")
            pages = [p for p in pages if any(k in p for k in keys)]
        name = "instructor" if site == INSTRUCTOR_SITE.resolve() else "public" if site == SITE.resolve() else site.name
        load = os.getloadavg()[0]
        plain, results = measure(site, pages, REPORTS / name)
        print(f"\n== {site.relative_to(ROOT) if site.is_relative_to(ROOT) else site} ({name}; "
              f"{time.strftime('%H:%M', time.gmtime())} UTC, load average {load:.1f} -> {os.getloadavg()[0]:.1f}) ==")
        failing += [f"{name}:{page}" for page in print_table(plain, results)]
        record.append({"site": str(site), "edition": name, "pages": [asdict(r) for r in [plain, *results]]})
    print(f"\nload average (1 min) {load_before:.1f} before, {os.getloadavg()[0]:.1f} after, on {os.cpu_count()} cores: "
          "Lighthouse scales the CPU time it observes, so a busy machine lowers LCP/TBT scores; bytes and requests do not vary")
    print(f"{len(failing)} pages miss a target" + (f": {', '.join(failing)}" if failing else ""))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(record, ensure_ascii=False, indent=1), encoding="utf-8")
    return 1 if failing else 0


if __name__ == "__main__":
    raise SystemExit(main())
