"""The metrics of a real server process on its `--health` port (`/metrics`): scraped
by Debian's `prometheus` while a match is played, and read directly after a refused
login and a drain.

Without the `prometheus` binary the Prometheus test skips, or fails under CI=true
(.ci/run installs it)."""

from __future__ import annotations

import json
import random
import shutil
import signal
import subprocess
import sys
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cluster.cluster_kit import Player
from health_kit import health_server
from metrics_kit import scrape
from poll_kit import poll_until
from process_output import BACKSTOP
from skip_kit import unavailable

from pisyedili.server.bench.services import free_port

QUICK = ("--bot-delay", "0", "--deal-pause", "0", "--rate", "1000", "--burst", "1000")
"""A bot answers at once, and a player as fast as the bot: a match takes a moment."""


def play_against_a_bot(port: int) -> int:
    """A one-deal match of a player against a bot, to its end; the moves it made."""
    player = Player(port)
    player.hello("Ayşe")
    player.ok("create_table", rules="classic", seats=2, options={"match_end": "deals:1"})
    player.ok("add_bot", seat=1, level="easy")
    player.ok("start")
    rng, made, since = random.Random(7), 0, 0
    while True:
        msg = player.wait(lambda m: m["type"] == "update", since)
        since = player.seen.index(msg) + 1
        if any(e["event"] == "match_end" for e in msg["events"]):
            player.close()
            return made
        if "moves" in msg:
            player.ok("move", move=rng.choice(msg["moves"]))
            made += 1


@contextmanager
def prometheus(tmp_path: Path, target: int) -> Iterator[int]:
    """Debian's `prometheus`, scraping `127.0.0.1:target` every 200 ms; its HTTP port."""
    binary = shutil.which("prometheus")
    if binary is None:
        unavailable("Prometheus", "no prometheus on PATH (Debian: apt-get install prometheus)")
    assert binary is not None
    port = free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 200ms\n  scrape_timeout: 150ms\n"
        "scrape_configs:\n  - job_name: pisyedili\n    static_configs:\n"
        f"      - targets: ['127.0.0.1:{target}']\n", encoding="utf-8")
    proc = subprocess.Popen(
        [binary, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=(tmp_path / "prometheus.log").open("w"))
    try:
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(BACKSTOP)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def query(port: int, expression: str) -> float | None:
    """The instant value of `expression` in Prometheus, None while it has none."""
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode(
        {"query": expression})
    try:
        with urllib.request.urlopen(url, timeout=BACKSTOP) as answer:
            body = json.load(answer)
    except OSError:
        return None  # not listening yet
    results = body["data"]["result"]
    return float(results[0]["value"][1]) if results else None


def test_prometheus_scrapes_the_moves_of_a_match(tmp_path: Path) -> None:
    with health_server(*QUICK) as served, prometheus(tmp_path, served.health) as port:
        made = play_against_a_bot(served.port)
        assert made > 0
        poll_until(lambda: (query(port, "pisyedili_moves_total") or 0) > made, BACKSTOP,
                   lambda: f"Prometheus to count more than the player's {made} moves: "
                   + (tmp_path / "prometheus.log").read_text(), interval=0.1)
        assert query(port, 'pisyedili_tables{state="over"}') == 1


def test_a_refused_login_and_a_drain_are_counted() -> None:
    with health_server("--drain-seconds", "3600") as served:
        player = Player(served.port)
        player.hello("Ayşe", ("accounts",))
        player.ok("register", password="a long enough password")
        intruder = Player(served.port)
        intruder.hello("Deniz", ("accounts",))
        refused = intruder.request("login", name="Ayşe", password="not the password")
        assert refused["code"] == "bad_login", refused
        metrics = scrape(served.health)
        assert metrics[("pisyedili_login_refusals_total", (("code", "bad_login"),))] == 1
        assert metrics[("pisyedili_login_delay_seconds_count", ())] == 1
        assert metrics[("pisyedili_sessions", (("transport", "tcp"),))] == 2
        assert metrics[("pisyedili_connections", (("transport", "tcp"),))] == 2
        assert metrics[("pisyedili_drains_total", ())] == 0
        served.proc.send_signal(signal.SIGTERM)
        served.out.wait_for(r"stopping: /ready answers 503 \(draining\)")
        assert scrape(served.health)[("pisyedili_drains_total", ())] == 1


def test_importing_the_server_installs_no_reactor() -> None:
    """prometheus_client's Twisted resource takes the global reactor as it is imported:
    the server imports it only once it builds a health port, so that the client (which
    embeds the server offline) can still install its asyncio reactor after the import."""
    check = ("import sys\nimport pisyedili.server.service.tap\n"
             "from twisted.internet import asyncioreactor\nasyncioreactor.install()\n"
             "from twisted.internet import reactor\nprint(type(reactor).__name__)\n")
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True,
                          timeout=BACKSTOP, check=False)
    assert (done.returncode, done.stdout.strip()) == (0, "AsyncioSelectorReactor"), done.stderr
