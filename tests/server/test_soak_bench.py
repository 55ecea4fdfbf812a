"""`pisyedili-bench soak` for a few seconds with few tables: a real server process and
real clients that drop and resume by token. What is asserted is the figures' shape and
that no table was lost; whether memory stays flat is judged from a full run's figures
(docs/bench.md), not from seconds of one."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from process_output import Output

from pisyedili.server.bench.soak import parse

SAMPLE = re.compile(r"^soak t=\s*[\d.]+s rss=(\d+|None) KiB moved=(\d+)/(\d+) away=(\d+) "
                    r"drops=(\d+) resumes=(\d+) moves=(\d+) errors=(\d+)$")
TABLES = 3


def test_a_short_soak_prints_its_samples_and_loses_no_table() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "pisyedili.server.bench.cli", "soak", "--tables", str(TABLES),
         "--minutes", "0.15", "--drop-rate", "30", "--away", "1.5", "--every", "2",
         "--warmup", "2", "--bot-delay", "0.05", "--think", "50"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        out = Output(proc.stdout)  # type: ignore[arg-type]
        text = out.rest(timeout=120)
        assert proc.wait(30) == 0, text
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    lines = text.strip().splitlines()
    summary = json.loads(lines[-1])
    samples = [SAMPLE.match(line) for line in lines if line.startswith("soak t=")]
    assert len(samples) >= 4 and all(samples), text
    assert all(int(m.group(3)) == TABLES for m in samples if m)
    assert summary["bench"] == "soak" and summary["tables"] == TABLES
    assert summary["samples"] == len(samples)
    assert summary["tables_lost"] == [] and summary["tables_listed"] == TABLES
    assert summary["failed_resumes"] == []
    # A client is dropped about every two seconds: some drops, each one resumed.
    assert summary["drops"] > 0 and summary["resumes"] == summary["drops"], summary
    assert summary["tables_stalled"] == [], summary  # every table moved at the end
    assert summary["moves"] > 0 and summary["errors"] == 0, summary
    for key in ("rss_start_kib", "rss_warm_kib", "rss_end_kib", "rss_max_kib"):
        assert isinstance(summary[key], int) and summary[key] > 0, (key, summary)
    assert isinstance(summary["rss_growth_after_warmup"], float)


def test_the_defaults_are_the_long_soak() -> None:
    args = parse([], "soak")
    assert (args.tables, args.minutes, args.drop_rate) == (200, 10.0, 1.0)
