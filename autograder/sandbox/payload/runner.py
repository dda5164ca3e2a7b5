"""Runs INSIDE the sandbox: executes a student's code cells, then serves calls as JSON lines.

This folder (``autograder/sandbox/payload/``) is the whole sandbox payload: it is bind-mounted
read-only as ``/opt/autograder`` and started as ``python -I /opt/autograder/runner.py``.  Its
modules import only the standard library, NumPy and each other (:mod:`wire`, :mod:`zygote`,
:mod:`isolation`, :mod:`seccomp`); nothing of the trusted grader is inside the sandbox
(``tests/test_layers.py`` enforces it).  Protocol (one JSON object per line):

* trusted -> runner, first line: ``{"op": "setup", "cells": [{"index", "source"}], "cell_timeout"}``;
  the runner answers ``cell_start``/``cell_done`` for each cell, then ``ready``.
* ``{"op": "call", "id", "fn", "args", "kwargs"}`` -> ``{"op": "result", "id", "ok", "value" | "exc"}``.
* ``{"op": "run_test", "id", "fn", "impls"}`` calls the student's test function with
  proxy functions; every proxy call is forwarded as ``impl_call`` and answered by
  ``impl_result`` from the trusted side, which runs the implementation under test.
* With the sandbox (zygote mode): the first line is ``{"op": "zygote"}``.
  The runner answers ``zygote_ready`` BEFORE any student code has run, then for every
  ``{"op": "fork"}`` forks a child, which answers ``forked``, reads the run's line
  ``{"op": "run", "notebook", "size", "scratch_bytes", "keep"}`` and the notebook's bytes (the
  zygote never sees a submission), and gets new user, mount, IPC, network and UTS namespaces,
  a new session keyring, fresh tmpfs on /tmp, /dev/shm and /home/student (with a copy of the
  notebook) and no capabilities, and then behaves exactly like a fresh runner (``setup``, calls,
  ``{"op": "end"}`` ends it); a child that cannot isolate itself answers ``isolate_error`` and exits
  without running anything.  The zygote waits for the child and answers ``child_exit``; the
  grader kills the rest of the run (its cgroups) and checks from outside that it is gone.
  Student code never runs in the zygote, so nothing of one run (memory, files, IPC objects, keys,
  processes) reaches the next one, also when the next run is another student's (a warm sandbox).

The cells arrive already transformed by IPython's own input transformer (in the trusted prepare
step), so magics and shell escapes are calls of ``get_ipython()``; the namespace provides no-op
stand-ins for ``get_ipython()`` and ``display()``, as a notebook kernel would provide real ones.

Nothing this process sends is trusted: the grader only accepts plain data and
compares it outside.  Student output goes nowhere (fds 1 and 2 point to /dev/null).
"""

import builtins
import io
import os
import signal
import sys
import traceback
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wire  # noqa: E402
import zygote  # noqa: E402

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


class _IPythonStandIn:
    """What ``get_ipython()`` returns in the sandbox: magics, shell commands and display do nothing,
    except that the magics that run Python in the notebook's namespace (``%time``, ``%timeit`` once,
    ``%%time``, ``%%capture``) run it there, as a kernel would."""

    _RUN_BODY = ("time", "capture")

    def __init__(self, ns):
        self._ns = ns

    def run_line_magic(self, name="", line="", *args, **kwargs):
        if name == "time" or (name == "timeit" and not line.lstrip().startswith("-")):
            # "%time NAME = f(x)" binds NAME in a kernel: run the statement (once) in the notebook's namespace
            exec(compile(line, "<单元>", "exec"), self._ns)  # noqa: S102 - this is the sandbox
        return None

    def run_cell_magic(self, name, line="", body="", *args, **kwargs):
        if name in self._RUN_BODY:
            exec(compile(body, "<单元>", "exec"), self._ns)  # noqa: S102 - this is the sandbox
        return None

    def system(self, *args, **kwargs):
        return None

    def getoutput(self, *args, **kwargs):
        return []

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


def _display(*objs, **kwargs):
    """No-op stand-in for IPython's ``display`` (output goes nowhere in the sandbox)."""
    return None


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


