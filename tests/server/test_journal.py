"""The journal on a real SQLite file: what it writes, what it holds back, what it reads.

A table's stored commands, read back from the file and replayed into a fresh core,
give the live core's effects at every step and its state at the end; sends wait for
the commit of what they tell of; a restart's `Restored` re-arms timers from their
deadlines and marks everyone away.
"""

from __future__ import annotations

import json
import random
import sqlite3
from dataclasses import asdict
from pathlib import Path
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from table_kit import make_table, play_out, run_clock, seated
from test_table_core import (
    SETTINGS,
    Loop,
    Script,
    assert_same_table,
    new_core,
    run_script,
    scripts,
)
from twisted.internet.task import Clock

from pisyedili.server import rules
from pisyedili.server.people.session import Sessions
from pisyedili.server.service.assembly import make_factory
from pisyedili.server.store.journal import (
    CATCH_UP_SECONDS,
    HELD_CATCH_UP_SECONDS,
    StoreJournal,
    core_code,
    token_hash,
)
from pisyedili.server.store.schema import SCHEMA_VERSION
from pisyedili.server.store.sqlite import SqliteStore
from pisyedili.server.table import commands as cmd
from pisyedili.server.table.core import GRACE_TIMER, TURN_TIMER, TableSettings
from pisyedili.server.table.effects import MatchOver, SetTimer
from pisyedili.server.table.lobby import _KEPT_SETTINGS


def test_commands_survive_the_record_form() -> None:
    samples: list[cmd.Command] = [
        cmd.Join("1", "Ayşe", True), cmd.Play("2", {"kind": "play", "card": "7h"}),
        cmd.AddBot("1", 2, "hard", 2**63), cmd.TimerFired("grace:3"), cmd.BotMoved(4, 17),
        cmd.Restored(), cmd.Rematch("1", False, 5), cmd.Sit("3", 1, registered=True),
        cmd.Join("4", "Mehmet", registered=True)]
    for command in samples:
        assert cmd.from_record(cmd.to_record(command)) == command
    for bad in ([], ["Nope"], ["Sit", "1"], [3]):
        try:
            cmd.from_record(bad)
        except ValueError:
            continue
        raise AssertionError(f"{bad} was read as a command")


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scripts())
def test_a_table_rebuilt_from_the_file_equals_the_live_one_at_every_step(
        tmp_path: Path, script: Script) -> None:
    rules, seats, choices, rated, _ = script
    live = run_script(*script)
    path = tmp_path / f"{rules}-{seats}-{rated}-{abs(hash(tuple(choices)))}.sqlite3"
    clock = Clock()
    journal = StoreJournal.open(path, clock)
    journal.table_opened(1, 0.0, {"anything": "json"})
    for command, now in live.log:
        journal.command(1, now, command)
    journal.close()

    saved = StoreJournal.open(path, clock).load()
    (table,) = saved.tables
    assert [(c, at) for at, c in table.commands] == live.log
    fresh = new_core(rules, seats, rated)
    for (at, command), effects in zip(table.commands, live.effects, strict=True):
        assert fresh.handle(command, at) == effects
    assert_same_table(fresh, live.core)


def journal_like_the_runner(path: Path, rules: str, seats: int,
                            log: list[tuple[cmd.Command, float]], rated: bool = False) -> None:
    """Write `log` as the runner does: each command, and the core at each deal's start."""
    journal = StoreJournal.open(path, Clock())
    journal.table_opened(1, 0.0, {})
    core, dealt = new_core(rules, seats, rated), 0
    for command, now in log:
        journal.command(1, now, command)
        core.handle(command, now)
        if core.deals_begun != dealt:
            dealt = core.deals_begun
            journal.snapshot(core)
    journal.close()


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scripts())
def test_a_table_rebuilt_from_its_deal_snapshot_equals_the_live_one(
        tmp_path: Path, script: Script) -> None:
    rules, seats, choices, rated, _ = script
    live = run_script(*script)
    path = tmp_path / f"snap-{rules}-{seats}-{rated}-{abs(hash(tuple(choices)))}.sqlite3"
    journal_like_the_runner(path, rules, seats, live.log, rated)
    (table,) = StoreJournal.open(path, Clock()).load().tables
    assert table.core is not None  # the match started: a deal began
    assert len(table.commands) < len(live.log)  # only what came after the snapshot
    assert [(c, at) for at, c in table.commands] == live.log[len(live.log)
                                                            - len(table.commands):]
    core = table.core
    for at, command in table.commands:
        core.handle(command, at)
    assert_same_table(core, live.core)


