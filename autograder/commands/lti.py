"""``autograder lti``: register LMS platforms, show the tool's endpoints, rotate its key, sync, passback status."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path



class CannotLti(RuntimeError):
    """The lti command cannot do what was asked (message in Chinese)."""


def add_parser(sub) -> None:
    from .course import data_options

    p = sub.add_parser("lti", help="LTI 1.3：在课程平台（Canvas、Moodle 等）中使用本服务")
    ls = p.add_subparsers(dest="lti_command", required=True)

    def common(q, course: bool = False):
        data_options(q, course=course)

    add = ls.add_parser("add-platform", help="注册一个课程平台（一个平台注册一次，服务中的所有课程共用）")
    common(add)
    add.add_argument("--name", required=True, help="平台名称（只用于显示）")
    add.add_argument("--issuer", required=True, help="平台的 issuer（如 https://canvas.instructure.com）")
    add.add_argument("--client-id", required=True, help="平台为本工具分配的 client id")
    add.add_argument("--deployment-id", required=True, action="append", help="部署 id（可重复）")
    add.add_argument("--auth-login-url", required=True, help="平台的 OIDC 授权地址")
    add.add_argument("--auth-token-url", required=True, help="平台的 OAuth 2 令牌地址")
    add.add_argument("--jwks-url", required=True, help="平台的公钥集（JWKS）地址")
    add.add_argument("--auth-audience", help="令牌请求中 client assertion 的 aud（默认即令牌地址；Brightspace 另有“OAuth2 Audience”）")
    common(ls.add_parser("list", help="列出已注册的课程平台"))
    rm = ls.add_parser("remove", help="删除一个课程平台的注册")
    common(rm)
    rm.add_argument("platform_id", type=int, help="平台编号（见 autograder lti list）")
    common(ls.add_parser("rotate-key", help="换用新的签名密钥（旧公钥仍公布一小时）"))
    info = ls.add_parser("info", help="打印本工具在课程平台中需要填写的地址")
    common(info)
    info.add_argument("--url", required=True, help="本服务对外的地址，如 https://grader.example.edu")
    info.add_argument("--canvas-json", action="store_true", help="打印 Canvas 开发者密钥的 JSON 配置")
    bind = ls.add_parser("bind", help="把课程平台上的一门课程（context）绑定到本服务的一门课程，立即生效")
    common(bind, course=True)
    bind.add_argument("--platform", type=int, required=True, help="平台编号（autograder lti list）")
    bind.add_argument("--deployment-id", help="部署 id（平台只有一个部署时可省略）")
    bind.add_argument("--context", required=True, help="课程平台上这门课的 context_id（在本服务的绑定申请或课程平台的课程设置里可见）")
    bind.add_argument("--title", default="", help="说明（例如课程平台上的课程名）")
    bind.add_argument("--roster-authority", action="store_true",
                      help="这门课的名单可信：学生首次打开时按课程平台给出的学号（SIS id）或邮箱关联名单；否则学生用访问码确认一次")
    unbind = ls.add_parser("unbind", help="解除一项绑定（或拒绝一项绑定申请）")
    common(unbind)
    unbind.add_argument("--platform", type=int, required=True)
    unbind.add_argument("--deployment-id")
    unbind.add_argument("--context", required=True)
    common(ls.add_parser("bindings", help="列出全部绑定与等待确认的绑定申请"))
    common(ls.add_parser("sync", help="从课程平台同步名单（NRPS）：一门课程（--course）或全部课程的每门已绑定课程；可每天由 cron 运行"))
    common(ls.add_parser("passback", help="一门课程的成绩回传队列：待回传、已回传、失败的数量"), course=True)
    common(ls.add_parser("retry", help="把一门课程回传失败的成绩重新放回队列"), course=True)


def _deployment(platform, given: str | None) -> str:
    if given:
        if given not in platform.deployments:
            raise CannotLti(f"平台 {platform.id} 没有部署 {given}（已注册：{', '.join(platform.deployments)}）")
        return given
    if len(platform.deployments) != 1:
        raise CannotLti(f"平台 {platform.id} 有多个部署（{', '.join(platform.deployments)}），请用 --deployment-id 指明")
    return platform.deployments[0]


def lti(args: argparse.Namespace) -> int:
    """``autograder lti COMMAND``: ``passback`` and ``retry`` work on one course's database, the others on the
    site's (platforms, bindings and the tool's keys are the site's), each in a function of its own below."""
    # imported here and in the steps: the parser is built on every ``autograder`` start, also by the grading workers
    from ..service.courses import CourseError
    from ..service.lti import registry
    from .course import site_database

    data = Path(args.data).resolve()
    if args.lti_command in ("passback", "retry"):
        return _passback_queue(args)
    db = site_database(args)
    try:
        return _SITE_COMMANDS[args.lti_command](args, db, data)
    except (registry.RegistryError, CourseError) as exc:
        raise CannotLti(str(exc)) from None
    finally:
        db.dispose()


