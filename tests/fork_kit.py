"""Processes of ours started as forks of an interpreter that has imported them already.

The long suite starts some four hundred server and client processes, and each spent
about half a second of CPU importing Twisted and the game before it did anything a test
looks at: a large part of what a 2-core machine does in the suite. A fork server per
program and test process (`fork_server.py`) imports the program's modules once, and
each start is a fork of it that runs `python -c CODE ARGS` with its own arguments,
environment, folder and standard streams. The process is as real as one started from
nothing: its own pid, signals (SIGSTOP, SIGKILL), exit status and descriptors, the
same entry point run the same way. `popen` returns a `subprocess.Popen` for it, whose
`wait`, `poll` and `send_signal` work as for any child: the fork server, its parent,
says when it ends and how.

Only where the fork is the same as a start: on Linux, for a `CODE` registered with
`preloaded`, with the standard streams and the environment `subprocess` would give it
and the startup variables (PYTHON*, LANG, LC_*, TZ) the fork server started with.
Anything else (or PISYEDILI_TEST_FORK=0) starts as usual."""

from __future__ import annotations

import atexit
import json
import os
import queue
import re
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

ENABLED = (sys.platform == "linux" and hasattr(socket, "send_fds")
           and os.environ.get("PISYEDILI_TEST_FORK", "1") != "0")
STARTUP = re.compile(r"PYTHON|LC_|LANG$|LANGUAGE$|TZ$")
"""The variables an interpreter reads as it starts (its streams' encoding, its
locale, its time zone): a fork has those of its fork server."""
AS_USUAL = frozenset({"stdin", "stdout", "stderr", "text", "encoding", "errors", "env",
                      "cwd", "universal_newlines"})
"""The `Popen` arguments a fork honours; any other starts the process as usual."""
ANSWER_SECONDS = 60.0

_PRELOADS: dict[str, tuple[str, ...]] = {}
_SERVERS: dict[str, _ForkServer] = {}
_LOCK = threading.Lock()
_RUN = ("import runpy, sys; sys.argv[0] = {path!r}; runpy.run_path({path!r}, "
        "run_name='__main__')")


def preloaded(code: str, *modules: str) -> str:
    """`code` (for `python -c`), registered to be forked from an interpreter that has
    imported `modules` (what the code imports first)."""
    _PRELOADS[code] = modules
    return code


class _ForkServer:
    """One `fork_server.py` and the thread that reads what it says."""

    def __init__(self, modules: tuple[str, ...]) -> None:
        ours, theirs = socket.socketpair()
        self.env = _startup(os.environ)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _RUN.format(path=str(Path(__file__).with_name(
                "fork_server.py"))), str(theirs.fileno()), *modules],
            pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL)
        theirs.close()
        self.sock = ours
        self.send_lock = threading.Lock()
        self.answers: queue.Queue[int | None] = queue.Queue()
        self.ended = threading.Condition()
        self.statuses: dict[int, int] = {}
        self.gone = False
        threading.Thread(target=self._read, daemon=True, name="fork server").start()

    def _read(self) -> None:
        stream = self.sock.makefile("rb")
        for line in stream:
            said = json.loads(line)
            if "pid" in said:
                self.answers.put(int(said["pid"]))
            else:
                with self.ended:
                    self.statuses[int(said["exited"])] = int(said["status"])
                    self.ended.notify_all()
        with self.ended:
            self.gone = True
            self.ended.notify_all()
        self.answers.put(None)

    def spawn(self, code: str, args: list[str], cwd: str, env: dict[str, str],
              fds: list[int]) -> int:
        request = json.dumps({"code": code, "args": args, "cwd": cwd, "env": env})
        with self.send_lock:
            socket.send_fds(self.sock, [request.encode() + b"\n"], fds)
            pid = self.answers.get(timeout=ANSWER_SECONDS)
        if pid is None:
            raise AssertionError(f"the fork server for {code!r} is gone")
        return pid

    def status(self, pid: int, timeout: float | None) -> int | None:
        """The child's wait status once it has ended, waiting up to `timeout` seconds
        (for ever if None); None if it runs on."""
        with self.ended:
            self.ended.wait_for(lambda: pid in self.statuses or self.gone, timeout)
            if pid not in self.statuses and self.gone:
                raise AssertionError(f"the fork server of process {pid} is gone")
            return self.statuses.get(pid)


