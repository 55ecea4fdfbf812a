"""`pisyedili-bench nemesis` for two minutes, with a fixed seed and every kind of fault:
three processes of a cluster, with their own Redis and PostgreSQL (and HAProxy where it
is installed), played on by scripted players while faults are injected. The run's
folder holds what the checker read, and the checker gives the same verdict when run
again from it. How long anything took is the bench's figure, never asserted here."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

import pytest
import skip_kit

from pisyedili.server.bench.nemesis import read_history, read_journal
from pisyedili.server.bench.nemesis_check import Verdict, check
from pisyedili.server.bench.services import pg_bindir

SEED = 1
SECONDS = 120
BACKSTOP = 900
"""A hung run's end: its setup, two minutes of faults, the settling and the check."""
pytestmark = pytest.mark.timeout(BACKSTOP + 60)
"""The run is the module's fixture, which the first test waits for: past the suite's
per-test limit, within the run's own."""
SAFETY = ("lost_ack", "duplicate", "order", "two_writers", "duplicate_id")
"""What the cluster's store and ids promise: an acknowledged move is kept, once, in
order, by one holder at a time."""


@dataclass
class Run:
    summary: dict[str, Any]
    history: list[dict[str, Any]]
    verdict: Verdict
    """The checker's, again, from the run's folder."""
    violations: str
    returncode: int


OPT_IN = "PISYEDILI_NEMESIS"
"""The run is asked for by this variable (`=1`) until the cluster passes it: a
two-minute run may or may not meet the faults docs/bench.md lists as open ("The
nemesis"), so it would fail the suite by chance rather than by a change."""


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    if os.environ.get(OPT_IN) != "1":
        pytest.skip(f"the nemesis runs when {OPT_IN}=1 (its open findings: docs/bench.md)")
    if shutil.which("redis-server") is None:
        skip_kit.unavailable("redis-server", "it is not installed")
    if pg_bindir() is None:
        skip_kit.unavailable("PostgreSQL", "its programs are not installed")
    out = tmp_path_factory.mktemp("nemesis") / "run"
    done = subprocess.run(
        [sys.executable, "-m", "pisyedili.server.bench.cli", "nemesis", "--duration",
         str(SECONDS), "--seed", str(SEED), "--out", str(out)],
        capture_output=True, text=True, timeout=BACKSTOP)
    assert done.stdout.strip(), done.stderr[-5000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    history = read_history(out / "history.jsonl")
    logs = {p.name: p.read_text(encoding="utf-8") for p in out.glob("process-*.log")}
    assert len(logs) == summary["processes"] == 3
    verdict = check(history, read_journal(out / "journal.json"), logs)
    return Run(summary, history, verdict,
               (out / "violations.jsonl").read_text(encoding="utf-8"), done.returncode)


def test_the_run_is_recorded_and_checked_again_from_its_folder(run: Run) -> None:
    s, history = run.summary, run.history
    starts = [e for e in history if e["ev"] == "fault" and e["phase"] == "start"]
    assert len(starts) == s["faults"] > 0
    assert len({e["kind"] for e in starts}) > 1
    assert s["moves_acked"] == sum(e["ev"] == "ack" for e in history) > 0
    assert s["returns"] == sum(e["ev"] == "back" for e in history) > 0  # drops came
    assert run.verdict.acked == s["moves_acked"]
    assert run.verdict.faults == s["faults_by_kind"]
    assert run.verdict.survived == s["survived_by_kind"]
    assert run.verdict.counts() == s["violations"]
    assert (run.returncode == 0) == (s["verdict"] == "pass") == run.verdict.ok


def test_no_acknowledged_move_is_lost_doubled_or_reordered_under_faults(run: Run) -> None:
    found = [v for v in run.verdict.violations if v.kind in SAFETY]
    assert not found, f"seed {SEED}: " + "\n".join(
        f"{v.kind}: {v.detail} {v.lines}" for v in found)
    assert run.summary["moves_lost"] == 0


OPEN = ("resume_without_table",)
"""What the checker still finds now and then (docs/bench.md, "The nemesis"): a resume
welcomed without its table while a stopping process hands its sessions on, the
table's snapshot following. Its own test says so."""


def test_every_session_comes_back_and_no_process_logs_a_traceback(run: Run) -> None:
    found = [v for v in run.verdict.violations if v.kind not in OPEN]
    assert not found, f"seed {SEED}:\n{run.violations[:8000]}"
    assert run.summary["sessions_lost"] == 0


@pytest.mark.xfail(strict=False, reason="open: a resume during a stopping process's "
                   "hand-over may be welcomed without its table, its snapshot following")
def test_every_resume_is_welcomed_at_its_table(run: Run) -> None:
    assert run.summary["verdict"] == "pass", f"seed {SEED}:\n{run.violations[:8000]}"
