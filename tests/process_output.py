"""A child process's output, read line by line on a thread, so that every wait on it
can time out instead of blocking the test on a process that went quiet."""

from __future__ import annotations

import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

from fork_kit import popen, preloaded, run

BACKSTOP = 60.0
"""Seconds any one wait may take: far beyond what a healthy process needs."""
SERVER = preloaded("from pisyedili.server.service.tap import main; main()",
                   "pisyedili.server.service.tap")
"""`pisyedili-server`, run by the interpreter the tests run on (forked, `fork_kit`)."""
PLAY = preloaded("import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
                 "from pisyedili.client.cli import main; raise SystemExit(main())",
                 "pisyedili.client.cli")
"""`pisyedili play`, run by the interpreter the tests run on, with Ctrl-C (SIGINT) as a
terminal gives it to the program in front. An ignored SIGINT is inherited across exec,
and a shell that is not interactive ignores it in what it starts in the background, as
`cmd &` in a CI script does: a suite started so would give every child an ignored Ctrl-C,
and Twisted then installs no handler for it (it leaves a handler somebody set)."""


class Output:
    """Every line the process wrote so far (`text`), and waits on what comes next."""

    def __init__(self, stream: IO[str]) -> None:
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream: IO[str]) -> None:
        try:
            for line in stream:
                self.lines.put(line)
        except ValueError:  # closed by its process's owner (`running`) as it was read
            pass
        self.lines.put(None)

    def _next(self, deadline: float) -> str | None:
        """The next line, or None at the end of the stream or past `deadline`."""
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        try:
            line = self.lines.get(timeout=left)
        except queue.Empty:
            return None
        if line is not None:
            self.seen.append(line)
        return line

    def wait_for(self, pattern: str, timeout: float = BACKSTOP) -> re.Match[str]:
        """The first line from here on that matches `pattern`."""
        deadline = time.monotonic() + timeout
        while (line := self._next(deadline)) is not None:
            found = re.search(pattern, line)
            if found:
                return found
        raise AssertionError(f"no {pattern!r} in the output:\n{self.text}")

    def rest(self, timeout: float = BACKSTOP) -> str:
        """Everything up to the end of the stream (the process has exited)."""
        deadline = time.monotonic() + timeout
        while self._next(deadline) is not None:
            pass
        return self.text

    @property
    def text(self) -> str:
        return "".join(self.seen)


@contextmanager
def running(*argv: str) -> Iterator[tuple[subprocess.Popen[str], Output]]:
    """A real process `argv`, its output (stderr with stdout) drained all along, so it
    never blocks on it; yields it and that output, and kills it after."""
    proc = popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                 text=True, encoding="utf-8")
    assert proc.stdout is not None
    try:
        yield proc, Output(proc.stdout)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()


@contextmanager
def logged_server(*args: str, timeout: float = BACKSTOP
                  ) -> Iterator[tuple[subprocess.Popen[str], int, Output]]:
    """A real `pisyedili-server ARGS` process (see `running`): yields it, the port its
    log says it listens on, and its log for the test to wait on."""
    with running(sys.executable, "-c", SERVER, *args) as (proc, out):
        yield proc, int(out.wait_for(r"listening on .*port=(\d+)", timeout).group(1)), out


@contextmanager
def server_process(*args: str, timeout: float = BACKSTOP
                   ) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """A real `pisyedili-server ARGS` process and its port (see `logged_server`)."""
    with logged_server(*args, timeout=timeout) as (proc, port, _):
        yield proc, port


def add_operator(db: str, name: str, password: str) -> None:
    """`pisyedili-server operator --db DB add NAME`, the password typed on its stdin:
    the account is made an operator before any server opens the store."""
    made = run([sys.executable, "-c", SERVER, "operator", "--db", db, "add", name],
               input=f"{password}\n", text=True, capture_output=True, timeout=60, check=False)
    assert made.returncode == 0, made.stderr
