"""The match store on a real SQLite file: schema and migrations, what is kept, retention,
backups, and a whole match over loopback that ends up in the file."""

from __future__ import annotations

import dataclasses
import functools
import json
import random
import sqlite3
import time
from pathlib import Path

import pytest
import pytest_twisted
import wireclient
from net_match import open_table, play_to_match_end
from poll_kit import BACKSTOP, poll_until_async
from twisted.internet import reactor
from twisted.internet.task import Clock
from wireclient import Server

from pisyedili.server import rules as engine
from pisyedili.server.service import tap
from pisyedili.server.service.assembly import make_factory
from pisyedili.server.service.server import ServerService
from pisyedili.server.store import DAY, Archive, RatingPoint
from pisyedili.server.store.schema import SCHEMA_VERSION
from pisyedili.server.store.sqlite import MIGRATIONS, SqliteStore, backup_file
from pisyedili.server.table import commands as cmd
from pisyedili.server.table.core import TableCore, TableSettings
from pisyedili.server.table.effects import AskBot, CancelTimer, MatchOver, SetTimer
from pisyedili.server.table.stand_in import make_bot

SETTINGS = TableSettings(turn_seconds=5, grace_seconds=5, bot_delay=0.5, deal_pause=1,
                         max_timeouts_before_bot=1)


def play_match(seed: int, name: str = "Ayse", rules: str = "classic",
               match_end: str = "deals:4") -> MatchOver:
    """A whole match in a table core: `name` at seat 0 (a stand-in bot soon plays for
    them, as their turn timer runs out), an easy bot at seat 1; its `MatchOver`."""
    core = TableCore(3, "t", engine.Options.make(rules, 2, match_end=match_end),
                     private=False, host="1", settings=SETTINGS)
    bot_rng = random.Random(seed)
    timers: dict[str, float] = {}
    pending: list[cmd.Command] = [cmd.Join("1", name), cmd.AddBot("1", 1, "easy", 0),
                                  cmd.Start("1", seed)]
    now = 1_000.0
    for _ in range(100_000):
        if not pending:
            key = min(timers, key=timers.__getitem__)
            now = timers.pop(key)
            pending.append(cmd.TimerFired(key))
        for effect in core.handle(pending.pop(0), now):
            if isinstance(effect, MatchOver):
                return effect
            if isinstance(effect, SetTimer):
                timers[effect.key] = now + effect.delay
            elif isinstance(effect, CancelTimer):
                timers.pop(effect.key, None)
            elif isinstance(effect, AskBot):
                bot = make_bot(effect.level, bot_rng)
                bot.observe(effect.events)
                pending.append(cmd.BotMoved(effect.serial, int(bot.choose(effect.view,
                                                                          effect.legal))))
    raise AssertionError("the match never ended")


@pytest.fixture(scope="module")
def played() -> MatchOver:
    return play_match(11)


