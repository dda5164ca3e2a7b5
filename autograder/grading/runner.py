"""Runs INSIDE the sandbox: executes a student's code cells, then serves calls as JSON lines.

Started as ``python -I runner.py``; it imports only the standard library, NumPy
and :mod:`wire` (mounted next to it).  Protocol (one JSON object per line):

* trusted -> runner, first line: ``{"op": "setup", "cells": [{"index", "source"}], "cell_timeout"}``;
  the runner answers ``cell_start``/``cell_done`` for each cell, then ``ready``.
* ``{"op": "call", "id", "fn", "args", "kwargs"}`` -> ``{"op": "result", "id", "ok", "value" | "exc"}``.
* ``{"op": "run_test", "id", "fn", "impls"}`` calls the student's test function with
  proxy functions; every proxy call is forwarded as ``impl_call`` and answered by
  ``impl_result`` from the trusted side, which runs the implementation under test.

Nothing this process sends is trusted: the grader only accepts plain data and
compares it outside.  Student output goes nowhere (fds 1 and 2 point to /dev/null).
"""

import builtins
import os
import re
import signal
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wire  # noqa: E402

_MAGIC = re.compile(r"^(\s*)([%!].*)$")
_MAX_TB = 4000


def _open_protocol():
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    inp = os.fdopen(os.dup(0), "rb", buffering=0)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    return inp, out


class _Sink:
    """Stand-in for sys.stdout/stderr: discards everything."""

    def write(self, s):
        return len(s) if isinstance(s, str) else 0

    def flush(self):
        pass

    def isatty(self):
        return False


def _strip_magics(source):
    lines = []
    for line in source.split("\n"):
        m = _MAGIC.match(line)
        lines.append(f"{m.group(1)}pass  # IPython magic ignored" if m else line)
    return "\n".join(lines)


def _exc_info(exc):
    tb_lines = []
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith("<")]
    if frames:
        tb_lines = traceback.format_list(frames[-6:])
    try:
        msg = str(exc)[:1000]
    except BaseException:  # noqa: BLE001
        msg = "<无法显示的异常信息>"
    text = "".join(tb_lines) + f"{type(exc).__name__}: {msg}"
    return {"type": type(exc).__name__[:100], "mro": [c.__name__ for c in type(exc).__mro__][:20],
            "msg": msg, "tb": text[-_MAX_TB:]}


class _CellTimeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _CellTimeout("单元执行超时")


class UndefinedMetricError(ValueError, ZeroDivisionError):
    """Raised by a proxy when the implementation under test raised it."""


def main():
    inp, out = _open_protocol()
    sys.stdout = sys.stderr = _Sink()
    sys.stdin = None

    def send(msg):
        out.write(wire.dumps(msg))

    def recv():
        line = inp.readline()
        if not line:
            os._exit(0)
        return wire.loads(line)

    signal.signal(signal.SIGALRM, _alarm)
    setup = recv()
    ns = {"__name__": "__main__", "__builtins__": builtins}
    for cell in setup["cells"]:
        send({"op": "cell_start", "index": cell["index"]})
        error = None
        try:
            signal.setitimer(signal.ITIMER_REAL, float(setup["cell_timeout"]))
            code = compile(_strip_magics(cell["source"]), f"<单元 {cell['index']}>", "exec")
            exec(code, ns)  # noqa: S102 - this is the sandbox
        except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt, timeouts ...
            error = _exc_info(exc)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        send({"op": "cell_done", "index": cell["index"], "error": error})
    send({"op": "ready", "defined": sorted(k for k, v in ns.items() if callable(v) and isinstance(k, str))[:500]})

    def make_proxy(name, call_id):
        def proxy(*args, **kwargs):
            send({"op": "impl_call", "id": call_id, "fn": name,
                  "args": [wire.encode(a) for a in args], "kwargs": {str(k): wire.encode(v) for k, v in kwargs.items()}})
            reply = recv()
            if reply.get("ok"):
                return wire.decode(reply["value"], wire.namedtuple_factory)
            exc_type = UndefinedMetricError if reply.get("exc_type") == "UndefinedMetricError" else ValueError
            raise exc_type(reply.get("msg", ""))

        proxy.__name__ = name
        return proxy

    while True:
        msg = recv()
        op = msg.get("op")
        call_id = msg.get("id")
        try:
            if op == "call":
                fn = ns.get(msg["fn"])
                if not callable(fn):
                    raise NameError(f"没有定义函数 {msg['fn']}")
                args = [wire.decode(a, wire.namedtuple_factory) for a in msg["args"]]
                kwargs = {k: wire.decode(v, wire.namedtuple_factory) for k, v in msg["kwargs"].items()}
                value = fn(*args, **kwargs)
            elif op == "run_test":
                fn = ns.get(msg["fn"])
                if not callable(fn):
                    raise NameError(f"没有定义测试函数 {msg['fn']}")
                value = fn(*[make_proxy(name, call_id) for name in msg["impls"]])
                value = None
            else:
                continue
            try:
                encoded = wire.encode(value)
            except BaseException as exc:  # noqa: BLE001
                encoded = {"t": "other", "type": "编码失败", "repr": str(exc)[:200]}
            send({"op": "result", "id": call_id, "ok": True, "value": encoded})
        except BaseException as exc:  # noqa: BLE001
            send({"op": "result", "id": call_id, "ok": False, "exc": _exc_info(exc)})


if __name__ == "__main__":
    main()
