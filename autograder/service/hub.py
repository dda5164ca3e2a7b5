"""JupyterHub as a way into the courses: who a hub user is in each course, and where its assignments come from.

The service is registered once in one JupyterHub, as a service of its own (an OAuth client, ``service-<name>``);
``DATA/jupyterhub.yml`` says which (:func:`load_site`)::

    url: https://hub.example.edu            # the hub's public address (with its base_url, if any)
    api_url: http://10.0.0.5:8081/hub/api   # optional: the hub's API as this service reaches it (default url + /hub/api)
    service: grader                         # its name in the hub's c.JupyterHub.services
    token_file: jupyterhub.token            # the service's api_token (mode 0600; relative to DATA); else the
                                            # environment's JUPYTERHUB_API_TOKEN (a service the hub starts)

Each course opts in with ``hub:`` in its ``course.yml`` (:func:`parse_course_hub`)::

    hub:
      match: student_id       # the roster column a hub username is: student_id (default) or email
      staff:                  # hub usernames of the course's instructors and TAs -> their account here
        wang: 王老师
        lisi: 李四
      repository: https://github.com/example-org/binary-eval-release   # nbgitpuller's source of the notebooks
      branch: main
      folder: exercises       # <folder>/<assignment>/<notebook>.ipynb in the repository

Who a hub user is in a course is decided here, from the course's own accounts (:func:`account_for`): a student
whose roster column equals the username (case-insensitively: hubs lower-case their usernames), or the staff
account the course names for it, with that account's role.  The hub's groups and admin flag grant nothing, and a
user matches only in the courses whose roster has them.  Which assignment an uploaded notebook is, and in which
course, is decided from the file and the course's records (:func:`targets`), never from metadata a student can
edit.  The HTTP side - the OAuth flow, the hub's API, the upload from JupyterLab - is :mod:`.web.hub`'s.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import re
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping
from urllib.parse import urlencode, urlsplit

import sqlalchemy as sa
import yaml

from .codes import Account
from .database import ACCOUNTS, Database
from .errors import Forbidden
from .roles import Role
from .uploads import NotebookRules, ReadNotebook, belongs

SITE_FILE = "jupyterhub.yml"
MATCH = {"student_id": "学号", "email": "邮箱"}  # roster column -> its name on the pages
SERVICE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
BRANCH = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,99}")
FOLDER = re.compile(r"[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*")
MAX_USERNAME = 255
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class HubSettingError(ValueError):
    """``jupyterhub.yml`` or a course's ``hub:`` is not valid (Chinese message naming the key)."""


class NotOnRoster(Forbidden):
    """A hub user with no account in the course (or a name that matches two: refused rather than guessed)."""


# ---- the site's hub (DATA/jupyterhub.yml)


@dataclass(frozen=True)
class HubSite:
    """The JupyterHub the service is registered in, and its credentials there."""

    url: str  # public, without a trailing slash
    api_url: str  # without a trailing slash
    service: str
    token: str

    @property
    def client_id(self) -> str:
        """The service's OAuth client id (JupyterHub's rule: ``service-<name>``)."""
        return f"service-{self.service}"

    @property
    def scope(self) -> str:
        """The scope a token must carry to speak to this service."""
        return f"access:services!service={self.service}"

    @property
    def authorize_url(self) -> str:
        return f"{self.url}/hub/api/oauth2/authorize"

    @property
    def token_url(self) -> str:
        return f"{self.api_url}/oauth2/token"

    @property
    def user_url(self) -> str:
        return f"{self.api_url}/user"

    def login_url(self) -> str:
        """Where a person signs in to the hub itself."""
        return f"{self.url}/hub/login"


def _url(value: Any, key: str, where: str, schemes: tuple[str, ...] = ("https",)) -> str:
    if not isinstance(value, str) or not value.strip():
        raise HubSettingError(f"{where}：{key} 应为网址，而不是 {value!r}")
    parts = urlsplit(value.strip())
    loopback = parts.scheme == "http" and parts.hostname in LOOPBACK
    if (parts.scheme not in schemes and not loopback) or (parts.scheme != "file" and not parts.hostname) \
            or parts.query or parts.fragment:
        allowed = "、".join(f"{s}://" for s in schemes)
        raise HubSettingError(f"{where}：{key} {value[:200]!r} 不是合法的地址（{allowed}；http:// 只用于本机回环地址上的试用）")
    return value.strip().rstrip("/")


def _mapping(data: Any, allowed: set[str], where: str) -> dict:
    if not isinstance(data, dict):
        raise HubSettingError(f"{where}：应为键值映射")
    unknown = sorted(str(k) for k in set(data) - allowed)
    if unknown:
        raise HubSettingError(f"{where}：未知的键 {', '.join(unknown)}（可用：{', '.join(sorted(allowed))}）")
    return data


