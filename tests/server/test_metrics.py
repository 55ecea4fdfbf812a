"""The Prometheus metrics (server/metrics.py, server/service/metrics.py) move when their
events happen: a table's moves, a journal's commits and backlog, and the gauges read at
a scrape. Each is read from the process's registry, as `/metrics` serves it, before and
after."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from peer_kit import Peer
from prometheus_client import REGISTRY
from table_kit import make_table, play_out, seated
from twisted.internet.task import Clock

from pisyedili.server.service.assembly import make_factory
from pisyedili.server.service.metrics import COLLECTOR
from pisyedili.server.store.journal import StoreJournal
from pisyedili.server.table import commands as cmd
from pisyedili.server.table.core import TableError


def sample(name: str, **labels: str) -> float:
    """The registry's value of `name` with `labels`, 0 where it has none yet."""
    value = REGISTRY.get_sample_value(name, labels)
    return 0.0 if value is None else value


def test_every_move_a_table_applies_is_counted_and_a_refused_one_is_not() -> None:
    rig = make_table("classic", 2, match_end="deals:1")
    humans = seated(rig, ["h", "b"])
    rig.table.start(rig.host)
    before = sample("pisyedili_moves_total")
    play_out(rig, humans, random.Random(4))
    applied = sum(len(record.moves) for record in rig.table.match.records)
    assert applied > 0
    assert sample("pisyedili_moves_total") - before == applied
    with pytest.raises(TableError, match="no_game"):  # the match is over: refused
        rig.table.move(humans[0], {"kind": "draw"})
    assert sample("pisyedili_moves_total") - before == applied


def test_a_journal_commit_is_timed_and_its_rows_are_backlog_until_then(
        tmp_path: Path) -> None:
    clock = Clock()
    journal = StoreJournal.open(tmp_path / "journal.sqlite3", clock)
    try:
        commits = sample("pisyedili_journal_commit_seconds_count")
        journal.session_opened(1, b"t" * 32, "Ayşe", "127.0.0.1", clock.seconds())
        one = journal.backlog_rows
        journal.session_opened(2, b"u" * 32, "Deniz", "127.0.0.1", clock.seconds())
        assert one > 0
        assert journal.backlog_rows == 2 * one
        clock.advance(0)  # the flush
        assert journal.backlog_rows == 0
        assert sample("pisyedili_journal_commit_seconds_count") == commits + 1
    finally:
        journal.close()


def test_a_scrape_reads_tables_by_phase_and_the_journal_backlog(tmp_path: Path) -> None:
    clock = Clock()
    journal = StoreJournal.open(tmp_path / "journal.sqlite3", clock)
    factory = make_factory(clock, journal=journal)
    COLLECTOR.watch(factory, journal)
    try:
        waiting = sample("pisyedili_tables", state="waiting")
        host = factory.sessions.open("Ayşe", Peer())
        table = factory.lobby.create(host, "classic", 2)
        table.handle(cmd.Join(host.player_id, host.name))
        assert sample("pisyedili_tables", state="waiting") == waiting + 1
        assert sample("pisyedili_journal_backlog_rows") > 0  # not flushed yet
        assert sample("pisyedili_sessions", transport="away") >= 1  # no connection
        clock.advance(0)
        assert sample("pisyedili_journal_backlog_rows") == 0
    finally:
        COLLECTOR.forget(factory)
        journal.close()
    assert sample("pisyedili_tables", state="waiting") == waiting
