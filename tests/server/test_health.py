"""Liveness and readiness over HTTP (`--health`, server/net/health.py) of a real server
process: ready once it listens, not ready from the moment it is told to stop while it
still serves its players (`--drain-seconds`), and gone once the drain is over.

The readiness of a journal the store stopped taking is checked on the service itself,
with a real SQLite journal that a full file makes fall behind.
"""

from __future__ import annotations

import signal
import sqlite3
from pathlib import Path

from cluster.cluster_kit import Player
from health_kit import check, health_server, ready_turns
from process_output import BACKSTOP
from twisted.internet.task import Clock

from pisyedili.server.service.assembly import make_factory
from pisyedili.server.service.server import ServerService
from pisyedili.server.service.tap import ServerOptions
from pisyedili.server.store.journal import CATCH_UP_SECONDS, StoreJournal
from pisyedili.server.table import commands as cmd


def test_a_listening_server_is_live_and_ready() -> None:
    with health_server() as served:
        assert check(served.health, "/live") == (200, {"live": True})
        assert check(served.health, "/ready") == (200, {"ready": True, "failed": []})
        assert check(served.health, "/ready", "HEAD") == (200, None)


def test_a_stopping_server_is_not_ready_while_it_still_serves() -> None:
    """SIGTERM: `/ready` answers 503 (draining) at once, while the players already
    there are answered and a new one is still welcome; nobody is told the server
    stops until the drain is over (an hour here: the test ends it with SIGKILL)."""
    with health_server("--drain-seconds", "3600") as served:
        player = Player(served.port)
        player.hello("Ayşe")
        served.proc.send_signal(signal.SIGTERM)
        body = ready_turns(served.health, 503)
        assert body == {"ready": False, "failed": ["draining"]}
        assert check(served.health, "/live") == (200, {"live": True})
        assert served.proc.poll() is None
        player.ok("lobby_subscribe")
        late = Player(served.port)
        assert late.hello("Deniz")["type"] == "welcome"
        assert not any(m.get("code") == "shutting_down" for m in player.seen + late.seen)
        served.out.wait_for(r"stopping: /ready answers 503 \(draining\) from now on; the "
                            r"ports close in 3600 s")


def test_a_drained_server_tells_its_players_and_exits() -> None:
    with health_server("--drain-seconds", "0.2") as served:
        player = Player(served.port)
        player.hello("Ayşe")
        served.proc.send_signal(signal.SIGTERM)
        told = player.wait(lambda m: m.get("code") == "shutting_down")
        assert told["type"] == "error", told
        assert player.recv() is None
        assert served.proc.wait(BACKSTOP) == 0
        log = served.out.rest()
        assert "Traceback" not in log, log


def test_a_bare_health_port_is_on_loopback() -> None:
    options = ServerOptions()
    options.parseOptions(["--health", "7911"])  # type: ignore[no-untyped-call]
    assert options["health"] == "tcp:7911:interface=127.0.0.1"
    options = ServerOptions()
    options.parseOptions(["--health", "tcp:7911:interface=10.0.0.2"])  # type: ignore[no-untyped-call]
    assert options["health"] == "tcp:7911:interface=10.0.0.2"


def test_a_journal_the_store_stopped_taking_is_not_ready(tmp_path: Path) -> None:
    """The file is full (SQLite's own cap on its pages): the journal keeps its rows for
    later, and `/ready` names the store until they are written."""
    path = tmp_path / "full.sqlite3"
    clock = Clock()
    journal = StoreJournal.open(path, clock)
    service = ServerService(make_factory(clock, journal=journal), [], clock,
                            journal=journal, health="tcp:0:interface=127.0.0.1")
    service.listening = True
    assert service.not_ready() == []
    journal.table_opened(1, 0.0, {})
    clock.advance(0)
    conn: sqlite3.Connection = journal.store._conn  # type: ignore[attr-defined]
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages}")
    for i in range(200):
        journal.command(1, float(i), cmd.Chat("1", f"{i} " + "x" * 200))
    clock.advance(0)
    assert service.not_ready() == ["store"]
    conn.execute("PRAGMA max_page_count = 1073741823")
    clock.advance(CATCH_UP_SECONDS)
    assert service.not_ready() == []
    journal.close()