def test_a_snapshot_from_other_code_is_not_used(tmp_path: Path) -> None:
    live = run_script("classic", 3, [7, *range(1, 200, 3)])
    path = tmp_path / "other.sqlite3"
    journal_like_the_runner(path, "classic", 3, live.log)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE table_snapshots SET code = 'an older server'")
    conn.commit()
    conn.close()
    (table,) = StoreJournal.open(path, Clock()).load().tables
    assert table.core is None and len(table.commands) == len(live.log)  # all of them


def test_the_fingerprint_tells_a_compiled_engine_from_an_interpreted_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A deal pickled by the mypyc build does not load into the interpreted class (nor the
    other way), so a server switched between the two must replay, not unpickle."""
    this = core_code()
    core_code.cache_clear()
    monkeypatch.setattr(rules, "COMPILED", not rules.COMPILED)
    try:
        assert core_code() != this
    finally:
        core_code.cache_clear()


def test_sends_wait_for_the_commit_of_what_they_tell(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    clock = Clock()
    journal = StoreJournal.open(path, clock)
    sent: list[str] = []
    journal.after_commit(sent.append, "before")  # nothing waits: at once
    assert sent == ["before"]
    journal.table_opened(1, 0.0, {})
    journal.command(1, 0.0, cmd.Join("1", "A"))
    journal.after_commit(sent.append, "reply")
    journal.after_commit(sent.append, "update")
    assert sent == ["before"]
    other = sqlite3.connect(path)  # another reader sees nothing yet
    assert other.execute("SELECT count(*) FROM table_commands").fetchone() == (0,)
    clock.advance(0)  # the end of the reactor turn: one commit, then the sends, in order
    assert sent == ["before", "reply", "update"]
    assert other.execute("SELECT count(*) FROM table_commands").fetchone() == (1,)
    assert journal.commits == 1
    journal.close()


def _full_journal(path: Path, clock: Clock, fenced: bool
                  ) -> tuple[StoreJournal, sqlite3.Connection, sqlite3.Connection]:
    """A journal at `path` (`fenced`, as a cluster's is) with table 1 open, its file
    made full (SQLite's own limit on its pages), and 200 chat lines sent to it that the
    file cannot take; its store's own connection, and another to read the file with."""
    journal = StoreJournal.open(path, clock)
    if fenced:
        journal.fence(lambda tables: [])
    journal.table_opened(1, 0.0, {})
    clock.advance(0)
    conn = journal.store._conn  # type: ignore[attr-defined]  # (the store's own connection)
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages}")  # full
    for i in range(200):
        journal.command(1, float(i), cmd.Chat("1", f"{i} " + "x" * 200))
    return journal, conn, sqlite3.connect(path)


def test_a_journal_that_falls_behind_writes_what_it_kept_once_it_can(tmp_path: Path) -> None:
    """A commit fails (the file is full: SQLite's own limit on its pages), play goes on
    (what waited is sent), and the rows are kept, with the rows after them, and written
    in order once the file takes them again; then sends wait for commits again."""
    path = tmp_path / "full.sqlite3"
    clock = Clock()
    journal, conn, other = _full_journal(path, clock, fenced=False)
    sent: list[str] = []
    journal.after_commit(sent.append, "update")
    clock.advance(0)
    assert sent == ["update"], "play goes on: what waited is sent"
    assert other.execute("SELECT count(*) FROM table_commands").fetchone() == (0,)
    journal.command(1, 200.0, cmd.Chat("1", "200"))  # kept, after the others
    journal.after_commit(sent.append, "while behind")
    clock.advance(0)
    assert sent[-1] == "while behind"
    clock.advance(CATCH_UP_SECONDS)  # still full: still kept
    assert other.execute("SELECT count(*) FROM table_commands").fetchone() == (0,)
    conn.execute("PRAGMA max_page_count = 1073741823")  # room again
    clock.advance(CATCH_UP_SECONDS)
    assert other.execute("SELECT count(*) FROM table_commands").fetchone() == (201,)
    journal.command(1, 201.0, cmd.Chat("1", "201"))
    journal.after_commit(sent.append, "kept up")
    assert sent[-1] == "while behind", "a send waits for its commit again"
    clock.advance(0)
    assert sent[-1] == "kept up"
    journal.close()
    (table,) = StoreJournal.open(path, clock).load().tables
    texts = [command.text for _, command in table.commands]  # type: ignore[union-attr]
    assert texts[:2] == ["0 " + "x" * 200, "1 " + "x" * 200] and texts[-2:] == ["200", "201"]
    assert len(texts) == 202


def test_a_shared_journal_that_falls_behind_sends_nothing_until_it_wrote_it(
        tmp_path: Path) -> None:
    """A cluster's journal (fenced: another process reads it to take a table over)
    whose commit fails sends nothing that waited for it, nor anything after it, until
    the catch-up has written its rows; meanwhile it says it is `holding`, which has
    requests refused. Then what waited goes, in order, and sends wait for commits as
    before."""
    path = tmp_path / "shared.sqlite3"
    clock = Clock()
    journal, conn, other = _full_journal(path, clock, fenced=True)
    sent: list[str] = []
    journal.after_commit(sent.append, "ok")
    assert not journal.holding
    clock.advance(0)
    assert journal.holding and sent == [], "nothing told of what is not written"
    journal.after_commit(sent.append, "later")  # nothing to write: held all the same
    journal.command(1, 200.0, cmd.Chat("1", "200"))
    journal.after_commit(sent.append, "update")
    clock.advance(HELD_CATCH_UP_SECONDS)  # still full
    assert journal.holding and sent == []
    assert other.execute("SELECT count(*) FROM table_commands").fetchone() == (0,)
    conn.execute("PRAGMA max_page_count = 1073741823")  # room again
    clock.advance(HELD_CATCH_UP_SECONDS)
    assert other.execute("SELECT count(*) FROM table_commands").fetchone() == (201,)
    assert sent == ["ok", "later", "update"] and not journal.holding
    journal.command(1, 201.0, cmd.Chat("1", "201"))
    journal.after_commit(sent.append, "kept up")
    assert sent[-1] == "update", "a send waits for its commit again"
    clock.advance(0)
    assert sent[-1] == "kept up"
    journal.close()


class Member:
    """Whatever a send after a commit reaches (a connection, in the server)."""

    def __init__(self) -> None:
        self.got: list[str] = []

    def send(self, what: str) -> None:
        self.got.append(what)


def test_a_table_taken_over_elsewhere_is_fenced_and_its_members_get_nothing(
        tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    clock = Clock()
    journal = StoreJournal.open(path, clock)
    let_go: list[set[int]] = []
    here, there = Member(), Member()

    def fenced(tables: set[int]) -> list[object]:
        let_go.append(tables)
        return [here]

    journal.fence(fenced)
    journal.table_opened(1, 0.0, {})
    journal.table_opened(2, 0.0, {})
    clock.advance(0)
    taker = SqliteStore(str(path))  # another process takes table 1 over
    assert taker.hold_table(1) == 1
    journal.command(1, 1.0, cmd.Join("1", "A"))
    journal.command(2, 1.0, cmd.Join("2", "B"))
    journal.after_commit(here.send, "ok: A joined table 1")
    journal.after_commit(there.send, "ok: B joined table 2")
    clock.advance(0)
    assert let_go == [{1}]
    assert here.got == [], "a move at a fenced table is never acknowledged"
    assert there.got == ["ok: B joined table 2"]
    journal.command(1, 2.0, cmd.Leave("1"))  # whatever still comes for it
    clock.advance(0)
    assert let_go == [{1}, {1}]
    assert [c[0] for c in taker.read_journal().commands] == [2]
    taker.close()
    journal.close()


@pytest.mark.parametrize("taken", [False, True], ids=["kept", "taken-over"])
def test_a_match_is_kept_once_the_command_that_ended_it_is(tmp_path: Path,
                                                           taken: bool) -> None:
    """The move that ends a match is journalled before the match is kept (and rated);
    a fenced one (the table taken over meanwhile) never ended that match, so it is
    not kept."""
    path = tmp_path / "j.sqlite3"
    kept: list[MatchOver] = []
    ended: list[bool] = []

    class Watched(StoreJournal):
        def after_commit(self, fn: Any, *args: Any) -> None:
            if getattr(fn, "__name__", "") == "_match_over":  # the match just ended
                assert kept == [], "not before its command is committed"
                ended.append(True)
                if taken:
                    taker = SqliteStore(str(path))  # another process holds the table now
                    taker.hold_table(7)
                    taker.close()
            super().after_commit(fn, *args)

    clock = Clock()
    journal = Watched(SqliteStore(str(path)), clock)
    let_go: list[set[int]] = []
    rig = make_table("classic", 2, match_end="deals:1", journal=journal,
                     on_match=kept.append, clock=clock)

    def fenced(tables: set[int]) -> list[object]:
        let_go.append(tables)
        rig.table.runner.let_go()  # as the lobby does (service/takeover.py)
        return []

    journal.fence(fenced)
    journal.table_opened(7, 0.0, {})
    humans = seated(rig, ["h", "h"])
    rig.table.start(humans[0])
    play_out(rig, humans, random.Random(3))
    run_clock(clock)
    assert ended == [True]
    assert len(kept) == (0 if taken else 1)
    assert let_go == ([{7}] if taken else [])
    journal.close()


def test_sessions_are_kept_by_token_hash_only(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    journal = StoreJournal.open(path, Clock())
    journal.session_opened(7, token_hash("secret-token"), "Ayşe", "127.0.0.1", 1.0)
    journal.session_opened(8, token_hash("other"), "Mehmet", "127.0.0.1", 1.0)
    journal.session_forgotten(8)
    journal.close()
    for stored in tmp_path.iterdir():  # the file and anything beside it (WAL, shm)
        assert b"secret-token" not in stored.read_bytes()
    saved = StoreJournal.open(path, Clock()).load()
    assert [(s.player_id, s.name) for s in saved.sessions] == [(7, "Ayşe")]
    assert saved.sessions[0].token == token_hash("secret-token")
    assert saved.last_player == 8  # forgotten, but never handed out again


def test_a_session_moved_here_is_written_over_the_row_its_old_home_left(db: str) -> None:
    """A session a process takes in (its old home stopping) or adopts (its player
    resumed here) has a row in the shared journal still when its old home's lease was
    in doubt (it may have been rebuilt elsewhere from that row): the new home writes
    over it, refused by no key, and the row says where the player is now."""
    hashed = token_hash("secret-token")
    old = StoreJournal.open(db, Clock())
    old.session_opened(7, hashed, "Ayşe", "10.0.0.1", 1.0)
    old.close()
    new = StoreJournal.open(db, Clock())
    Sessions(Clock(), 60.0, new).take_in("7", "Ayşe", hashed, "10.0.0.2")
    new.close()
    saved = StoreJournal.open(db, Clock()).load()
    assert [(s.player_id, s.token, s.address) for s in saved.sessions] == [
        (7, hashed, "10.0.0.2")]


def test_an_unreadable_command_drops_only_its_table(tmp_path: Path) -> None:
    path = tmp_path / "bad.sqlite3"
    journal = StoreJournal.open(path, Clock())
    for table_id in (1, 2):
        journal.table_opened(table_id, 0.0, {})
        journal.command(table_id, 0.0, cmd.Join("1", "A"))
    journal.close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE table_commands SET command = x'c1' WHERE table_id = 1")
    conn.commit()
    conn.close()
    saved = StoreJournal.open(path, Clock()).load()
    assert [t.id for t in saved.tables] == [2] and saved.unreadable == [1]
    assert saved.last_table == 2


def test_the_journal_migrates_an_older_file(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE matches (id INTEGER PRIMARY KEY, table_id INTEGER NOT NULL, "
                 "rules TEXT NOT NULL, options TEXT NOT NULL, players TEXT NOT NULL, "
                 "started_at REAL NOT NULL, finished_at REAL NOT NULL, totals TEXT NOT NULL, "
                 "winners TEXT NOT NULL)")
    conn.execute("CREATE TABLE deals (match_id INTEGER NOT NULL, deal_no INTEGER NOT NULL, "
                 "result TEXT NOT NULL, record TEXT NOT NULL, PRIMARY KEY (match_id, deal_no))")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    StoreJournal.open(path, Clock()).close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    assert conn.execute("SELECT count(*) FROM live_tables").fetchone() == (0,)


def test_restored_rearms_timers_from_their_deadlines_and_marks_everyone_away() -> None:
    """The outage (from the last command to `Restored`) is off every clock: the turn
    has what it had left at the last command, however long the server was down."""
    core = new_core("classic", 2)
    core.handle(cmd.Join("1", "A"), 0.0)
    core.handle(cmd.Join("2", "B"), 0.0)
    core.handle(cmd.Ready("2", True), 0.0)
    core.handle(cmd.Start("1", 9), 100.0)
    assert core.timers[TURN_TIMER] == 100.0 + SETTINGS.turn_seconds
    core.handle(cmd.Resync("1"), 102.0)  # the last command: 2 s of the turn gone
    out = core.handle(cmd.Restored(), 130.0)
    timers = {e.key: e.delay for e in out if isinstance(e, SetTimer)}
    assert timers[TURN_TIMER] == SETTINGS.turn_seconds - 2.0  # what was left of the turn
    to_act = core.match.deal.to_act if core.match is not None else None
    acting = next(m for m in ("1", "2") if core.seat_of(m) == to_act)
    assert core.snapshot(acting)["deadline"] == SETTINGS.turn_seconds - 2.0
    for member in ("1", "2"):
        assert timers[GRACE_TIMER + member] == SETTINGS.grace_seconds
        assert core.snapshot(member)["table"]["seats"][core.seat_of(member)]["connected"] \
            is False
    late = core.handle(cmd.Restored(), 10_000.0)  # long after: nothing more ran out
    assert {e.key: e.delay for e in late if isinstance(e, SetTimer)} == timers


def test_a_restart_right_after_a_deal_snapshot_keeps_the_turns_time(tmp_path: Path) -> None:
    """The time of the last command is in the deal snapshot: a table rebuilt from the
    snapshot alone takes the same outage off its clock as the live table does."""
    live = Loop(new_core("classic", 2))
    for command in (cmd.Join("1", "A"), cmd.Join("2", "B"), cmd.Ready("2", True)):
        live.do(command)
    live.now = 100.0
    live.do(cmd.Start("1", 9))  # a deal's start: the snapshot
    path = tmp_path / "snap-restored.sqlite3"
    journal_like_the_runner(path, "classic", 2, live.log)
    (table,) = StoreJournal.open(path, Clock()).load().tables
    assert table.core is not None and table.commands == []
    live.now = 1_000.0
    restored = live.do(cmd.Restored())
    assert table.core.handle(cmd.Restored(), 1_000.0) == restored
    turn = [e.delay for e in restored if isinstance(e, SetTimer) and e.key == TURN_TIMER]
    assert turn == [SETTINGS.turn_seconds]
    assert_same_table(table.core, live.core)


def test_an_older_servers_rated_table_is_rebuilt_rated_with_its_seats(tmp_path: Path) -> None:
    """Older servers kept a table's rated flag beside its setup and wrote `Join` and
    `Sit` without `registered` (their handlers had checked the guests already): such a
    file still loads, the table is rated, and every stored seat is taken again."""
    path = tmp_path / "older.sqlite3"
    StoreJournal.open(path, Clock()).close()  # today's schema, then rows as older servers wrote
    settings = asdict(TableSettings())
    setup = {"name": "t", "options": asdict(rules.Options.make("classic", 3)),
             "private": False, "code": None, "opener": "1", "address": "local",
             "settings": {key: settings[key] for key in _KEPT_SETTINGS}}
    old_commands = [["Join", "1", "Ayşe", False], ["Join", "3", "Guest", True],
                    ["Join", "2", "Mehmet", False], ["Sit", "2", 2]]
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO live_tables (id, opened_at, setup) VALUES (1, 0.0, ?)",
                 (json.dumps(setup),))
    conn.execute("INSERT INTO live_table_flags VALUES (1, 1)")
    conn.executemany("INSERT INTO table_commands VALUES (1, ?, 0.0, ?)",
                     [(seq, msgpack.packb(c)) for seq, c in enumerate(old_commands)])
    conn.commit()
    conn.close()
    clock = Clock()
    journal = StoreJournal.open(path, clock)
    try:
        (saved,) = journal.load().tables
        assert saved.setup["rated"] is True
        assert saved.commands[-1] == (0.0, cmd.Sit("2", 2, registered=True))
        factory = make_factory(clock, journal=journal)
        (table,) = factory.lobby.tables()
        assert table.core.rated
        assert [table.core.seat_of(m) for m in ("1", "2", "3")] == [0, 2, None]
        assert factory.lobby.snapshot()["tables"][0]["rated"] is True
    finally:
        journal.close()
