"""`pisyedili-bench flood` with tiny parameters: it runs end to end and reports every
figure. The figures themselves are judged where they are printed, never asserted here;
what is asserted is that they measure what they say: flooders closed and reconnecting,
a canary answered, both servers of the requests round refusing the same flood."""

from __future__ import annotations

import json
import subprocess
import sys


def test_the_flood_bench_reports_both_rounds() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pisyedili.server.bench.cli", "flood", "--seconds", "1",
         "--rounds", "1", "--flooders", "2", "--per-write", "5"],
        capture_output=True, text=True, timeout=120, check=True)
    figures = json.loads(done.stdout)
    frames = figures["frames_counted"]
    assert frames["flooders_closed"] >= 2  # each flooder closed at least once
    assert frames["canary_pings"] > 0 and frames["canary_unanswered"] == 0
    assert frames["canary_p99_ms"] is not None
    assert figures["requests_reply_cpu_us"] > 0 and figures["requests_drop_cpu_us"] > 0
    replies = figures["requests_replies_read"]
    assert replies["reply"] > replies["drop"]  # one answers every refusal, one drops most