def _passback_queue(args: argparse.Namespace) -> int:
    """``passback``: the course's passback queue counted; ``retry``: its failed grades queued again."""
    from ..service.lti import passback
    from .course import CannotCourse, course_database

    try:
        db, course = course_database(args)
    except CannotCourse as exc:
        raise CannotLti(str(exc)) from None
    try:
        if args.lti_command == "passback":
            s = passback.summary(db)
            print(f"课程 {course.id}：待回传 {s['pending']}，已回传 {s['sent']}，失败 {s['failed']}")
        else:
            print(f"课程 {course.id}：已重新排队 {passback.retry_failed(db)} 条回传失败的成绩")
    finally:
        db.dispose()
    return 0


def _add_platform(args: argparse.Namespace, db, data: Path) -> int:
    """Register a platform; the tool's key pair is made now, so that its key set is ready for the LMS to fetch."""
    from ..service.lti import keys, registry

    p = registry.add(db, name=args.name, issuer=args.issuer, client_id=args.client_id, deployments=args.deployment_id,
                     auth_login_url=args.auth_login_url, auth_token_url=args.auth_token_url, jwks_url=args.jwks_url,
                     auth_audience=args.auth_audience)
    keys.ToolKeys(data).current()  # the tool's key pair exists from now on
    print(f"已注册平台 {p.id}：{p.name}（{p.issuer}，client id {p.client_id}，部署 {', '.join(p.deployments)}）")
    return 0


def _list_platforms(args: argparse.Namespace, db, data: Path) -> int:
    """A line per registered platform (its number is what ``remove`` and ``bind`` take)."""
    from ..service.lti import registry

    platforms = registry.all_platforms(db)
    if not platforms:
        print("还没有注册课程平台（autograder lti add-platform）")
    for p in platforms:
        print(f"{p.id}\t{p.name}\t{p.issuer}\tclient id {p.client_id}\t部署 {', '.join(p.deployments)}")
    return 0


def _remove_platform(args: argparse.Namespace, db, data: Path) -> int:
    """Delete a platform's registration; an unknown number is an error, not a silent no-op."""
    from ..service.lti import registry

    if not registry.remove(db, args.platform_id):
        raise CannotLti(f"没有编号为 {args.platform_id} 的平台（autograder lti list）")
    print(f"已删除平台 {args.platform_id}")
    return 0


def _rotate_key(args: argparse.Namespace, db, data: Path) -> int:
    """A new signing key; the old public key stays published a while, for tokens the platforms still hold."""
    from ..service.lti import keys

    new = keys.rotate(data)
    print(f"新的签名密钥 {new.kid} 已启用；旧公钥在 {keys.KEEP_SECONDS // 60} 分钟内仍在公钥集中")
    return 0


