"""Request bodies, read safely: a hard cap on every body, multipart and URL-encoded forms parsed in memory.

* :func:`read_capped` - the body, at most ``cap`` bytes: a declared ``Content-Length`` above the cap is refused
  before a byte is read, a streamed body as soon as it passes the cap; a compressed body (``Content-Encoding``)
  is refused unread - nothing is ever decompressed; and in time (:class:`BodyTime`): a body must arrive within
  a grace period plus its size at a minimum rate, and never take longer than a hard limit (408 otherwise);
* :func:`parse_form` - a ``multipart/form-data`` body (an upload): at most a few parts, each bounded;
* :func:`read_form` - a small ``application/x-www-form-urlencoded`` form (the pages' buttons).

Refusals are the core's errors (:class:`~autograder.service.errors.TooLarge`, ``Unsupported``, ``Invalid``),
mapped to statuses in :mod:`.errors` like every other.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from urllib.parse import parse_qs

from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.requests import Request

from ..errors import Invalid, ServiceError, TooLarge, TooSlow, Unsupported

MAX_PARTS = 4
MAX_FIELD = 4096
FORM_OVERHEAD = 64 << 10
FORM_LIMIT = 8192


@dataclass(frozen=True)
class BodyTime:
    """How long a body may take: ``grace`` seconds plus one second per ``min_rate`` bytes received so far,
    and never more than ``max_seconds`` in all.  A client slower than that is answered 408 and its body dropped."""

    grace: float = 10.0
    min_rate: float = 16 * 1024
    max_seconds: float = 120.0

    def allowed(self, received: int) -> float:
        """Seconds since the first read by which a body that has ``received`` bytes so far must go on."""
        return min(self.grace + received / self.min_rate, self.max_seconds)


def body_time(request) -> BodyTime:
    """The app's :class:`BodyTime` (``autograder serve --body-grace/--body-min-rate``), else the defaults."""
    return getattr(request.app.state, "body_time", None) or BodyTime()


async def read_capped(request, cap: int) -> bytes:
    """The request body, at most ``cap`` bytes (413 beyond, 415 if compressed, 400 if the length is malformed),
    arriving in time (:class:`BodyTime`, 408 when too slow)."""
    encoding = request.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        raise Unsupported("不接受压缩的请求体（Content-Encoding），请直接上传文件")
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit() or len(declared) > 15:
            raise Invalid("请求头 Content-Length 不合法")
        if int(declared) > cap:
            raise TooLarge(too_large(cap))
    limits, loop = body_time(request), asyncio.get_running_loop()
    start = loop.time()
    stream = request.stream().__aiter__()
    chunks, size = [], 0
    while True:
        left = start + limits.allowed(size) - loop.time()
        try:
            if left <= 0:
                raise TimeoutError
            chunk = await asyncio.wait_for(stream.__anext__(), left)
        except StopAsyncIteration:
            break
        except (TimeoutError, asyncio.TimeoutError):
            raise TooSlow(f"请求体传得太慢（{limits.grace:g} 秒内加每秒至少 {limits.min_rate / 1024:g} KiB），已放弃；"
                          "请检查网络后重新上传") from None
        size += len(chunk)
        if size > cap:
            raise TooLarge(too_large(cap))
        chunks.append(chunk)
    return b"".join(chunks)


def too_large(cap: int) -> str:
    return f"上传的内容太大：笔记本最大 {max(cap - FORM_OVERHEAD, 0) / (1 << 20):g} MiB（可先清除输出再上传）"


async def read_upload(request, limit: int) -> dict[str, "Part"]:
    """An upload's form (a notebook of at most ``limit`` bytes, in the field ``notebook``), read and parsed."""
    body = await read_capped(request, limit + FORM_OVERHEAD)
    form = parse_form(body, request.headers.get("content-type", ""), limit)
    del body
    part = form.get("notebook")
    if part is None or part.filename is None:
        raise Invalid("缺少文件：请在表单字段 notebook 中上传 .ipynb 文件")
    return form


@dataclass
class Part:
    name: str
    filename: str | None
    data: bytearray


def parse_form(body: bytes, content_type: str, file_limit: int) -> dict[str, Part]:
    """The parts of a ``multipart/form-data`` body, by field name (in memory; the body is already capped)."""
    kind, options = parse_options_header(content_type or "")
    boundary = options.get(b"boundary")
    if kind != b"multipart/form-data" or not boundary or len(boundary) > 200:
        raise Invalid("请以 multipart/form-data 表单上传，文件字段名为 notebook")
    parts: list[Part] = []
    headers: dict[bytes, bytes] = {}
    field: list[bytes] = [b"", b""]

    def on_part_begin() -> None:
        if len(parts) >= MAX_PARTS:
            raise Invalid("表单字段过多")
        headers.clear()

    def on_header_field(data: bytes, start: int, end: int) -> None:
        field[0] += data[start:end]

    def on_header_value(data: bytes, start: int, end: int) -> None:
        field[1] += data[start:end]

    def on_header_end() -> None:
        headers[field[0].strip().lower()] = field[1].strip()
        field[0] = field[1] = b""

    def on_headers_finished() -> None:
        disposition, opts = parse_options_header(headers.get(b"content-disposition", b""))
        if disposition != b"form-data" or b"name" not in opts:
            raise Invalid("表单格式不正确")
        name = _text(opts[b"name"], "表单字段名")
        filename = _text(opts[b"filename"], "文件名") if b"filename" in opts else None
        parts.append(Part(name, filename, bytearray()))

    def on_part_data(data: bytes, start: int, end: int) -> None:
        part = parts[-1]
        part.data += data[start:end]
        if len(part.data) > (file_limit if part.filename is not None else MAX_FIELD):
            raise TooLarge(too_large(file_limit + FORM_OVERHEAD))

    parser = MultipartParser(boundary, {"on_part_begin": on_part_begin, "on_header_field": on_header_field,
                                        "on_header_value": on_header_value, "on_header_end": on_header_end,
                                        "on_headers_finished": on_headers_finished, "on_part_data": on_part_data})
    try:
        parser.write(body)
        parser.finalize()
    except ServiceError:
        raise
    except Exception:  # noqa: BLE001 - python-multipart's parse errors: the body is not a form
        raise Invalid("表单格式不正确（multipart/form-data 无法解析）") from None
    out: dict[str, Part] = {}
    for part in parts:
        if part.name in out:
            raise Invalid(f"表单字段 {part.name} 出现了不止一次")
        out[part.name] = part
    return out


def _text(raw: bytes, what: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise Invalid(f"{what}不是 UTF-8 编码") from None


async def read_form(request: Request, limit: int = FORM_LIMIT) -> dict[str, str]:
    """A small ``application/x-www-form-urlencoded`` form (first value of each field)."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        raise Invalid("表单格式不正确")
    body = await read_capped(request, limit)
    try:
        fields = parse_qs(body.decode("utf-8"), keep_blank_values=True, max_num_fields=20)
    except (ValueError, UnicodeDecodeError):
        raise Invalid("表单格式不正确") from None
    return {k: v[0] for k, v in fields.items()}

