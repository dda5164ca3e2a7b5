"""``autograder serve``: the online grading service (HTTP API, durable queue, grading workers)."""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import socket
import sys
from pathlib import Path

from ..check import all_assignments
from ..service import sessions
from ..service.service import Service
from ..service.database import Database, keep_private
from ..service.lti import passback as lti_passback
from ..service.dispatcher import Dispatcher
from ..service.policy import PolicyError, load_policy
from ..service.queue import Queue
from ..service import worker
from ..service.uploads import notebook_rules
from ..store.urls import database_url
from .grading import generate_changed, grading_setup, lock_folder
from ..service.web.app import make_app
from ..service.web.forms import BodyTime

REPO = Path(__file__).resolve().parents[2]


class CannotServe(RuntimeError):
    """The service cannot start (message in Chinese)."""


def lock_data(data: Path) -> int:
    """One service process per SQLite data folder (several need PostgreSQL): hold a lock for the process's life."""
    return lock_folder(data, ".service.lock", lambda holder: (
        f"另一个 autograder serve（进程 {holder}）正在使用数据目录 {data}（SQLite 只允许一个服务进程；"
        "多个进程请用 --db postgresql://...）"), CannotServe)


class SettingStamps:
    """What :func:`~.grading.generate_changed` generated, remembered in the service's settings (in the gradebook)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def get(self, name: str) -> str | None:
        return self.db.get_setting(f"generated:{name}")

    def put(self, done: dict[str, str]) -> None:
        for name, key in done.items():
            self.db.set_setting(f"generated:{name}", key)


def serve(args: argparse.Namespace) -> int:
    """Start the service; returns when it is stopped (Ctrl-C / SIGTERM)."""
    import uvicorn

    from ..store import ledger

    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    data = Path(args.data).resolve()
    keep_private(data)  # 0700 folder, 0600 database files, umask 077
    known = all_assignments()
    config = Path(args.config) if args.config else (data / "course.yml" if (data / "course.yml").is_file() else None)
    try:
        policy = load_policy(config, list(known))
    except PolicyError as exc:
        raise CannotServe(str(exc)) from None
    grading = grading_setup(args, {n: known[n] for n in policy.assignments}, CannotServe, log)
    held = grading.enforcement
    if held is not None and held.weak() and not args.allow_weak_limits:
        raise CannotServe(held.refusal())
    sources = grading.sources

    url = database_url(args.db, data)
    db = Database(url)
    db.create()
    lock = lock_data(data) if db.sqlite else None
    with db.pair_lock("generate"):  # two service processes starting at once: one generates, the other waits
        generate_changed(grading, list(policy.assignments), data / ".nbgrader-course", url, SettingStamps(db),
                         CannotServe, log)
    queue = Queue(db, f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}", args.lease)
    if db.sqlite:
        queue.orphans_now()
    digest = policy.digest()
    resettle = db.get_setting("policy_digest") != digest

    def make_pool():
        # at a lower CPU priority than the answers to students; one process per core (docs/scaling.md: extra
        # workers would hold claimed submissions while they wait for admission, and start cold); spawned
        # children of the service, started once (a fork server saves start-up, which a service pays once)
        pool = grading.pool(log, work=worker.grade, extra=0, fork_server=False)
        if not args.scheduler:
            pool.window = pool.workers + 1  # claims taken only when a worker is about to be free
        return pool

    courses = {n: (known[n].notebook, sources[n], p.counts) for n, p in policy.assignments.items()}
    dispatcher = Dispatcher(queue, make_pool, lambda: ledger.Store(url, wait=args.db_wait, log=log), data,
                            courses, sandbox=grading.sandbox, limits=grading.limits, scratch=args.scratch, log=log,
                            resettle=resettle,
                            on_settled=lambda: db.set_setting("policy_digest", digest))
    rules = {n: notebook_rules(known[n], sources[n], {a: sources.get(a) for a in known}) for n in policy.assignments}
    service = Service(db, policy, data, sessions.Signer(sessions.load_secret(data / "secret.key")), rules,
                      {n: known[n].title for n in policy.assignments}, wake=dispatcher.wake)

    passback = lti_passback.for_service(db, data, service.titles, log)  # LTI: grade passback worker

    @contextlib.asynccontextmanager
    async def lifespan(app):
        dispatcher.start()
        passback.start()  # LTI
        log(f"autograder serve：{'https' if args.ssl_certfile else 'http'}://{args.host}:{args.port}/api/v1（数据目录 {data}；"
            f"成绩库 {'SQLite' if db.sqlite else 'PostgreSQL'}；{grading.describe()}；开放作业 {', '.join(policy.assignments)}）")
        yield
        passback.stop()  # LTI
        dispatcher.stop()

    if not (0 < args.body_grace <= 600 and 0 < args.body_min_rate):
        raise CannotServe("--body-grace 应在 0 到 600 秒之间，--body-min-rate 应大于 0")
    body_time = BodyTime(grace=args.body_grace, min_rate=args.body_min_rate * 1024)
    if bool(args.ssl_certfile) != bool(args.ssl_keyfile):
        raise CannotServe("--ssl-certfile 与 --ssl-keyfile 须同时给出")
    config_kw = dict(host=args.host, port=args.port, lifespan="on", log_level="warning", access_log=args.access_log,
                     server_header=False, timeout_keep_alive=5, h11_max_incomplete_event_size=16384,
                     limit_concurrency=args.max_connections,
                     proxy_headers=bool(args.forwarded_allow_ips), forwarded_allow_ips=args.forwarded_allow_ips or "",
                     http="h11", ssl_certfile=args.ssl_certfile, ssl_keyfile=args.ssl_keyfile)
    try:
        uvicorn.Server(uvicorn.Config(make_app(service, lifespan=lifespan, body_time=body_time), **config_kw)).run()
    finally:
        db.dispose()
        if lock is not None:
            os.close(lock)
    return 0