@atexit.register
def _stop_servers() -> None:
    """Each fork server ends when its socket closes: waited for, as any child is."""
    for server in _SERVERS.values():
        server.sock.shutdown(socket.SHUT_RDWR)  # (the reading thread holds it open)
        try:
            server.proc.wait(10)
        except subprocess.TimeoutExpired:
            server.proc.kill()


def _startup(env: Any) -> dict[str, str]:
    return {k: v for k, v in env.items() if STARTUP.match(k)}


class ForkedPopen(subprocess.Popen[Any]):
    """A `Popen` whose process is forked by a fork server (module docstring)."""

    def __init__(self, server: _ForkServer, args: list[str], **kwargs: Any) -> None:
        self._fork_server = server
        super().__init__(args, **kwargs)

    def _execute_child(self, args: Any, executable: Any, preexec_fn: Any, close_fds: Any,
                       pass_fds: Any, cwd: Any, env: Any, startupinfo: Any,
                       creationflags: Any, shell: Any, p2cread: int, p2cwrite: int,
                       c2pread: int, c2pwrite: int, errread: int, errwrite: int,
                       *rest: Any) -> None:
        fds = [p2cread if p2cread != -1 else 0, c2pwrite if c2pwrite != -1 else 1,
               errwrite if errwrite != -1 else 2]
        try:
            self.pid = self._fork_server.spawn(
                args[2], [str(a) for a in args[3:]],
                os.path.abspath(cwd) if cwd is not None else os.getcwd(),
                dict(env if env is not None else os.environ), fds)
            self._child_created = True
        finally:
            self._close_pipe_fds(  # type: ignore[attr-defined]
                p2cread, p2cwrite, c2pread, c2pwrite, errread, errwrite)

    def _internal_poll(self, _deadstate: int | None = None, *_: Any, **__: Any) -> int | None:
        if self.returncode is None and self._waitpid_lock.acquire(False):  # type: ignore[attr-defined]
            try:
                status = self._fork_server.status(self.pid, 0)
                if status is not None and self.returncode is None:
                    self._handle_exitstatus(status)  # type: ignore[attr-defined]
            finally:
                self._waitpid_lock.release()  # type: ignore[attr-defined]
        return self.returncode

    def _try_wait(self, wait_flags: int) -> tuple[int, int]:
        status = self._fork_server.status(self.pid, None if wait_flags == 0 else 0)
        return (0, 0) if status is None else (self.pid, status)


def popen(argv: list[str], **kwargs: Any) -> subprocess.Popen[Any]:
    """`subprocess.Popen(argv, **kwargs)`, forked from a fork server where that starts
    the same process (module docstring)."""
    env = kwargs.get("env")
    if (ENABLED and len(argv) >= 3 and argv[0] == sys.executable and argv[1] == "-c"
            and argv[2] in _PRELOADS and set(kwargs) <= AS_USUAL):
        with _LOCK:
            server = _SERVERS.get(argv[2])
            if server is None or server.gone:
                server = _SERVERS[argv[2]] = _ForkServer(_PRELOADS[argv[2]])
        if _startup(env if env is not None else os.environ) == server.env:
            return ForkedPopen(server, argv, **kwargs)
    return subprocess.Popen(argv, **kwargs)


def run(argv: list[str], *, input: str | bytes | None = None,
        capture_output: bool = False, timeout: float | None = None, check: bool = False,
        **kwargs: Any) -> subprocess.CompletedProcess[Any]:
    """`subprocess.run`, the process started by `popen`."""
    if input is not None:
        kwargs["stdin"] = subprocess.PIPE
    if capture_output:
        kwargs["stdout"] = kwargs["stderr"] = subprocess.PIPE
    with popen(argv, **kwargs) as proc:
        try:
            out, err = proc.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise
    done = subprocess.CompletedProcess(argv, proc.returncode, out, err)
    if check:
        done.check_returncode()
    return done