class _Pipe:
    """The runner's end of the protocol: lines out, lines and raw bytes in; the runner ends when the grader's end of
    the pipe is closed."""

    def __init__(self, inp, out):
        self.inp, self.out = inp, out

    def send(self, msg):
        self.out.write(wire.dumps(msg))

    def recv(self):
        line = self.inp.readline()
        if not line:
            os._exit(0)
        return wire.loads(line)

    def read(self, size):
        """Exactly ``size`` raw bytes that follow a line (the notebook of a run)."""
        chunks = []
        while size > 0:
            chunk = self.inp.read(min(size, 1 << 20))
            if not chunk:
                os._exit(0)
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)

    def buffered(self):
        """Read ahead from now on.  The zygote reads its lines a byte at a time (what it reads past a line would be
        inherited by its next child, and the bytes after "fork" are the child's); a run's child is the pipe's only
        reader until it exits (the grader writes to its zygote again only after it is gone), so it reads buffered:
        unbuffered, every byte of a call's arguments was a system call.  Whatever it reads ahead dies with it; the
        grader resynchronises the zygote after every run."""
        self.inp = io.BufferedReader(self.inp, buffer_size=1 << 16)


def _namespace():
    """The cells' namespace: a fresh module registered as ``__main__``, as in a Jupyter kernel (functions the cells
    define can be pickled by reference: ``multiprocessing.Pool.map`` with a notebook function works)."""
    main_module = types.ModuleType("__main__")
    main_module.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main_module
    ns = main_module.__dict__
    shell = _IPythonStandIn(ns)
    ns["get_ipython"] = lambda: shell
    ns["display"] = _display
    return ns


def _run_cells(setup, ns, send):
    """Run the cells of ``setup`` in ``ns``, each under its CPU-time limit and a wall-clock backstop for a cell that
    only waits; ``cell_start``/``cell_done`` for each, then ``ready``."""
    for cell in setup["cells"]:
        send({"op": "cell_start", "index": cell["index"]})
        error = None
        try:
            signal.setitimer(signal.ITIMER_PROF, float(setup["cell_timeout"]))
            signal.setitimer(signal.ITIMER_REAL, float(setup.get("cell_wall", setup["cell_timeout"])))
            index = int(cell["index"])  # as JupyterLab counts (1-based, Markdown cells included)
            code = compile(cell["source"], f"<第 {index + 1} 个单元>" if index >= 0 else "<恢复的带锁单元>", "exec")
            exec(code, ns)  # noqa: S102 - this is the sandbox
        except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt, timeouts ...
            error = _exc_info(exc)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.setitimer(signal.ITIMER_PROF, 0)
        send({"op": "cell_done", "index": cell["index"], "error": error})
    send({"op": "ready"})


def _proxy(pipe, name, call_id):
    """A planted implementation ``name`` as the student's test sees it: each call is answered by the grader."""
    def proxy(*args, **kwargs):
        pipe.send({"op": "impl_call", "id": call_id, "fn": name,
                   "args": [wire.encode(a) for a in args], "kwargs": {str(k): wire.encode(v) for k, v in kwargs.items()}})
        reply = pipe.recv()
        if reply.get("ok"):
            return wire.decode(reply["value"], wire.namedtuple_factory)
        exc_type = UndefinedMetricError if reply.get("exc_type") == "UndefinedMetricError" else ValueError
        raise exc_type(reply.get("msg", ""))

    proxy.__name__ = name
    return proxy


def _serve_calls(ns, pipe):
    """Answer ``call`` and ``run_test`` until ``end`` (or the grader's end of the pipe closes)."""
    while True:
        msg = pipe.recv()
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
                value = fn(*[_proxy(pipe, name, call_id) for name in msg["impls"]])
                value = None
            elif op == "end":
                os._exit(0)
            else:
                continue
            try:
                encoded = wire.encode(value)
            except BaseException as exc:  # noqa: BLE001
                encoded = {"t": "other", "type": "编码失败", "repr": str(exc)[:200]}
            pipe.send({"op": "result", "id": call_id, "ok": True, "value": encoded})
        except BaseException as exc:  # noqa: BLE001
            pipe.send({"op": "result", "id": call_id, "ok": False, "exc": _exc_info(exc)})


def main():
    pipe = _Pipe(*_open_protocol())
    sys.stdout = sys.stderr = _Sink()
    sys.stdin = None
    signal.signal(signal.SIGALRM, _alarm)
    signal.signal(signal.SIGPROF, _alarm)
    setup = pipe.recv()
    if setup.get("op") == "zygote":  # the sandbox; without it (--no-sandbox) the first line is "setup"
        zygote.serve(setup, pipe.send, pipe.recv, pipe.read)  # returns in a fresh child only, isolated and locked down
        setup = None
    pipe.buffered()
    if setup is None:
        setup = pipe.recv()
    ns = _namespace()
    _run_cells(setup, ns, pipe.send)
    _serve_calls(ns, pipe)


if __name__ == "__main__":
    main()
