"""``autograder serve``: the online grading service of every course of a data folder (HTTP API, durable queues,
one pool of grading workers)."""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import socket
import sys
from pathlib import Path

from ..check import all_assignments
from ..service import courses, hub, sessions, worker
from ..service.database import Database, keep_private
from ..service.checks import CheckQueue
from ..service.dispatcher import Dispatcher, Lane
from ..service.lti import passback as lti_passback
from ..service.policy import PolicyError, load_policy
from ..service.queue import Queue
from ..service.quizzes import QuizCloser
from ..service.schema import prepare
from ..service.service import Service
from ..service.site import Site, SiteError, book_url
from ..service.site import public_url as site_url
from ..service.uploads import notebook_rules
from ..service.web.app import make_app
from ..service.web.forms import BodyTime
from ..store.urls import database_url
from .grading import generate_changed, grading_setup, lock_folder

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
    """Start the service; returns when it is stopped (Ctrl-C / SIGTERM).

    In order: the data folder made private and its site database current (and, on SQLite, locked); every
    course's policy and the hub settings checked before anything starts; grading set up once for the open
    assignments of all courses; each course opened; one dispatcher over all courses' lanes; the HTTP app served
    until stopped; then every database closed."""
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    data = Path(args.data).resolve()
    keep_private(data)  # 0700 folder, 0600 database files, umask 077
    try:
        url = site_url(args.public_url, args.host, args.port, bool(args.ssl_certfile))
        book = book_url(args.book_url)
    except SiteError as exc:
        raise CannotServe(str(exc)) from None
    site_db = Database(database_url(args.db, data))
    prepare(site_db, "site")
    lock = lock_data(data) if site_db.sqlite else None
    known = all_assignments()
    registered, policies = _courses_and_policies(site_db, data, known)
    try:
        hub.load_site(data)  # DATA/jupyterhub.yml, checked before anything starts (the app reads it again)
    except hub.HubSettingError as exc:
        raise CannotServe(str(exc)) from None
    grading = _grading(args, policies, known, log)
    instance = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
    secret = sessions.load_secret(data / "secret.key")
    lanes, services, passbacks = [], {}, []
    for course in registered:
        lane, service, passback = _open_course(args, course, policies[course.id], grading, known, data, site_db, secret,
                                               instance, f"{url}/c/{course.id}", log)
        lanes.append(lane)
        services[course.id] = service
        passbacks.append(passback)
    dispatcher = _dispatcher(args, grading, lanes, list(services.values()), log)
    site = Site(site_db, data, url, services, secret, book_url=book)
    closer = QuizCloser([s.quizzes for s in services.values()], log)  # a timed exam ends when its time is up

    def announce() -> None:
        log(f"autograder serve：{url}/（监听 {args.host}:{args.port}；数据目录 {data}；成绩库 {'SQLite' if site_db.sqlite else 'PostgreSQL'}；"
            f"{grading.describe()}；课程 {'、'.join(f'{c.id}（{len(policies[c.id].assignments)} 项作业）' for c in registered)}）")

    body_time, config_kw = _server_settings(args)
    app = make_app(site, lifespan=_lifespan(dispatcher, passbacks, closer, announce), body_time=body_time,
                   extra_hosts=args.allowed_host or [])
    try:
        _run(app, config_kw)
    finally:
        for service in services.values():
            service.db.dispose()
        site_db.dispose()
        if lock is not None:
            os.close(lock)
    return 0


def _courses_and_policies(site_db: Database, data: Path, known) -> tuple[list[courses.Course], dict]:
    """The site's courses and each one's policy, all read before anything starts: a wrong ``course.yml`` stops
    the service at once, naming its course."""
    registered = courses.all_courses(site_db)
    if not registered:
        raise CannotServe(f"数据目录 {data} 中还没有课程：先用 autograder course add 编号 --title 名称 --config course.yml 添加一门")
    policies = {}
    for course in registered:
        path = course.policy_path(data)
        try:
            policies[course.id] = load_policy(path if path.is_file() else None, list(known))
        except PolicyError as exc:
            raise CannotServe(f"课程 {course.id}：{exc}") from None
    return registered, policies


