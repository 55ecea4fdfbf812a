"""The fork server of `fork_kit`: an interpreter that imports a program's modules once,
then forks a process of that program for each request.

Run by `fork_kit` as `python -c <runpy of this file> FD MODULE...`, with FD one end of a
socket pair. It imports each MODULE, then answers on FD until the other end closes:

- a request is one JSON line `{"code", "args", "cwd", "env"}` sent with the three
  descriptors that are the process's stdin, stdout and stderr (SCM_RIGHTS); the answer
  is `{"pid": N}`, and the child runs `python -c CODE ARGS` as a new interpreter would;
- when a child ends, `{"exited": N, "status": S}` follows (S as `os.waitpid` gives it),
  since this process is its parent and the only one that can wait for it.

Kept apart from `fork_kit` so that the children import nothing of the tests': they see
the modules a real start of theirs imports, and those named here."""

from __future__ import annotations

import atexit
import builtins
import importlib
import io
import json
import os
import selectors
import signal
import socket
import sys
import threading
import traceback
import types
from typing import Any


def _stdio(encoding: str, errors: str, unbuffered: bool) -> None:
    """New `sys.stdin`, `sys.stdout` and `sys.stderr` over descriptors 0-2, made as the
    interpreter makes them at its start: line-buffered where they are a terminal,
    stderr always; none buffered under PYTHONUNBUFFERED."""
    def writer(fd: int, errs: str, line: bool) -> io.TextIOWrapper:
        raw: Any = open(fd, "wb", buffering=0 if unbuffered else -1, closefd=False)
        return io.TextIOWrapper(raw, encoding, errs, line_buffering=line,
                                write_through=unbuffered)

    sys.stdin = io.TextIOWrapper(
        open(0, "rb", closefd=False), encoding, errors, line_buffering=os.isatty(0))
    sys.stdout = writer(1, errors, os.isatty(1))
    sys.stderr = writer(2, "backslashreplace", True)
    for name in ("stdin", "stdout", "stderr"):
        setattr(sys, f"__{name}__", getattr(sys, name))


def _exit_status(exc: SystemExit) -> int:
    """What the interpreter makes of an uncaught SystemExit."""
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _finish(status: int, then: signal.Signals | None = None) -> None:
    """End as the interpreter does: wait for the threads that are not daemons, run the
    exit functions, flush the streams (and die of the signal `then`, if given); then
    exit without going back to the fork server's loop."""
    shutdown = getattr(threading, "_shutdown", None)
    if shutdown is not None:
        shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    if then is not None:
        signal.signal(then, signal.SIG_DFL)
        os.kill(os.getpid(), then)
    os._exit(status)


def _child(request: dict[str, Any], fds: list[int], encoding: str, errors: str) -> None:
    """In the forked child: become `python -c CODE ARGS`, run it, and exit."""
    signal.set_wakeup_fd(-1)
    for number in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, signal.SIG_DFL)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    os.closerange(3, os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 1024)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    _stdio(encoding, errors, bool(os.environ.get("PYTHONUNBUFFERED")))
    sys.argv = ["-c", *request["args"]]
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main
    try:
        exec(compile(request["code"], "<string>", "exec"), main.__dict__)
        status = 0
    except SystemExit as exc:
        status = _exit_status(exc)
    except KeyboardInterrupt:
        traceback.print_exc()
        _finish(130, then=signal.SIGINT)  # as the interpreter: die of it, for all to see
    except BaseException:
        traceback.print_exc()
        status = 1
    _finish(status)


def serve(fd: int, modules: list[str]) -> None:
    for name in modules:
        importlib.import_module(name)
    encoding, errors = sys.stdout.encoding, sys.stdout.errors or "strict"
    control = socket.socket(fileno=fd)
    waker_r, waker_w = os.pipe()
    os.set_blocking(waker_w, False)
    signal.set_wakeup_fd(waker_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # the wakeup byte is what counts
    selector = selectors.DefaultSelector()
    selector.register(control, selectors.EVENT_READ)
    selector.register(waker_r, selectors.EVENT_READ)
    pending = b""
    while True:
        for key, _ in selector.select():
            if key.fileobj is control:
                try:
                    data, fds, _flags, _addr = socket.recv_fds(control, 65536, 3)
                except InterruptedError:
                    continue
                if not data:
                    return  # the tests' process went away
                pending += data
                while b"\n" not in pending:
                    more = control.recv(65536)
                    if not more:
                        return
                    pending += more
                line, _, pending = pending.partition(b"\n")
                request = json.loads(line)
                pid = os.fork()
                if pid == 0:
                    selector.close()
                    _child(request, fds, encoding, errors)
                for each in fds:
                    os.close(each)
                control.sendall(json.dumps({"pid": pid}).encode() + b"\n")
            else:
                os.read(waker_r, 4096)
                while True:
                    try:
                        pid, status = os.waitpid(-1, os.WNOHANG)
                    except ChildProcessError:
                        break
                    if pid == 0:
                        break
                    control.sendall(json.dumps({"exited": pid, "status": status}).encode()
                                    + b"\n")


if __name__ == "__main__":
    serve(int(sys.argv[1]), sys.argv[2:])