def test_a_new_store_is_wal_at_the_latest_version(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "s.sqlite3"
    store = SqliteStore(path)  # the directory is made
    store.close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert SCHEMA_VERSION == len(MIGRATIONS) >= 2
    conn.close()


def test_foreign_keys_are_enforced(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "s.sqlite3")
    with pytest.raises(sqlite3.IntegrityError):
        store._conn.execute("INSERT INTO deals VALUES (99, 1, '{}', '{}')")
    store.close()


def test_a_version_1_database_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(path)
    MIGRATIONS[0](conn)  # version 1, as the first servers made it
    players = [{"seat": 0, "name": "Mehmet", "kind": "human", "level": None},
               {"seat": 1, "name": "bot (easy)", "kind": "bot", "level": "easy"}]
    conn.execute("INSERT INTO matches VALUES (7, 1, 'classic', '{}', ?, 1.0, 2.0, "
                 "'[3,0]', '[1]')", (json.dumps(players),))
    conn.execute("INSERT INTO deals VALUES (7, 1, '{\"reason\":\"out\"}', '{}')")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()

    store = SqliteStore(path)
    assert store._conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    (found,) = store.matches_of("Mehmet")  # through the new per-seat table
    assert found["id"] == 7 and found["players"] == players and found["winners"] == [1]
    assert store.match(7)["deals"] == [  # type: ignore[index]
        {"deal_no": 1, "result": {"reason": "out"}, "record": {}}]
    store.close()


def test_a_version_8_database_gets_a_rating_history_from_its_ratings(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(path)
    for migration in MIGRATIONS[:8]:
        migration(conn)
    conn.execute("INSERT INTO ratings VALUES ('classic', 'a:1', 27.5, 6.0, 9.5, 14, 9, 50.0)")
    conn.execute("PRAGMA user_version = 8")
    conn.commit()
    conn.close()

    store = SqliteStore(path)
    # The one point known: where the rating stands, at its last update; later matches
    # add theirs after it.
    assert store.rating_history("a:1", "classic", 10) == [RatingPoint(14, 50.0, 27.5, 6.0)]
    store.save_rating("classic", "a:1", 28.0, 5.9, 10.3, True, 60.0)
    assert store.rating_history("a:1", "classic", 10) == [
        RatingPoint(14, 50.0, 27.5, 6.0), RatingPoint(15, 60.0, 28.0, 5.9)]
    store.close()


def test_a_database_newer_than_the_code_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(RuntimeError, match="upgrade"):
        SqliteStore(path)


def test_a_match_round_trips_and_its_deals_replay(tmp_path: Path, played: MatchOver) -> None:
    store = SqliteStore(tmp_path / "s.sqlite3")
    match_id = store.record_match(played)
    (listed,) = store.recent_matches(10)
    got = store.match(match_id)
    assert got is not None and listed == {k: v for k, v in got.items() if k != "deals"}
    assert got["players"] == [
        {"seat": 0, "name": "Ayse", "kind": "human", "level": None, "player": 1},
        {"seat": 1, "name": "bot 2", "kind": "bot", "level": "easy"}]
    assert (got["rules"], got["table_id"]) == ("classic", 3)
    assert got["options"]["match_end"] == "deals:4"
    assert got["totals"] == played.totals and got["winners"] == played.winners
    assert got["started_at"] < got["finished_at"]
    assert [d["deal_no"] for d in got["deals"]] == [1, 2, 3, 4]
    totals = [0, 0]
    for deal in got["deals"]:
        replayed = engine.replay(engine.DealRecord.from_wire(deal["record"]))
        assert replayed.result is not None
        assert replayed.result.to_wire() == deal["result"]
        totals = [t + p for t, p in zip(totals, deal["result"]["points"], strict=True)]
    assert totals == got["totals"]
    assert store.match(match_id + 1) is None
    store.close()


def test_lists_are_newest_first_and_by_name(tmp_path: Path, played: MatchOver) -> None:
    store = SqliteStore(tmp_path / "s.sqlite3")
    ids = [store.record_match(dataclasses.replace(
        played, finished_at=played.finished_at + i,
        players=[{**played.players[0], "name": name}, played.players[1]]))
        for i, name in enumerate(["Ayse", "Mehmet", "Ayse"])]
    assert [m["id"] for m in store.recent_matches(10)] == ids[::-1]
    assert [m["id"] for m in store.recent_matches(2)] == [ids[2], ids[1]]
    assert [m["id"] for m in store.matches_of("Ayse", 10)] == [ids[2], ids[0]]
    assert [m["id"] for m in store.matches_of("Ayse", 1)] == [ids[2]]
    assert [m["id"] for m in store.matches_of("bot 2", 10)] == ids[::-1]
    assert store.matches_of("Zeynep") == []
    store.close()


def test_prune_forgets_old_matches_and_their_deals(tmp_path: Path, played: MatchOver) -> None:
    store = SqliteStore(tmp_path / "s.sqlite3")
    now = 100 * 86400.0
    old = store.record_match(dataclasses.replace(played, finished_at=now - 31 * 86400))
    new = store.record_match(dataclasses.replace(played, finished_at=now - 29 * 86400))
    assert store.prune(30, now=now) == 1
    assert [m["id"] for m in store.recent_matches()] == [new]
    assert store.match(old) is None
    counts = [store._conn.execute(f"SELECT count(*) FROM {t} WHERE match_id = ?",
                                  (old,)).fetchone()[0] for t in ("deals", "match_players")]
    assert counts == [0, 0]
    assert store.prune(30, now=now) == 0
    store.close()


def test_backup_is_a_readable_copy(tmp_path: Path, played: MatchOver) -> None:
    store = SqliteStore(tmp_path / "s.sqlite3")
    match_id = store.record_match(played)
    store.backup(tmp_path / "copy.sqlite3")
    backup_file(tmp_path / "s.sqlite3", tmp_path / "copy2.sqlite3")  # from outside, live
    store.close()
    for name in ("copy.sqlite3", "copy2.sqlite3"):
        copy = SqliteStore(tmp_path / name)
        assert copy.match(match_id) == SqliteStore(tmp_path / "s.sqlite3").match(match_id)
        copy.close()
    with pytest.raises(FileNotFoundError):
        backup_file(tmp_path / "missing.sqlite3", tmp_path / "x.sqlite3")


def test_the_backup_command(tmp_path: Path, played: MatchOver,
                            capsys: pytest.CaptureFixture[str]) -> None:
    store = SqliteStore(tmp_path / "s.sqlite3")
    store.record_match(played)
    tap.main(["backup", "--db", str(tmp_path / "s.sqlite3"), str(tmp_path / "b.sqlite3")])
    store.close()
    assert "backed up" in capsys.readouterr().out
    assert len(SqliteStore(tmp_path / "b.sqlite3").recent_matches()) == 1
    with pytest.raises(SystemExit) as exc:
        tap.main(["backup", "--db", str(tmp_path / "none.sqlite3"), str(tmp_path / "c")])
    assert exc.value.code == 1
    with pytest.raises(SystemExit) as exc:
        tap.main(["backup"])
    assert exc.value.code == 2


def test_the_server_options(tmp_path: Path) -> None:
    options = tap.ServerOptions()
    options.parseOptions([])  # type: ignore[no-untyped-call]
    assert options["db"].endswith("pisyedili.sqlite3") and options["keep-days"] == 0
    options = tap.ServerOptions()
    options.parseOptions(["--db", ":memory:", "--keep-days", "30"])  # type: ignore[no-untyped-call]
    assert (options["db"], options["keep-days"]) == (":memory:", 30)


@pytest_twisted.ensureDeferred
async def test_a_match_over_loopback_ends_up_in_the_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "live.sqlite3"
    archive = Archive(lambda: SqliteStore(path), reactor)
    await archive.open()
    # The harness's own server, its factory made with the archive.
    monkeypatch.setattr(wireclient, "make_factory",
                        functools.partial(make_factory, archive=archive))
    server = await Server.start()
    try:
        (ayse,), _ = await open_table(server, ["Ayse"], "classic", 2, bots=1,
                                      options={"match_end": "deals:2"})
        end = await play_to_match_end(ayse, random.Random(5))
        await archive.flush()  # the write was queued before this
    finally:
        await server.stop()
        await archive.close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    store = SqliteStore(path)
    (kept,) = store.recent_matches()
    assert [(p["name"], p["kind"]) for p in kept["players"]] == [
        ("Ayse", "human"), ("bot 2", "bot")]
    assert kept["totals"] == end["totals"] and kept["winners"] == end["winners"]
    full = store.match(kept["id"])
    assert full is not None and len(full["deals"]) == 2
    store.close()


@pytest_twisted.ensureDeferred
async def test_the_service_opens_and_closes_the_store(tmp_path: Path) -> None:
    options = tap.ServerOptions()
    options.parseOptions(["--listen", "tcp:0:interface=127.0.0.1", "--no-announce",  # type: ignore[no-untyped-call]
                          "--db", str(tmp_path / "svc.sqlite3"), "--keep-days", "1"])
    service = tap.makeService(options)
    service.startService()
    assert service.ready is not None
    await service.ready
    assert service.archive is not None
    await service.archive.flush()  # opened, migrated and pruned by now
    await service.stopService()
    conn = sqlite3.connect(tmp_path / "svc.sqlite3")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    conn.close()


@pytest_twisted.ensureDeferred
async def test_the_service_prunes_at_start_and_then_daily(tmp_path: Path,
                                                         played: MatchOver) -> None:
    """The pruning is a timer of the service's clock, started once the store is open:
    a match that became too old is forgotten at the next day's pruning, not before."""
    path = tmp_path / "daily.sqlite3"
    archive = Archive(lambda: SqliteStore(path), reactor)
    clock = Clock()
    service = ServerService(make_factory(reactor), [], clock, archive=archive,
                            keep_days=1)
    service.startService()
    try:
        # The store opens on its own thread.
        await poll_until_async(lambda: len(list(service)) == 1, BACKSTOP, "the pruning timer")
        await archive.flush()  # the first pruning, at start, has run
        old = dataclasses.replace(played, finished_at=time.time() - 2 * DAY)
        kept = await archive.call(lambda: archive.store.record_match(old))
        clock.advance(DAY - 1)
        await archive.flush()
        assert await archive.call(lambda: archive.store.match(kept)) is not None
        clock.advance(1)
        await archive.flush()
        assert await archive.call(lambda: archive.store.match(kept)) is None
    finally:
        await service.stopService()
    assert not clock.getDelayedCalls()  # the timer stopped with the service


class _Stopped:
    """Stands in for the reactor in the service: `running` False, so a failure to open
    the store does not stop the test's reactor."""

    running = False


@pytest.mark.parametrize("required", [True, False], ids=["--db", "default"])
@pytest_twisted.ensureDeferred
async def test_a_store_that_cannot_open(tmp_path: Path, required: bool) -> None:
    """An explicit `--db` that cannot be opened fails the server; the default one only
    logs (a unit file without `--db` still serves)."""
    (tmp_path / "file").write_text("")
    bad = tmp_path / "file" / "s.sqlite3"  # under a file: no folder can be made
    archive = Archive(lambda: SqliteStore(bad), reactor)
    factory = make_factory(reactor, archive=archive)
    service = ServerService(factory, [], _Stopped(), archive=archive,
                            store_required=required)
    service.startService()
    await poll_until_async(lambda: archive._closed, BACKSTOP, "the store's failure")
    assert service.failed is required
    await service.stopService()