def parse_site(data: Any, data_root: Path, environ: Mapping[str, str], where: str = SITE_FILE) -> HubSite:
    """A :class:`HubSite` from the parsed ``jupyterhub.yml``."""
    data = _mapping(data, {"url", "api_url", "service", "token_file"}, where)
    url = _url(data.get("url"), "url", where)
    api_url = _url(data["api_url"], "api_url", where, ("https", "http")) if data.get("api_url") else f"{url}/hub/api"
    service = data.get("service")
    if not isinstance(service, str) or not SERVICE_NAME.fullmatch(service):
        raise HubSettingError(f"{where}：service 应为 JupyterHub 配置中本服务的名字（c.JupyterHub.services 的 name），而不是 {service!r}")
    if data.get("token_file"):
        path = Path(str(data["token_file"]))
        path = path if path.is_absolute() else data_root / path
        try:
            mode = path.stat().st_mode
            token = path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise HubSettingError(f"{where}：无法读取 token_file {path}：{exc.strerror}") from None
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise HubSettingError(f"{where}：token_file {path} 只能由服务的用户读取（chmod 600）")
    else:
        token = environ.get("JUPYTERHUB_API_TOKEN", "").strip()
    if len(token) < 16:
        raise HubSettingError(f"{where}：缺少本服务在 JupyterHub 中的 api_token（token_file，或环境变量 JUPYTERHUB_API_TOKEN），"
                              "或它短于 16 个字符")
    return HubSite(url, api_url.rstrip("/"), service, token)


def load_site(data_root: Path, environ: Mapping[str, str] = os.environ) -> HubSite | None:
    """The hub of ``DATA/jupyterhub.yml`` (None: the service is not registered in a hub)."""
    path = data_root / SITE_FILE
    if not path.is_file():
        return None
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise HubSettingError(f"{path} 不是可读的 YAML：{exc}") from None
    return parse_site(data, data_root, environ, str(path))


# ---- a course's hub settings (course.yml: hub)


@dataclass(frozen=True)
class HubCourse:
    """How a course meets the hub: the roster column of a username, its staff's usernames, the notebooks' source."""

    match: str = "student_id"
    staff: tuple[tuple[str, str], ...] = ()  # (hub username, lower-cased; the login of a staff account here)
    repository: str = ""  # nbgitpuller's source ("" : no links)
    branch: str = "main"
    folder: str = "exercises"

    def staff_login(self, username: str) -> str | None:
        return dict(self.staff).get(username.lower())


def parse_course_hub(data: Any, keys: set[str], where: str = "course.yml: hub") -> HubCourse:
    """The :class:`HubCourse` of a course's ``hub:`` (``{}`` is every default: usernames are student ids); ``keys``:
    the keys it may have (``course.yml``'s table, :data:`.policy.KEYS`)."""
    data = _mapping(data, keys, where)
    match = data.get("match", "student_id")
    if match not in MATCH:
        raise HubSettingError(f"{where}.match：应为 {' / '.join(MATCH)} 之一（名单中与 JupyterHub 用户名相同的一列），而不是 {match!r}")
    staff = data.get("staff") or {}
    if not isinstance(staff, dict) or not all(isinstance(k, str) and isinstance(v, str) and k.strip() and v.strip()
                                              for k, v in staff.items()):
        raise HubSettingError(f"{where}.staff：应为“JupyterHub 用户名: 本课程教师或助教的名字”的映射")
    users = [k.strip().lower() for k in staff]
    if len(set(users)) != len(users):
        raise HubSettingError(f"{where}.staff：同一个 JupyterHub 用户名（不区分大小写）出现了两次")
    repository = _url(data["repository"], "repository", f"{where}", ("https", "file")) if data.get("repository") else ""
    branch = str(data.get("branch", "main"))
    if not BRANCH.fullmatch(branch) or ".." in branch:
        raise HubSettingError(f"{where}.branch：{branch[:100]!r} 不是合法的分支名")
    folder = str(data.get("folder", "exercises")).strip("/")
    if folder and (not FOLDER.fullmatch(folder) or ".." in folder.split("/")):
        raise HubSettingError(f"{where}.folder：{folder[:100]!r} 应为仓库中的相对路径（不含 ..）")
    return HubCourse(match, tuple(sorted(zip(users, (v.strip() for v in staff.values())))), repository, branch, folder)


# ---- who a hub user is in a course


def _account(row) -> Account:
    return Account(row.id, row.role, row.login, row.name, row.code_id)


