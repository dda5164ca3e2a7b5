"""``autograder lti``: register LMS platforms, show the tool's endpoints, rotate its key, sync, passback status."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path



class CannotLti(RuntimeError):
    """The lti command cannot do what was asked (message in Chinese)."""


def add_parser(sub) -> None:
    p = sub.add_parser("lti", help="LTI 1.3：在课程平台（Canvas、Moodle 等）中使用本服务")
    ls = p.add_subparsers(dest="lti_command", required=True)

    def common(q):
        q.add_argument("--data", required=True, help="服务的数据目录")
        q.add_argument("--db", help="成绩库的 SQLAlchemy URL（默认 sqlite:///DATA/gradebook.db）")

    add = ls.add_parser("add-platform", help="注册一个课程平台")
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
    common(ls.add_parser("sync", help="从课程平台同步每门课的名单（NRPS；可每天由 cron 运行）"))
    common(ls.add_parser("passback", help="成绩回传队列：待回传、已回传、失败的数量"))
    retry = ls.add_parser("retry", help="把回传失败的成绩重新放回队列")
    common(retry)


def lti(args: argparse.Namespace) -> int:
    # imported here: the parser is built on every ``autograder`` start, also by the grading workers
    from ..service.lti import keys, passback, registry
    from ..service.web.lti import canvas_config
    from .roster import database

    data = Path(args.data).resolve()
    db, _ = database(args)
    try:
        if args.lti_command == "add-platform":
            p = registry.add(db, name=args.name, issuer=args.issuer, client_id=args.client_id, deployments=args.deployment_id,
                             auth_login_url=args.auth_login_url, auth_token_url=args.auth_token_url, jwks_url=args.jwks_url,
                             auth_audience=args.auth_audience)
            keys.ToolKeys(data).current()  # the tool's key pair exists from now on
            print(f"已注册平台 {p.id}：{p.name}（{p.issuer}，client id {p.client_id}，部署 {', '.join(p.deployments)}）")
        elif args.lti_command == "list":
            platforms = registry.all_platforms(db)
            if not platforms:
                print("还没有注册课程平台（autograder lti add-platform）")
            for p in platforms:
                print(f"{p.id}\t{p.name}\t{p.issuer}\tclient id {p.client_id}\t部署 {', '.join(p.deployments)}")
        elif args.lti_command == "remove":
            if not registry.remove(db, args.platform_id):
                raise CannotLti(f"没有编号为 {args.platform_id} 的平台（autograder lti list）")
            print(f"已删除平台 {args.platform_id}")
        elif args.lti_command == "rotate-key":
            new = keys.rotate(data)
            print(f"新的签名密钥 {new.kid} 已启用；旧公钥在 {keys.KEEP_SECONDS // 60} 分钟内仍在公钥集中")
        elif args.lti_command == "info":
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
        elif args.lti_command == "sync":
            import httpx

            from ..service.lti import nrps, status
            from ..service.lti.ags import AgsError, Tokens

            failed = 0
            with httpx.Client(timeout=20.0) as http:
                tokens = Tokens(keys.ToolKeys(data), http)
                for c in status.courses(db):
                    if not c.can_sync:
                        continue
                    try:
                        r = nrps.sync(db, tokens, http, c.platform_id, c.context_id)
                        print(f"{c.title}（{c.platform}）：{r.members} 名学生，新加入 {r.enrolled}，新退课 {r.departed}")
                    except AgsError as exc:
                        failed += 1
                        print(f"{c.title}（{c.platform}）：同步失败：{exc.message}", file=sys.stderr)
            return 1 if failed else 0
        elif args.lti_command == "passback":
            s = passback.summary(db)
            print(f"待回传 {s['pending']}，已回传 {s['sent']}，失败 {s['failed']}")
        elif args.lti_command == "retry":
            print(f"已重新排队 {passback.retry_failed(db)} 条回传失败的成绩")
    except registry.RegistryError as exc:
        raise CannotLti(str(exc)) from None
    finally:
        db.dispose()
    return 0


def main(args: argparse.Namespace) -> int:
    try:
        return lti(args)
    except CannotLti as exc:
        print(f"autograder: {exc}", file=sys.stderr)
        return 2
