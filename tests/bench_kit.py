"""`pisyedili-bench load` run end to end with tiny parameters, for the tests that check
what it reports (tests/server/test_load_bench.py, tests/cluster/test_cluster_bench.py)."""

import json
import subprocess
import sys
from typing import Any


def run_load(*args: str, timeout: float) -> dict[str, Any]:
    """One round of one second (after 0.3 s of warm-up) with `args`: the figures of the
    one line of JSON it prints. `timeout`: a backstop for a hung run."""
    done = subprocess.run([sys.executable, "-m", "pisyedili.server.bench.cli", "load",
                           "--seconds", "1", "--warmup", "0.3", "--rounds", "1", *args],
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1, done.stdout
    result: dict[str, Any] = json.loads(lines[0])
    return result


def positive(value: object) -> bool:
    """A figure that was measured: a number above zero."""
    return isinstance(value, (int, float)) and value > 0