def _grading(args: argparse.Namespace, policies: dict, known, log):
    """The grading set-up shared by every course, for the assignments some course opens; refuses to serve with
    weak sandbox limits unless ``--allow-weak-limits`` says the operator accepts them."""
    open_assignments = {n for p in policies.values() for n in p.assignments}
    grading = grading_setup(args, {n: known[n] for n in sorted(open_assignments)}, CannotServe, log)
    held = grading.enforcement
    if held is not None and held.weak() and not args.allow_weak_limits:
        raise CannotServe(held.refusal())
    return grading


def _dispatcher(args: argparse.Namespace, grading, lanes: list[Lane], services: list[Service], log) -> Dispatcher:
    """One dispatcher over every course's lane, with one pool of grading workers for all courses; each course's
    core wakes it when a submission arrives."""

    def make_pool():
        # at a lower CPU priority than the answers to students; one process per core for all courses
        pool = grading.pool(log, work=worker.grade)
        if not args.scheduler:
            pool.window = pool.workers + 1  # claims taken only when a worker is about to be free
        return pool

    dispatcher = Dispatcher(lanes, make_pool, sandbox=grading.sandbox, limits=grading.limits, scratch=args.scratch, log=log)
    for service in services:
        service.wake = dispatcher.wake
        service.settle_soon = dispatcher.settle_soon
    return dispatcher


def _lifespan(dispatcher: Dispatcher, passbacks: list, closer: QuizCloser, announce):
    """The app's lifespan: the background workers (grading, LTI passback, the quiz closer) run while the server
    does, started before the first request and stopped in reverse order after the last."""

    @contextlib.asynccontextmanager
    async def lifespan(app):
        dispatcher.start()
        for passback in passbacks:
            passback.start()  # LTI
        closer.start()
        announce()
        yield
        closer.stop()
        for passback in passbacks:
            passback.stop()  # LTI
        dispatcher.stop()

    return lifespan


def _server_settings(args: argparse.Namespace) -> tuple[BodyTime, dict]:
    """The slow-upload limits and uvicorn's settings from the options, checked (a bad value is refused by name)."""
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
    return body_time, config_kw


def _run(app, config_kw: dict) -> None:
    """Serve ``app`` until Ctrl-C / SIGTERM (uvicorn imported only here: the other commands never need it)."""
    import uvicorn

    uvicorn.Server(uvicorn.Config(app, **config_kw)).run()


def _open_course(args: argparse.Namespace, course: courses.Course, policy, grading, known, data: Path, site_db: Database,
                 secret: bytes, instance: str, public: str, log):
    """One course's database (made current), gradebook (its changed assignments generated), queue lane, core and
    passback worker."""
    from ..store import ledger

    root = course.data_root(data)
    db = Database(course.db_url(site_db.url, data))
    prepare(db, "course")
    with db.pair_lock("generate"):  # two service processes starting at once: one generates, the other waits
        generate_changed(grading, list(policy.assignments), root / ".nbgrader-course", db.url, SettingStamps(db),
                         CannotServe, log)
    queue = Queue(db, instance, args.lease)
    check_queue = CheckQueue(db, instance, args.lease)
    if db.sqlite:
        queue.orphans_now()
        check_queue.orphans_now()
    digest = policy.digest()
    sources = grading.sources
    lane = Lane(course.id, queue, lambda: ledger.Store(db.url, wait=args.db_wait, log=log), root,
                {n: (known[n].notebook, sources[n], p.counts) for n, p in policy.assignments.items()},
                resettle=db.get_setting("policy_digest") != digest,
                on_settled=lambda: db.set_setting("policy_digest", digest), checks=check_queue)
    rules = {n: notebook_rules(known[n], sources[n], {a: sources.get(a) for a in known}) for n in policy.assignments}
    service = Service(db, policy, root, sessions.Signer(secret, scope=course.id), rules,
                      {**{n: known[n].title for n in policy.assignments},
                       **{n: q.title for n, q in policy.quizzes.items()}}, course=course,
                      site_db=None if db.url == site_db.url else site_db)
    passback = lti_passback.for_course(db, site_db, data, service.titles, public, log, course.id)
    return lane, service, passback