def _info(args: argparse.Namespace, db, data: Path) -> int:
    """What an LMS administrator enters for the tool at ``--url``: its endpoints, or Canvas's JSON configuration."""
    from ..service.lti import keys, registry
    from ..service.web.lti import canvas_config

    base = registry.check_url("--url", args.url.rstrip("/"))
    keys.ToolKeys(data).current()
    if args.canvas_json:
        print(json.dumps(canvas_config(base), ensure_ascii=False, indent=2))
    else:
        for label, path in (("登录发起地址（OIDC login / initiation URL）", "/lti/login"),
                            ("重定向地址与目标链接（redirect URI / target link URI）", "/lti/launch"),
                            ("公钥集（public keyset / JWKS URL）", "/lti/jwks.json"),
                            ("Canvas 配置（JSON URL）", "/lti/config/canvas.json")):
            print(f"{label}\t{base}{path}")
    return 0


def _bind_or_unbind(args: argparse.Namespace, db, data: Path) -> int:
    """``bind``: an LMS course bound to a course of the service, in effect at once; ``unbind``: the binding (or a
    request for one) removed.  Both name the LMS course by platform, deployment and context."""
    from ..service import courses
    from ..service.lti import bindings, registry

    platform = registry.get(db, args.platform)
    if platform is None:
        raise CannotLti(f"没有编号为 {args.platform} 的平台（autograder lti list）")
    key = (platform.id, _deployment(platform, args.deployment_id), args.context)
    if args.lti_command == "unbind":
        if not bindings.unbind(db, key):
            raise CannotLti("没有这项绑定（autograder lti bindings）")
        print(f"已解除课程平台课程 {args.context} 的绑定")
    else:
        course = courses.pick(db, args.course)
        bindings.bind(db, *key, course.id, by="管理员（命令行）", roster_authority=args.roster_authority, title=args.title)
        print(f"已把平台 {platform.id} 上的课程 {args.context} 绑定到课程 {course.id}（{course.title}）"
              + ("；名单可信" if args.roster_authority else "；学生首次打开时用访问码确认名单账号"))
    return 0


def _list_bindings(args: argparse.Namespace, db, data: Path) -> int:
    """A line per binding and per request waiting for an administrator's confirmation."""
    from ..service.lti import bindings

    found = bindings.everything(db)
    if not found:
        print("还没有绑定（autograder lti bind，或教师从课程平台申请）")
    for b in found:
        print(f"{b.course_id}\t平台 {b.platform_id}\t部署 {b.deployment_id}\t课程平台课程 {b.context_id}\t"
              f"{b.context_title}\t{'已生效' if b.active else '等待确认'}\t{'名单可信' if b.roster_authority else '访问码确认'}\t"
              f"申请人 {b.requested_by}")
    return 0


def _sync(args: argparse.Namespace, site, data: Path) -> int:
    """NRPS for the bound LMS courses of ``--course`` (every course when none is given); 1 if one failed."""
    import httpx

    from ..service import courses
    from ..service.database import Database
    from ..service.lti import bindings, keys, nrps
    from ..service.lti.ags import AgsError, Tokens

    chosen = [courses.pick(site, args.course)] if args.course else courses.all_courses(site)
    failed = 0
    with httpx.Client(timeout=20.0) as http:
        tokens = Tokens(keys.ToolKeys(data), http)
        for course in chosen:
            db = Database(course.db_url(site.url, data))
            try:
                for b in bindings.of_course(site, course.id):
                    if not b.active:
                        continue
                    try:
                        r = nrps.sync(db, site, tokens, http, b)
                        print(f"{course.id} ← {b.context_title or b.context_id}：{r.members} 名学生，新加入 {r.enrolled}，新退课 {r.departed}")
                    except AgsError as exc:
                        failed += 1
                        print(f"{course.id} ← {b.context_title or b.context_id}：同步失败：{exc.message}", file=sys.stderr)
            finally:
                db.dispose()
    return 1 if failed else 0


#: The commands on the site's database: name -> its step (args, site database, data folder) -> exit status.
_SITE_COMMANDS = {"add-platform": _add_platform, "list": _list_platforms, "remove": _remove_platform,
                  "rotate-key": _rotate_key, "info": _info, "bind": _bind_or_unbind, "unbind": _bind_or_unbind,
                  "bindings": _list_bindings, "sync": _sync}


def main(args: argparse.Namespace) -> int:
    try:
        return lti(args)
    except CannotLti as exc:
        print(f"autograder: {exc}", file=sys.stderr)
        return 2
