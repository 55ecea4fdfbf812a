"""A test awaiting a Deferred that never fires fails at its deadline, and the run goes
on (tests/reactor_deadline.py): pytest is run on such a test, as a process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent

HANGS = '''
import pytest_twisted
from twisted.internet.defer import Deferred

@pytest_twisted.ensureDeferred
async def test_never_answered() -> None:
    await Deferred()

def test_after() -> None:
    pass
'''

CONFTEST = f'''
import sys
sys.path.insert(0, {str(TESTS)!r})
import reactor_deadline
reactor_deadline.install(1.0)
'''


def test_a_test_waiting_on_the_reactor_for_ever_fails_and_the_run_goes_on(
        tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tmp_path / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    (tmp_path / "test_hangs.py").write_text(HANGS, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-ra",
         "-o", "timeout=120", "test_hangs.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=240, check=False)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "FAILED test_hangs.py::test_never_answered - twisted.internet.defer.Timeout" \
        in run.stdout, run.stdout
    assert "1 failed, 1 passed" in run.stdout, run.stdout
