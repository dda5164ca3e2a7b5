"""Load benchmark of the grading service (not a test): a course of N students sends a burst of concurrent
uploads over loopback; the same notebooks are graded by ``autograder grade`` in the same run, for the ratio.

Usage: ``.venv/bin/python bench/bench_service.py [--students 200] [--seed 0] [--keep DIR]``

Prints: accepted and graded counts, submissions graded per minute (service: first upload to last result;
``autograder grade``: the whole command, assignments generated beforehand on both sides), p50/p95 time from
upload to graded, p95 latency of status requests sent by polling students during the burst, peak memory of
each side (process tree). Then a second burst with a SIGKILL of the service half way and a restart, checking
that every accepted submission was graded exactly once (one result each, none lost, the gradebook holding
one row per student and assignment). The notebooks are bench_scale.py's seeded mixture: correct, wrong,
slow (a 2 s cell) and hostile.

Targets (2-core machine): service throughput at least 0.8x ``autograder grade``'s, status p95 under 100 ms,
nothing lost.

``--single K`` measures only the idle service: one correct notebook uploaded K times, one after another,
each polled every 20 ms until graded; prints the median time from upload to graded (target <= 1.5 s), seen
by the client and recorded by the service, with warm sandboxes and again with ``AUTOGRADER_SANDBOX=cold``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import shutil
from collections import Counter
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

import httpx
import sqlalchemy as sa

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from bench_scale import PeakRSS, corpus_notebook, synthesize, timed  # noqa: E402
from service_process import AUTOGRADER, Server, make_course, notebook_bytes, submit  # noqa: E402


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def _ts(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


class Poller:
    """Students asking for the status of their own submissions while the burst runs; latencies in seconds."""

    def __init__(self, server: Server, codes: dict[str, str], threads: int = 4) -> None:
        self.server, self.codes, self.latencies = server, codes, []
        self.targets: list[tuple[str, str]] = []  # (student, submission id)
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(k,), daemon=True) for k in range(threads)]

    def start(self) -> None:
        for t in self._threads:
            t.start()

    def _run(self, k: int) -> None:
        rng = random.Random(k)
        clients: dict[str, httpx.Client] = {}
        while not self._stop.is_set():
            if not self.targets:
                time.sleep(0.05)
                continue
            student, sid = rng.choice(self.targets)
            c = clients.get(student) or clients.setdefault(student, self.server.client(self.codes[student]))
            t0 = time.perf_counter()
            try:
                r = c.get(f"/api/v1/submissions/{sid}")
                if r.status_code == 200:
                    self.latencies.append(time.perf_counter() - t0)
            except httpx.HTTPError:
                pass  # the service is being killed
            time.sleep(0.05)
        for c in clients.values():
            c.close()

    def stop(self) -> list[float]:
        self._stop.set()
        for t in self._threads:
            t.join()
        return self.latencies


def burst(server: Server, codes: dict, subs: Path, poller: Poller, kill_after: int | None = None) -> dict:
    """Upload every notebook under ``subs`` at once (16 connections); wait until all are graded."""
    files = sorted(subs.glob("*/*/*.ipynb"))
    accepted: dict[str, str] = {}
    refused = 0
    t0 = time.time()

    upload_times: list[float] = []

    def upload(f: Path):
        student, assignment = f.parent.parent.name, f.parent.name
        with server.client(codes[student]) as c:
            t = time.perf_counter()
            r = submit(c, assignment, f.read_bytes(), f.name)
            upload_times.append(time.perf_counter() - t)
            return student, r

    with ThreadPoolExecutor(16) as ex:
        for student, r in ex.map(upload, files):
            if r.status_code == 202:
                accepted[r.json()["id"]] = student
                poller.targets.append((student, r.json()["id"]))
            else:
                refused += 1
    t_uploaded = time.time()
    killed = False
    docs: dict[str, dict] = {}
    with server.client(codes["instructor"]) as c:
        while len(docs) < len(accepted):
            try:
                rows = c.get("/api/v1/submissions").json()["submissions"]
            except httpx.HTTPError:
                time.sleep(0.2)
                continue
            for row in rows:
                if row["id"] in accepted and row["status"] in ("graded", "failed"):
                    docs[row["id"]] = row
            if kill_after is not None and not killed and len(docs) >= kill_after:
                server.kill()
                killed = True
                t_kill = time.time()
                server.start()
                print(f"  SIGKILL after {len(docs)} results; restarted in {time.time() - t_kill:.1f} s")
            time.sleep(0.2)
    done_times = [_ts(d["graded_at"]) for d in docs.values()]
    latency = [_ts(d["graded_at"]) - _ts(d["created_at"]) for d in docs.values()]
    return {"accepted": len(accepted), "refused": refused, "graded": sum(d["status"] == "graded" for d in docs.values()),
            "failed": sum(d["status"] == "failed" for d in docs.values()), "upload_seconds": t_uploaded - t0,
            "wall": max(done_times) - t0, "p50": _pct(latency, 0.5), "p95": _pct(latency, 0.95), "ids": set(accepted),
            "upload_p50": _pct(upload_times, 0.5), "upload_p95": _pct(upload_times, 0.95)}


def exactly_once(db_url: str, ids: set[str], pairs: int) -> str:
    eng = sa.create_engine(db_url)
    with eng.connect() as con:
        rows = {r.id: r for r in con.execute(sa.text("SELECT id, status, tries, graded_by FROM service_submissions"))}
        ledger = con.execute(sa.text("SELECT count(*) FROM autograder_done")).scalar()
        counting = con.execute(sa.text("SELECT count(*) FROM service_counting")).scalar()
    eng.dispose()
    mine = [rows[i] for i in ids if i in rows]
    lost = len(ids) - len(mine)
    not_graded = [r.id for r in mine if r.status != "graded" or not r.graded_by]
    tries = Counter(r.tries for r in mine)
    ok = lost == 0 and not not_graded and ledger == counting == pairs
    return (f"{'OK' if ok else 'FAILED'}: {len(mine)} accepted, {lost} lost, {len(not_graded)} without one result; "
            f"claims per submission {dict(sorted(tries.items()))}; gradebook ledger rows {ledger} = counting rows "
            f"{counting} = student/assignment pairs {pairs}")


def single(work: Path, k: int, cold: bool) -> tuple[list[float], list[float]]:
    """Upload one correct notebook ``k`` times to an idle service, each after the previous one is graded;
    (client seconds from upload to seeing "graded", service seconds from created_at to graded_at), the first
    upload (worker start-up) left out."""
    name = "ps1_threshold_metrics"
    data = work / ("single-cold" if cold else "single-warm")
    codes = make_course(data, ["s0001"], config={"assignments": {name: {"attempts_per_24h": 1000}}})
    body = notebook_bytes(corpus_notebook(f"instructor_solution_{name}")[1])
    before = os.environ.get("AUTOGRADER_SANDBOX")
    os.environ["AUTOGRADER_SANDBOX"] = "cold" if cold else "warm"
    try:
        server = Server(data).start()
    finally:
        os.environ.pop("AUTOGRADER_SANDBOX") if before is None else os.environ.update(AUTOGRADER_SANDBOX=before)
    client_s, service_s = [], []
    try:
        with server.client(codes["s0001"]) as c:
            for _ in range(k + 1):
                t0 = time.perf_counter()
                sid = submit(c, name, body, "threshold_metrics.ipynb").json()["id"]
                while True:
                    doc = c.get(f"/api/v1/submissions/{sid}").json()
                    if doc["status"] in ("graded", "failed"):
                        break
                    time.sleep(0.02)
                client_s.append(time.perf_counter() - t0)
                rows = c.get("/api/v1/submissions").json()["submissions"]
                row = next(r for r in rows if r["id"] == sid)
                service_s.append(_ts(row["graded_at"]) - _ts(row["created_at"]))
    finally:
        server.stop()
    return client_s[1:], service_s[1:]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--students", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", help="keep the work folder here")
    ap.add_argument("--single", type=int, default=0, help="only the idle-service latency, over this many uploads")
    ap.add_argument("--json", type=Path, help="with --single: write each upload's seconds here (bench_mechanisms.py)")
    args = ap.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="bench-service-"))
    if args.single:
        seconds = {}
        for cold in (False, True):
            client_s, service_s = single(work, args.single, cold)
            seconds["cold" if cold else "warm"] = {"client": client_s, "service": service_s}
            load = os.getloadavg()
            print(f"idle service, one correct notebook x {args.single} ({'cold' if cold else 'warm'} sandboxes): "
                  f"upload -> graded median {statistics.median(client_s):.2f} s seen by the client "
                  f"(min {min(client_s):.2f}, max {max(client_s):.2f}), {statistics.median(service_s):.2f} s recorded "
                  f"by the service (target <= 1.5 s); load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
        if args.json:
            args.json.write_text(json.dumps(seconds), encoding="utf-8")
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        return
    subs = work / "submissions"
    if subs.exists():
        shutil.rmtree(subs)
    counts, _ = synthesize(subs, args.students, args.seed)
    students = sorted(p.name for p in subs.iterdir())
    pairs = {(f.parent.parent.name, f.parent.name) for f in subs.glob("*/*/*.ipynb")}
    print(f"{args.students} students, one submission each: {counts}")

    # autograder grade on the same notebooks (assignments generated beforehand by a warm-up run)
    out = work / "grade-out"
    warm = work / "warm"
    for n, nb in {p.parent.name: p for p in subs.glob("*/*/*.ipynb")}.items():
        (warm / "warmup" / n).mkdir(parents=True, exist_ok=True)
        shutil.copy(nb, warm / "warmup" / n / nb.name)
    timed([AUTOGRADER, "grade", str(warm), "--out", str(out), "--quiet"])
    g_seconds, g_peak, _ = timed([AUTOGRADER, "grade", str(subs), "--out", str(out), "--quiet"])
    g_rate = 60 * len(pairs) / g_seconds

    # the service: same notebooks, one burst
    data = work / "data"
    codes = make_course(data, students, config={"assignments": {n: {"attempts_per_24h": 100} for n in
                                                                  ("ps1_threshold_metrics", "ps2_roc_auc", "ps3_pr_ap",
                                                                   "ps4_calibration", "ps5_testing")}})
    server = Server(data).start()
    mem = PeakRSS(server.proc.pid)
    poller = Poller(server, codes)
    poller.start()
    try:
        b1 = burst(server, codes, subs, poller)
        status = poller.stop()
        s_peak = mem.stop()
        s_rate = 60 * b1["graded"] / b1["wall"]
        print(f"\nburst 1: {b1['accepted']} accepted ({b1['refused']} refused), {b1['graded']} graded, {b1['failed']} failed; "
              f"uploads took {b1['upload_seconds']:.1f} s (16 at a time; each p50 {b1['upload_p50']:.2f} s, p95 {b1['upload_p95']:.2f} s)")
        print(f"  throughput: service {s_rate:.1f} /min vs autograder grade {g_rate:.1f} /min "
              f"({len(pairs)} in {g_seconds:.1f} s): ratio {s_rate / g_rate:.2f} (target >= 0.8)")
        print(f"  upload -> graded: p50 {b1['p50']:.1f} s, p95 {b1['p95']:.1f} s")
        print(f"  status requests during the burst: {len(status)}, p50 {1000 * _pct(status, 0.5):.1f} ms, "
              f"p95 {1000 * _pct(status, 0.95):.1f} ms (target < 100 ms)")
        print(f"  peak memory (process tree): service {s_peak / 2**20:.0f} MiB, autograder grade {g_peak / 2**20:.0f} MiB")

        poller = Poller(server, codes)
        poller.start()
        b2 = burst(server, codes, subs, poller, kill_after=max(1, b1["accepted"] // 3))
        poller.stop()
        print(f"\nburst 2 (SIGKILL half way, restart): {b2['accepted']} accepted, {b2['graded']} graded, {b2['failed']} failed, "
              f"wall {b2['wall']:.1f} s")
        print("  " + exactly_once(f"sqlite:///{data / 'gradebook.db'}", b2["ids"] | b1["ids"], len(pairs)))
    finally:
        server.stop()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
