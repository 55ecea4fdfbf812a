"""What a table holds is bounded: a match's deals go at its end, a closed table goes whole.

The soak (`pisyedili-bench soak`, docs/bench.md) sees the heap grow while matches run,
by each finished deal's record and result, which the match keeps for the store. These
check that it stops there: a rematch does not carry the last match's deals, and a
table that closes leaves nothing behind (the soak never closes one): not its core,
not its timers, not its session or journal rows.
"""

from __future__ import annotations

import gc
import pickle
import random
import sqlite3
import weakref
from pathlib import Path

import pytest_twisted
from net_match import open_table
from table_kit import make_table, play_out, run_clock, seated
from twisted.internet import reactor, task
from wireclient import Server

from pisyedili.server.net.limits import ServerLimits
from pisyedili.server.store.journal import StoreJournal
from pisyedili.server.table.core import TableCore, TableSettings

QUIET = ServerLimits(rate=10_000, burst=10_000, ping_seconds=10_000, idle_seconds=20_000)
"""The clock jumps ahead: no heartbeat may close a connection meanwhile."""
SETTINGS = TableSettings(turn_seconds=0, grace_seconds=30, bot_delay=0, deal_pause=0)


def test_rematches_do_not_carry_the_last_matchs_deals() -> None:
    """The core as the journal pickles it at each match's end (two deals' records and
    results in it) is as large after twenty matches as after the first few."""
    rig = make_table("classic", 2, match_end="deals:2")
    (host,) = seated(rig, ["h", "b"])
    rig.table.start(host)
    rng = random.Random(3)
    sizes = []
    for _ in range(20):
        play_out(rig, [host], rng)
        assert rig.table.phase == "over" and len(rig.table.match.records) == 2
        sizes.append(len(pickle.dumps(rig.table.core, pickle.HIGHEST_PROTOCOL)))
        rig.table.rematch(host, True)
        run_clock(rig.clock)
    # Two deals pickle to about 1 KiB of some 22: five matches kept break the bound.
    assert max(sizes[-5:]) < 1.2 * max(sizes[:5]), sizes


@pytest_twisted.ensureDeferred
async def test_a_table_whose_player_left_is_freed_with_its_session_and_rows(
        tmp_path: Path) -> None:
    clock = task.Clock()
    path = tmp_path / "freed.sqlite3"
    # The tables' timers on the test's clock; the journal commits on reactor turns.
    journal = StoreJournal.open(path, reactor)
    server = await Server.start(clock=clock, settings=SETTINGS, limits=QUIET,
                                journal=journal)
    try:
        lobby, sessions = server.factory.lobby, server.factory.sessions
        (ann,), table_id = await open_table(server, ["ann"], "classic", 2, bots=1,
                                            options={"match_end": "deals:2"})
        runner = lobby.by_id(table_id)
        assert runner is not None
        # A weak reference to the runner; the core's address, as the compiled core
        # takes no weak reference.
        core, table = id(runner.core), weakref.ref(runner)
        del runner
        await ann.close()
        await server.dropped(ann)
        # Her grace runs out, a stand-in plays her seat to the match's end, she goes
        # then, and a table with nobody left closes.
        clock.advance(SETTINGS.grace_seconds)
        for _ in range(100_000):
            if lobby.by_id(table_id) is None:
                break
            clock.advance(0)
        assert lobby.by_id(table_id) is None and lobby.tables() == []
        assert len(sessions) == 0
        assert clock.getDelayedCalls() == []
        journal.flush()
        gc.collect()
        live = [o for o in gc.get_objects() if id(o) == core and isinstance(o, TableCore)]
        assert not live, gc.get_referrers(*live)
        assert table() is None, gc.get_referrers(table())
        with sqlite3.connect(path) as conn:
            for name in ("live_tables", "table_commands", "table_snapshots", "sessions"):
                assert conn.execute(f"SELECT count(*) FROM {name}").fetchone() == (0,), name
    finally:
        await server.stop()
        journal.close()
