"""A process forked by `fork_kit` is what the same `python -c CODE ARGS` started from
nothing is, to everything a test can look at: its arguments, environment, folder,
standard streams, exit status, signals and exit functions; and it shares no random
state with its siblings and imports nothing of the tests'."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fork_kit import ENABLED, ForkedPopen, popen, preloaded

pytestmark = pytest.mark.skipif(not ENABLED, reason="forks only on Linux")

REPORT = preloaded("""
import atexit, json, os, random, sys
import email.message  # imported first by the fork server: in the fork without cost
what = sys.argv[1]
if what == "report":
    atexit.register(lambda: print("exit functions ran", flush=True))
    print(json.dumps({"argv": sys.argv, "cwd": os.getcwd(), "env": os.environ.get("FORK_TEST"),
                      "line": sys.stdin.readline(), "random": random.random(),
                      "tests": sorted(m for m in sys.modules if m.endswith("_kit")),
                      "encoding": sys.stdout.encoding, "main": __name__}))
    print("to stderr", file=sys.stderr)
elif what == "exit":
    raise SystemExit(int(sys.argv[2]))
elif what == "raise":
    raise ValueError("told to")
elif what == "interrupt":
    raise KeyboardInterrupt
elif what == "wait":
    print("waiting", flush=True)
    sys.stdin.read()
""", "email.message")


def start(*args: str, forked: bool, **kwargs: Any) -> subprocess.Popen[str]:
    argv = [sys.executable, "-c", REPORT, *args]
    options: dict[str, Any] = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE,
                               "stderr": subprocess.PIPE, "text": True, "encoding": "utf-8",
                               **kwargs}
    proc = popen(argv, **options) if forked else subprocess.Popen(argv, **options)
    assert isinstance(proc, ForkedPopen) is forked
    return proc


def test_a_fork_reports_what_a_start_does(tmp_path: Path) -> None:
    seen = []
    for forked in (False, True, True):
        proc = start("report", "ş", forked=forked, cwd=tmp_path,
                     env={**os.environ, "FORK_TEST": "yes"})
        out, err = proc.communicate("a line\n", timeout=60)
        assert proc.returncode == 0, err
        report, ran = out.splitlines()
        seen.append(json.loads(report))
        assert ran == "exit functions ran"
        assert err == "to stderr\n"
    started, forked, again = seen
    assert started["random"] != forked["random"] != again["random"]
    for each in (started, forked, again):
        each.pop("random")
    assert started == forked == again
    assert started["argv"] == ["-c", "report", "ş"] and started["tests"] == []
    assert started["cwd"] == str(tmp_path) and started["line"] == "a line\n"


@pytest.mark.parametrize(("args", "status", "told"), [
    (("exit", "3"), 3, ""),
    (("raise",), 1, "ValueError: told to"),
    (("interrupt",), -signal.SIGINT, "KeyboardInterrupt"),
])
def test_a_fork_ends_as_a_start_does(args: tuple[str, ...], status: int, told: str) -> None:
    for forked in (False, True):
        proc = start(*args, forked=forked)
        _, err = proc.communicate("", timeout=60)
        assert proc.returncode == status, (forked, err)
        assert told in err


def test_a_fork_is_signalled_polled_and_waited_for_as_a_child() -> None:
    proc = start("wait", forked=True)
    assert proc.stdout is not None and proc.stdout.readline() == "waiting\n"
    assert proc.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        proc.wait(0.05)
    proc.send_signal(signal.SIGSTOP)
    proc.send_signal(signal.SIGCONT)
    proc.terminate()
    assert proc.wait(60) == -signal.SIGTERM
    proc.send_signal(signal.SIGKILL)  # ended: nothing is sent to a pid maybe reused
    proc.communicate()
