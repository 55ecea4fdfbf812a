"""The reactor the tests share (tests/reactor_kit.py), as pytest runs it in a process of
its own: a test awaiting a Deferred that never fires fails at its deadline and the run
goes on; and after a test that ran an asyncio loop handling a signal, a child process
that closes its pipes before it exits is still seen to end."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent

CONFTEST = f'''
import sys
sys.path.insert(0, {str(TESTS)!r})
import pytest
import reactor_kit
reactor_kit.install(10.0)

@pytest.fixture(autouse=True)
def _wakeup():
    yield from reactor_kit.wakeup_kept()
'''

HANGS = '''
import pytest_twisted
from twisted.internet.defer import Deferred

@pytest_twisted.ensureDeferred
async def test_never_answered() -> None:
    await Deferred()

def test_after() -> None:
    pass
'''

CHILDREN = '''
import asyncio
import signal
import sys

import pytest_twisted
from twisted.internet import reactor, utils

LATE = "import os, time; os.close(1); os.close(2); time.sleep(0.5)"

@pytest_twisted.ensureDeferred
async def test_1_the_reactor_runs() -> None:
    pass

def test_2_an_asyncio_loop_handles_a_signal() -> None:
    loop = asyncio.new_event_loop()
    loop.add_signal_handler(signal.SIGWINCH, lambda: None)
    loop.close()

@pytest_twisted.ensureDeferred
async def test_3_a_child_that_closes_its_pipes_first_is_seen_to_end() -> None:
    wakeup = signal.set_wakeup_fd(-1)
    signal.set_wakeup_fd(wakeup)
    assert wakeup != -1, "the reactor hears of no signal"
    out = await utils.getProcessOutputAndValue(sys.executable, ["-c", LATE])
    assert out[2] == 0
'''


def run_pytest(folder: Path, module: str, text: str) -> str:
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (folder / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    (folder / module).write_text(text, encoding="utf-8")
    run = subprocess.run(
        # pytest-timeout's alarm, off: it wakes the reactor's poll, which hides the fault.
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         "-p", "no:timeout", "-ra", module],
        cwd=folder, capture_output=True, text=True, timeout=240, check=False)
    return run.stdout + run.stderr


def test_a_test_waiting_on_the_reactor_for_ever_fails_and_the_run_goes_on(
        tmp_path: Path) -> None:
    out = run_pytest(tmp_path, "test_hangs.py", HANGS)
    assert "FAILED test_hangs.py::test_never_answered - twisted.internet.defer.Timeout" \
        in out, out
    assert "1 failed, 1 passed" in out, out


def test_a_child_process_is_seen_to_end_after_an_asyncio_loop_took_the_signals(
        tmp_path: Path) -> None:
    out = run_pytest(tmp_path, "test_children.py", CHILDREN)
    assert "3 passed" in out, out
