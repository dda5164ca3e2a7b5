"""``autograder serve``: the online grading service (HTTP API, durable queue, grading workers)."""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import os
import secrets
import socket
import sys
from pathlib import Path

from ..batch import pools
from ..check import all_assignments
from ..model import Limits
from ..sandbox import self_test
from ..service import sessions
from ..service.app import Service, make_app
from ..service.lti import passback as lti_passback
from ..service.database import Database, engine_url
from ..service.dispatcher import Dispatcher
from ..service.policy import PolicyError, load_policy
from ..service.queue import Queue
from ..service import worker
from ..service.uploads import notebook_rules

REPO = Path(__file__).resolve().parents[2]


class CannotServe(RuntimeError):
    """The service cannot start (message in Chinese)."""


def lock_data(data: Path) -> int:
    """One service process per SQLite data folder (several need PostgreSQL): hold a lock for the process's life."""
    fd = os.open(data / ".service.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise CannotServe(f"另一个 autograder serve 正在使用数据目录 {data}（SQLite 只允许一个服务进程；"
                          "多个进程请用 --db postgresql://...）") from None
    return fd


def generate(db: Database, url: str, solutions: Path, sources: dict[str, Path], course: Path, log) -> None:
    """nbgrader generate_assignment for each open assignment whose source the gradebook has not seen."""
    from ..store import gradebook

    with db.pair_lock("generate"):
        todo = {}
        for name, src in sources.items():
            key = hashlib.sha256(src.read_bytes()).hexdigest()
            if db.get_setting(f"generated:{name}") != key:
                todo[name] = key
        if todo:
            log(f"nbgrader generate_assignment：{', '.join(todo)}")
            try:
                gradebook.generate(solutions, list(todo), course, engine_url(url))
            except gradebook.GenerationError as exc:
                raise CannotServe(str(exc)) from None
            for name, key in todo.items():
                db.set_setting(f"generated:{name}", key)


def serve(args: argparse.Namespace) -> int:
    """Start the service; returns when it is stopped (Ctrl-C / SIGTERM)."""
    import uvicorn

    from ..store import ledger

    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    data = Path(args.data).resolve()
    data.mkdir(parents=True, exist_ok=True)
    known = all_assignments()
    config = Path(args.config) if args.config else (data / "course.yml" if (data / "course.yml").is_file() else None)
    try:
        policy = load_policy(config, list(known))
    except PolicyError as exc:
        raise CannotServe(str(exc)) from None
    solutions = Path(args.solutions or REPO / "solutions").resolve()
    sources = {n: solutions / n / f"{known[n].notebook}.ipynb" for n in policy.assignments}
    for src in sources.values():
        if not src.is_file():
            raise CannotServe(f"找不到教师源 {src}")
    sandbox = not args.no_sandbox
    if sandbox and not args.scheduler:
        why = self_test()
        if why:
            raise CannotServe(f"{why}。拒绝在没有沙箱的情况下运行学生代码；确需如此请加 --no-sandbox")
    elif not sandbox:
        log("autograder: 警告：--no-sandbox，学生代码不经隔离运行")

    url = args.db or f"sqlite:///{data / 'gradebook.db'}"
    db = Database(url)
    db.create()
    lock = lock_data(data) if db.sqlite else None
    generate(db, url, solutions, sources, data / ".nbgrader-course", log)
    queue = Queue(db, f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}", args.lease)
    if db.sqlite:
        queue.orphans_now()
    digest = policy.digest()
    resettle = db.get_setting("policy_digest") != digest
    limits = Limits(call_timeout=args.call_timeout, memory_bytes=args.memory_mib << 20,
                    submission_timeout=args.submission_timeout)

    def make_pool():
        if args.scheduler:
            return pools.DaskPool(args.scheduler, log)
        pool = pools.LocalPool(args.jobs or os.cpu_count() or 1, log, work=worker.grade)
        pool.window = pool.workers + 1  # claims taken only when a worker is about to be free
        return pool

    courses = {n: (known[n].notebook, sources[n], p.counts) for n, p in policy.assignments.items()}
    dispatcher = Dispatcher(queue, make_pool, lambda: ledger.Store(engine_url(url), wait=args.db_wait, log=log), data,
                            courses, sandbox=sandbox, limits=limits, scratch=args.scratch, log=log, resettle=resettle,
                            on_settled=lambda: db.set_setting("policy_digest", digest))
    rules = {n: notebook_rules(known[n], sources[n], {a: sources.get(a) for a in known}) for n in policy.assignments}
    service = Service(db, policy, data, sessions.Signer(sessions.load_secret(data / "secret.key")), rules,
                      {n: known[n].title for n in policy.assignments}, wake=dispatcher.wake)

    passback = lti_passback.for_service(db, data, service.titles, log)  # LTI: grade passback worker

    @contextlib.asynccontextmanager
    async def lifespan(app):
        dispatcher.start()
        passback.start()  # LTI
        grading = f"Dask 集群 {args.scheduler}" if args.scheduler else f"本机 {args.jobs or os.cpu_count()} 个评分进程"
        log(f"autograder serve：http://{args.host}:{args.port}/api/v1（数据目录 {data}；"
            f"成绩库 {'SQLite' if db.sqlite else 'PostgreSQL'}；{grading}；开放作业 {', '.join(policy.assignments)}）")
        yield
        passback.stop()  # LTI
        dispatcher.stop()

    config_kw = dict(host=args.host, port=args.port, lifespan="on", log_level="warning", access_log=args.access_log,
                     server_header=False, timeout_keep_alive=5, h11_max_incomplete_event_size=16384,
                     limit_concurrency=args.max_connections,
                     proxy_headers=bool(args.forwarded_allow_ips), forwarded_allow_ips=args.forwarded_allow_ips or "")
    try:
        uvicorn.Server(uvicorn.Config(make_app(service, lifespan=lifespan), **config_kw)).run()
    finally:
        db.dispose()
        if lock is not None:
            os.close(lock)
    return 0