def account_for(db: Database, setting: HubCourse, username: str, course_title: str) -> Account:
    """The account of hub user ``username`` in a course (``db``: its database): the staff account its ``staff``
    names, else the one student whose ``match`` column equals the username (case-insensitively).
    :class:`NotOnRoster` when there is none, or when two students match (refused, never guessed)."""
    if not username or len(username) > MAX_USERNAME:
        raise NotOnRoster("JupyterHub 用户名为空或过长")
    columns = (ACCOUNTS.c.id, ACCOUNTS.c.role, ACCOUNTS.c.login, ACCOUNTS.c.name, ACCOUNTS.c.code_id)
    staff = setting.staff_login(username)
    with db.read() as con:
        if staff is not None:
            rows = con.execute(sa.select(*columns).where(ACCOUNTS.c.login == staff)
                               .where(ACCOUNTS.c.role.in_([Role.INSTRUCTOR.value, Role.TA.value]))).all()
            if len(rows) != 1:
                raise NotOnRoster(f"课程“{course_title}”的设置把 JupyterHub 用户 {username} 对应到教师或助教“{staff}”，"
                                  "但课程中没有这个账号：请联系课程的教师（autograder roster instructor）")
            return _account(rows[0])
        column = ACCOUNTS.c.login if setting.match == "student_id" else ACCOUNTS.c.email
        rows = con.execute(sa.select(*columns).where(ACCOUNTS.c.role == Role.STUDENT.value)
                           .where(sa.func.lower(column) == username.lower()).limit(2)).all()
    if len(rows) == 1:
        return _account(rows[0])
    what = MATCH[setting.match]
    if rows:
        raise NotOnRoster(f"课程“{course_title}”的名单中有两名学生的{what}都与 JupyterHub 用户名 {username} 相同"
                          "（不区分大小写），无法确定是谁：请联系任课教师")
    raise NotOnRoster(f"JupyterHub 用户 {username} 不在课程“{course_title}”的名单上（名单中没有{what}为 {username} 的学生）。"
                      "如果你选了这门课，请联系任课教师把你加入名单。")


# ---- which assignment a notebook is, in which course


@dataclass(frozen=True)
class Enrolment:
    """A course a hub user is a student of: its id, the account, and its open assignments' notebook rules."""

    course_id: str
    account: Account
    rules: Mapping[str, NotebookRules]


@dataclass(frozen=True)
class Target:
    """Where a notebook goes: the course, the student's account there, the assignment."""

    course_id: str
    account: Account
    assignment: str


def targets(read: ReadNotebook, enrolments: list[Enrolment], course_id: str | None = None) -> list[Target]:
    """Every open assignment, in the courses of ``enrolments`` (only ``course_id``'s when given), whose notebook
    ``read`` is (:func:`.uploads.belongs`: its answer cells, or its functions)."""
    return [Target(e.course_id, e.account, name) for e in enrolments if course_id in (None, e.course_id)
            for name, rules in e.rules.items() if belongs(read, rules)]


# ---- the links that open an assignment in a student's JupyterLab (nbgitpuller)


def pull_link(hub_url: str, setting: HubCourse, course_id: str, assignment: str, notebook: str) -> str | None:
    """The nbgitpuller link that copies the course's notebooks into ``~/<course id>/`` of the user's server (never
    overwriting the student's changes: nbgitpuller merges) and opens ``assignment``'s notebook in JupyterLab;
    None when the course names no repository."""
    if not setting.repository:
        return None
    path = "/".join(p for p in (setting.folder, assignment, f"{notebook}.ipynb") if p)
    query = {"repo": setting.repository, "branch": setting.branch, "urlpath": f"lab/tree/{course_id}/{path}",
             "targetpath": course_id}
    return f"{hub_url}/hub/user-redirect/git-pull?{urlencode(query)}"


#: The deep-linking page's value of a hub link (``hub:<assignment>``), beside the plain assignment names.
CHOICE = "hub:"


def deep_link_choices(hub_url: str | None, setting: HubCourse | None, course_id: str, assignments: dict[str, tuple[str, str]],
                      accept_types: Any) -> list[dict[str, str]]:
    """The hub links a deep-linking request may add (``assignments``: name -> (title, notebook)): one per
    assignment, when the site has a hub, the course a repository, and the request accepts plain links."""
    if hub_url is None or setting is None or (isinstance(accept_types, list) and "link" not in accept_types):
        return []
    links = [(n, t, pull_link(hub_url, setting, course_id, n, nb)) for n, (t, nb) in assignments.items()]
    return [{"value": CHOICE + n, "title": t, "url": url} for n, t, url in links if url]


# ---- small signed values: the OAuth state cookie, the status ticket of a submission made from JupyterLab


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _key(secret: bytes, purpose: str) -> bytes:
    return hashlib.sha256(f"autograder-hub-{purpose}".encode() + secret).digest()


def sign(secret: bytes, purpose: str, payload: dict[str, Any], seconds: float, now: float | None = None) -> str:
    """``payload`` with an expiry, HMAC-signed for ``purpose`` (a value read back only by :func:`unsign`)."""
    body = json.dumps({**payload, "exp": (now or time.time()) + seconds}, separators=(",", ":")).encode()
    return f"{b64url(body)}.{b64url(hmac.new(_key(secret, purpose), body, hashlib.sha256).digest())}"


def unsign(secret: bytes, purpose: str, value: str | None, now: float | None = None) -> dict[str, Any] | None:
    """The payload of a value :func:`sign` made for ``purpose``; None if it is missing, forged or expired."""
    if not value or len(value) > 4096 or value.count(".") != 1:
        return None
    body, mac = value.split(".")
    try:
        raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
        given = base64.urlsafe_b64decode(mac + "=" * (-len(mac) % 4))
    except (ValueError, TypeError):
        return None
    if not hmac.compare_digest(given, hmac.new(_key(secret, purpose), raw, hashlib.sha256).digest()):
        return None
    try:
        payload = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(payload, dict) or not isinstance(payload.get("exp"), (int, float)) or payload["exp"] < (now or time.time()):
        return None
    return payload
