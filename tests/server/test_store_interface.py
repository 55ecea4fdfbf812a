"""The store's interface, method by method, written against `Store` only.

Every test runs once per backend (`BACKENDS`): SQLite on a real temporary file, and
PostgreSQL on a fresh database of a real server (tests/pg_kit.py). A new
backend joins by adding a `Backend` there; no test here may reach past the interface
(no SQL, no connection), so each one holds for any backend.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor

from pisyedili.server.store import (
    Archive,
    Conflict,
    LadderRow,
    LogEntry,
    RatingPoint,
    RatingRow,
    SanctionRow,
    Store,
    StoreError,
    Viewer,
    is_url,
)
from pisyedili.server.store.base import DAY, JOURNAL_OPS, JournalOp
from pisyedili.server.store.postgres import PostgresStore
from pisyedili.server.store.schema import SCHEMA_VERSION
from pisyedili.server.store.sqlite import SqliteStore
from pisyedili.server.table.effects import MatchOver


@dataclass(frozen=True)
class Backend:
    name: str
    where: Callable[[Path], str]
    """Where a fresh store lives, given a test's own folder."""
    open: Callable[[str], Store]
    """The store at that place, opened (and migrated)."""
    server: str | None = None
    """The fixture of the database server it needs (`where` then makes a database there)."""


def _no_place(folder: Path) -> str:
    raise AssertionError("a backend on a server makes its databases there")


BACKENDS = [
    Backend("sqlite", lambda folder: str(folder / "store" / "s.sqlite3"), SqliteStore),
    Backend("postgres", _no_place, PostgresStore, server="postgres"),
]


@pytest.fixture(params=BACKENDS, ids=[b.name for b in BACKENDS])
def backend(request: pytest.FixtureRequest) -> Backend:
    found: Backend = request.param
    if found.server is not None:
        server = request.getfixturevalue(found.server)
        return replace(found, where=lambda folder: server.store())
    return found


@pytest.fixture
def where(backend: Backend, tmp_path: Path) -> str:
    return backend.where(tmp_path)


@pytest.fixture
def store(backend: Backend, where: str) -> Iterator[Store]:
    opened = backend.open(where)
    yield opened
    opened.close()


SESSIONS = {"Ayse": 1, "Mehmet": 2, "Can": 3, "Deniz": 4, "Nobody": 9, "Stranger": 10}
"""The player id of the session that plays under each name in these tests' matches."""


def seen_by(name: str, account: int | None = None) -> Viewer:
    """The viewer that the session of `SESSIONS` playing as `name` is."""
    return Viewer(SESSIONS[name], account)


def a_match(finished_at: float = 2_000.0, names: tuple[str, str] = ("Ayse", "Mehmet"),
            private: bool = False, deals: int = 2, totals: tuple[int, int] = (30, 101),
            bot: bool = False) -> MatchOver:
    """A finished match as plain data (the store keeps results and records as given)."""
    players: list[dict[str, Any]] = [
        {"seat": 0, "name": names[0], "kind": "human", "level": None,
         "player": SESSIONS[names[0]]},
        {"seat": 1, "name": names[1], "kind": "bot" if bot else "human",
         "level": "easy" if bot else None, "player": None if bot else SESSIONS[names[1]]}]
    return MatchOver(
        table_id=3, rules="classic", options={"rules": "classic", "players": 2},
        players=players, started_at=finished_at - 100, finished_at=finished_at,
        totals=list(totals), winners=[0],
        deals=[{"deal_no": n, "result": {"reason": "out", "n": n},
                "record": {"moves": list(range(n + 3)), "dealer": n % 2}}
               for n in range(1, deals + 1)],
        private=private)


# -- the store itself --------------------------------------------------------------------

def test_a_new_store_is_at_the_latest_schema_version(store: Store) -> None:
    assert store.schema_version() == SCHEMA_VERSION
    assert store.migrate() == SCHEMA_VERSION  # nothing left to do
    assert store.schema_version() == SCHEMA_VERSION


def test_what_is_kept_survives_closing_and_opening_again(backend: Backend, where: str) -> None:
    first = backend.open(where)
    match_id = first.record_match(a_match())
    account = first.create_account("Deniz", ["deniz"], "hash", 1.0)
    first.close()
    again = backend.open(where)
    try:
        assert again.match(match_id) is not None
        assert again.find_account(["deniz"]) == account
        assert again.schema_version() == SCHEMA_VERSION
    finally:
        again.close()


def test_a_transaction_commits_together_or_not_at_all(store: Store) -> None:
    with store.transaction():
        kept = store.create_account("Ayse", ["ayse"], "h1", 1.0)
        store.log_action(1.0, "Deniz", "kick", "Troll", "spam")
    with pytest.raises(ZeroDivisionError), store.transaction():
        store.create_account("Mehmet", ["mehmet"], "h2", 2.0)
        store.log_action(2.0, "Deniz", "ban", "Troll", "")
        1 / 0  # noqa: B018
    rows, keys = store.load_accounts()
    assert [row.name for row in rows] == ["Ayse"] and keys == {"ayse": kept}
    assert [entry.action for entry in store.moderation_log()] == ["kick"]


def test_transactions_nest_and_the_outer_one_decides(store: Store) -> None:
    with pytest.raises(KeyError), store.transaction():
        with store.transaction():
            store.create_account("Ayse", ["ayse"], "h", 1.0)
        assert store.find_account(["ayse"]) is not None  # seen inside
        raise KeyError("the outer block fails after the inner one ended")
    assert store.find_account(["ayse"]) is None
    with store.transaction(), store.transaction():
        store.create_account("Ayse", ["ayse"], "h", 1.0)
    assert store.find_account(["ayse"]) is not None


def test_a_failed_inner_block_undoes_its_own_part_only(store: Store) -> None:
    with store.transaction():
        kept = store.create_account("Ayse", ["ayse"], "h", 1.0)
        with pytest.raises(Conflict):  # its account row went in before its keys failed
            store.create_account("AYSE", ["other", "ayse"], "h", 2.0)
        store.log_action(3.0, "Deniz", "kick", "Troll", "")
    rows, keys = store.load_accounts()
    assert [r.id for r in rows] == [kept] and keys == {"ayse": kept}
    assert len(store.moderation_log()) == 1


def test_a_backup_holds_everything_kept_so_far(backend: Backend, store: Store,
                                              tmp_path: Path) -> None:
    match_id = store.record_match(a_match())
    deniz = store.create_account("Deniz", ["deniz"], "hash", 1.0)
    copy = backend.where(tmp_path / "copy")
    if not is_url(copy):  # a file's folder; a URL names no folder on this disk
        Path(copy).parent.mkdir(parents=True)
    store.backup(copy)
    store.record_match(a_match(3_000.0))  # after the copy: not in it
    copied = backend.open(copy)
    try:
        assert [m["id"] for m in copied.recent_matches()] == [match_id]
        assert copied.load_accounts()[1] == {"deniz": deniz}
    finally:
        copied.close()


def test_a_closed_store_fails_with_a_store_error(backend: Backend, where: str) -> None:
    closed = backend.open(where)
    closed.close()
    with pytest.raises(StoreError):
        closed.recent_matches()


# -- finished matches --------------------------------------------------------------------

def test_a_match_round_trips_with_its_deals(store: Store) -> None:
    played = a_match()
    match_id = store.record_match(played)
    found = store.match(match_id)
    assert found is not None
    assert {k: found[k] for k in ("id", "table_id", "rules", "options", "players",
                                  "started_at", "finished_at", "totals", "winners")} == {
        "id": match_id, "table_id": 3, "rules": "classic", "options": played.options,
        "players": played.players, "started_at": 1_900.0, "finished_at": 2_000.0,
        "totals": [30, 101], "winners": [0]}
    assert found["deals"] == played.deals
    assert store.match(match_id + 1) is None


def test_recent_matches_and_a_players_matches_newest_first(store: Store) -> None:
    old = store.record_match(a_match(1_000.0, ("Ayse", "Can")))
    new = store.record_match(a_match(3_000.0, ("Deniz", "Ayse")))
    other = store.record_match(a_match(2_000.0, ("Deniz", "Can")))
    assert [m["id"] for m in store.recent_matches()] == [new, other, old]
    assert [m["id"] for m in store.recent_matches(limit=1)] == [new]
    assert "deals" not in store.recent_matches()[0]
    assert [m["id"] for m in store.matches_of("Ayse")] == [new, old]
    assert [m["id"] for m in store.matches_of("Ayse", limit=1)] == [new]
    assert store.matches_of("Nobody") == []


def test_prune_forgets_old_matches_and_their_deals(store: Store) -> None:
    now = 100 * DAY
    old = store.record_match(a_match(now - 10 * DAY))
    kept = store.record_match(a_match(now - 1 * DAY))
    assert store.prune(5, now=now) == 1
    assert store.match(old) is None
    assert [m["id"] for m in store.recent_matches()] == [kept]
    assert store.prune(5, now=now) == 0


def test_history_pages_show_private_matches_to_their_players_only(store: Store) -> None:
    public = store.record_match(a_match(1_000.0, ("Ayse", "Mehmet"), deals=3))
    private = store.record_match(a_match(2_000.0, ("Ayse", "Can"), private=True))
    with_bot = store.record_match(a_match(3_000.0, ("Can", "Ayse"), bot=True))

    rows, total = store.history_page("recent", None, seen_by("Nobody"), 0, 10)
    assert [r["id"] for r in rows] == [with_bot, public] and total == 2
    assert rows[1]["private"] is False and rows[1]["deals"] == 3
    rows, total = store.history_page("recent", None, seen_by("Nobody"), 1, 1)
    assert [r["id"] for r in rows] == [public] and total == 2

    rows, total = store.history_page("mine", None, seen_by("Ayse"), 0, 10)
    assert [r["id"] for r in rows] == [private, public] and total == 2  # not as a bot
    assert rows[0]["private"] is True

    rows, total = store.history_page("player", "Ayse", seen_by("Mehmet"), 0, 10)
    assert [r["id"] for r in rows] == [with_bot, public] and total == 2
    rows, total = store.history_page("player", "Ayse", seen_by("Can"), 0, 10)
    assert [r["id"] for r in rows] == [with_bot, private, public] and total == 3
    with pytest.raises(ValueError):
        store.history_page("everything", None, seen_by("Ayse"), 0, 10)


def test_private_matches_are_seen_by_the_sessions_and_accounts_that_played_them(
        store: Store) -> None:
    """Never by name: a later guest who takes the name "Ayse" is another session."""
    private = store.record_match(a_match(1_000.0, ("Ayse", "Can"), private=True))
    public = store.record_match(a_match(2_000.0, ("Ayse", "Mehmet")))
    store.note_match_accounts(private, [(1, 42)], False)  # Can was logged in
    store.note_match_accounts(public, [(0, 41)], False)  # Ayse too, this time
    later_ayse, can_again = Viewer(99), Viewer(77, account=42)

    assert store.history_page("mine", None, later_ayse, 0, 10) == ([], 0)
    rows, total = store.history_page("player", "Ayse", later_ayse, 0, 10)
    assert [r["id"] for r in rows] == [public] and total == 1
    assert store.visible_deal(private, 1, later_ayse) is None
    assert store.account_matches(42, later_ayse) == []
    assert [m.id for m in store.account_matches(41, later_ayse)] == [public]

    rows, _ = store.history_page("mine", None, seen_by("Ayse"), 0, 10)
    assert [r["id"] for r in rows] == [public, private]
    rows, _ = store.history_page("mine", None, can_again, 0, 10)  # by the account
    assert [r["id"] for r in rows] == [private]
    assert store.visible_deal(private, 1, can_again) is not None
    assert [m.id for m in store.account_matches(42, can_again)] == [private]
    assert [m.id for m in store.account_matches(42, seen_by("Ayse"))] == [private]


def test_a_visible_deal_is_one_deal_of_a_match_the_viewer_may_see(store: Store) -> None:
    played = a_match(private=True)
    match_id = store.record_match(played)
    found = store.visible_deal(match_id, 2, seen_by("Mehmet"))
    assert found is not None
    assert found["id"] == match_id and found["private"] is True and found["deals"] == 2
    assert found["deal"] == played.deals[1]
    past = store.visible_deal(match_id, 3, seen_by("Ayse"))
    assert past is not None and past["deal"] is None
    assert store.visible_deal(match_id, 1, seen_by("Stranger")) is None
    assert store.visible_deal(match_id + 1, 1, seen_by("Ayse")) is None


# -- the journal -------------------------------------------------------------------------

def test_the_journal_reads_back_what_was_written(store: Store) -> None:
    assert set(JOURNAL_OPS) == {
        "table_opened", "table_closed", "command", "snapshot", "counter",
        "session_opened", "session_moved", "session_forgotten", "session_changed",
        "session_account"}
    store.write_journal([
        ("table_opened", (1, 10.0, {"name": "one", "rated": False})),
        ("counter", ("table", 1)),
        ("table_opened", (2, 11.0, {"name": "two"})),
        ("counter", ("table", 2)),
        ("command", (1, 0, 12.0, b"\x01")),
        ("command", (1, 1, 13.0, b"\x02")),
        ("command", (2, 0, 14.0, b"\x03")),
        ("snapshot", (1, 1, "code", b"core-a")),
        ("snapshot", (1, 2, "code", b"core-b")),  # replaces the first
        ("session_opened", (7, b"t7", "Ayse", "10.0.0.1", 15.0)),
        ("counter", ("player", 7)),
        ("session_opened", (8, b"t8", "Can", "10.0.0.2", 16.0)),
        ("counter", ("player", 8)),
        ("session_changed", (7, b"t7b", "Ayse K")),
        ("session_account", (7, 41)),
        ("session_account", (8, 42)),
        ("session_account", (8, None)),  # logged out
        ("session_moved", (9, b"t9", "Deniz", "10.0.0.3", 17.0)),  # no row yet
        ("session_moved", (8, b"t8", "Can", "10.0.0.4", 18.0)),  # over its old home's
    ])
    rows = store.read_journal()
    assert rows.tables == [(1, 10.0, {"name": "one", "rated": False}),
                           (2, 11.0, {"name": "two"})]
    assert rows.commands == [(1, 0, 12.0, b"\x01"), (1, 1, 13.0, b"\x02"),
                             (2, 0, 14.0, b"\x03")]
    assert rows.snapshots == [(1, 2, "code", b"core-b")]
    assert rows.sessions == [(7, b"t7b", "Ayse K", "10.0.0.1"), (8, b"t8", "Can", "10.0.0.4"),
                             (9, b"t9", "Deniz", "10.0.0.3")]
    assert rows.counters == {"table": 2, "player": 8}
    assert rows.session_accounts == {7: 41}
    assert rows.rated_tables == []

    store.write_journal([("table_closed", (1,)), ("session_forgotten", (7,)),
                         ("counter", ("table", 5))])
    rows = store.read_journal()
    assert [t[0] for t in rows.tables] == [2]
    assert rows.commands == [(2, 0, 14.0, b"\x03")] and rows.snapshots == []
    assert [s[0] for s in rows.sessions] == [8, 9] and rows.session_accounts == {}
    assert rows.counters == {"table": 5, "player": 8}


def test_a_journal_session_is_found_by_its_token_and_by_its_account(store: Store) -> None:
    """What another process of a cluster reads of a session it did not hold."""
    store.write_journal([
        ("session_opened", (7, b"t7", "Ayse", "10.0.0.1", 15.0)),
        ("session_opened", (8, b"t8", "Can", "10.0.0.2", 16.0)),
        ("session_opened", (9, b"t9", "Can 2", "10.0.0.2", 17.0)),
        ("session_account", (7, 41)),
        ("session_account", (8, 42)),
        ("session_account", (9, 42)),  # (two at once: one of a process that is gone)
    ])
    assert store.saved_session(b"t7") == (7, "Ayse", "10.0.0.1", 41)
    assert store.saved_session(b"t8") == (8, "Can", "10.0.0.2", 42)
    assert store.saved_session(b"nope") is None
    assert store.account_sessions(41) == [(7, b"t7")]
    assert store.account_sessions(42) == [(9, b"t9"), (8, b"t8")]
    store.write_journal([("session_account", (7, None)), ("session_forgotten", (9,))])
    assert store.saved_session(b"t7") == (7, "Ayse", "10.0.0.1", None)
    assert store.account_sessions(41) == []
    assert store.account_sessions(42) == [(8, b"t8")]


def test_a_journal_write_is_all_or_nothing(store: Store) -> None:
    store.write_journal([("table_opened", (1, 10.0, {}))])
    with pytest.raises(Conflict):  # table 1 is open already
        store.write_journal([("command", (1, 0, 12.0, b"\x01")),
                             ("table_opened", (1, 10.0, {}))])
    assert store.read_journal().commands == []


@pytest.mark.parametrize("count", [1, 2, 9, 1001])
def test_a_run_of_commands_alone_reads_back_in_order(store: Store, count: int) -> None:
    """The journal's commonest write, a busy server's commands and nothing else (one
    statement on PostgreSQL, as long as it is not too long for one)."""
    store.write_journal([("table_opened", (1, 10.0, {}))])
    written = [(1, seq, 11.0 + seq, bytes([seq % 256]) * 3) for seq in range(count)]
    store.write_journal([("command", row) for row in written])
    assert store.read_journal().commands == written


def test_a_run_of_commands_alone_is_all_or_nothing(store: Store) -> None:
    store.write_journal([("table_opened", (1, 10.0, {})), ("command", (1, 1, 11.0, b"a"))])
    with pytest.raises(Conflict):  # seq 1 is written already
        store.write_journal([("command", (1, 0, 12.0, b"b")), ("command", (1, 1, 12.0, b"c")),
                             ("command", (1, 2, 12.0, b"d"))])
    assert store.read_journal().commands == [(1, 1, 11.0, b"a")]


@pytest.mark.parametrize("count", [0, 3, 12])
def test_commands_with_deals_snapshots_read_back_as_written(store: Store, count: int) -> None:
    """A busy server's other common write: commands with the snapshots of the deals
    that began among them (one statement on PostgreSQL); a table's later snapshot
    replaces its earlier one, in one write as across two."""
    store.write_journal([("table_opened", (1, 10.0, {})), ("table_opened", (2, 10.0, {}))])
    ones = [(1, seq, 11.0 + seq, b"a%d" % seq) for seq in range(count)]
    twos = [(2, seq, 11.5 + seq, b"b%d" % seq) for seq in range(count)]
    store.write_journal([("snapshot", (1, 0, "code", b"one")),
                         *[("command", row) for row in ones],
                         ("snapshot", (2, count, "code", b"b")),
                         ("snapshot", (1, count, "code", b"two")),
                         *[("command", row) for row in twos]])
    rows = store.read_journal()
    assert rows.commands == ones + twos
    assert sorted(rows.snapshots) == [(1, count, "code", b"two"), (2, count, "code", b"b")]

    store.write_journal([("snapshot", (2, count + 1, "code", b"b+"))])
    with pytest.raises(Conflict):  # table 3 is not open: nothing of the write lands
        store.write_journal([("command", (1, count, 20.0, b"late")),
                             ("snapshot", (1, count + 1, "code", b"three")),
                             ("command", (3, 0, 20.0, b"none"))])
    rows = store.read_journal()
    assert rows.commands == ones + twos
    assert sorted(rows.snapshots) == [(1, count, "code", b"two"),
                                      (2, count + 1, "code", b"b+")]


def test_a_journal_write_tried_again_gives_its_rows_once_whether_or_not_it_landed(
        store: Store) -> None:
    """`again`: a commit whose connection was lost as the database committed is tried
    again; every row comes out as one write would leave it, even where the write that
    landed closed the table or forgot the session that a row of it is about."""
    opening: list[JournalOp] = [
        ("table_opened", (1, 10.0, {"name": "one"})), ("counter", ("table", 1)),
        ("command", (1, 0, 11.0, b"a0")), ("snapshot", (1, 0, "code", b"core")),
        ("session_opened", (7, b"t7", "Ayse", "10.0.0.1", 12.0)),
        ("session_account", (7, 41)), ("session_changed", (7, b"t7b", "Ayse K"))]
    store.write_journal(opening)
    once = store.read_journal()
    with pytest.raises(Conflict):
        store.write_journal(opening)
    assert store.write_journal(opening, again=True) == set()
    assert store.read_journal() == once

    closing: list[JournalOp] = [
        ("command", (1, 1, 13.0, b"a1")), ("snapshot", (1, 1, "code", b"core1")),
        ("table_closed", (1,)), ("session_account", (7, 42)), ("session_forgotten", (7,)),
        ("table_opened", (2, 14.0, {})), ("command", (2, 0, 14.0, b"b0"))]
    store.write_journal(closing)
    once = store.read_journal()
    assert [t[0] for t in once.tables] == [2] and once.sessions == []
    store.write_journal(closing, again=True)  # its table and session are gone again
    assert store.read_journal() == once

    later: list[JournalOp] = [("command", (2, 1, 15.0, b"b1")),
                              ("session_opened", (8, b"t8", "Can", "10.0.0.2", 15.0))]
    store.write_journal(later, again=True)  # (the write that failed had not landed)
    rows = store.read_journal()
    assert rows.commands == [(2, 0, 14.0, b"b0"), (2, 1, 15.0, b"b1")]
    assert rows.sessions == [(8, b"t8", "Can", "10.0.0.2")]


def test_a_table_taken_over_fences_its_last_holders_writes(store: Store) -> None:
    store.write_journal([("table_opened", (1, 10.0, {})), ("table_opened", (2, 10.0, {})),
                         ("command", (1, 0, 11.0, b"a0")), ("command", (2, 0, 11.0, b"b0"))])
    assert store.hold_table(1) == 1, "its opener was holder 0"
    assert store.hold_table(5) is None, "no such open table"
    fenced = store.write_journal([("command", (1, 1, 12.0, b"a1")),
                                  ("command", (2, 1, 12.0, b"b1")),
                                  ("snapshot", (1, 1, "code", b"core")),
                                  ("session_opened", (7, b"t7", "Ayse", "10.0.0.1", 12.0)),
                                  ("table_closed", (1,))], holders={1: 0, 2: 0})
    assert fenced == {1}
    rows = store.read_journal()
    assert rows.commands == [(1, 0, 11.0, b"a0"), (2, 0, 11.0, b"b0"), (2, 1, 12.0, b"b1")]
    assert rows.snapshots == [] and [t[0] for t in rows.tables] == [1, 2]
    assert [s[0] for s in rows.sessions] == [7], "what is about no table is written"
    assert store.write_journal([("command", (1, 1, 13.0, b"new"))], holders={1: 1}) == set()
    assert store.write_journal([("table_closed", (2,))], holders={2: 0}) == set()
    assert store.write_journal([("command", (2, 2, 14.0, b"late"))], holders={2: 0}) == {2}, \
        "a table no longer open is fenced too"
    assert store.write_journal([("command", (1, 2, 14.0, b"x"))]) == set(), \
        "without holders nothing is checked"


def test_commands_and_snapshots_under_a_fence_land_only_for_the_tables_still_held(
        store: Store) -> None:
    """A cluster's commonest write (one statement on PostgreSQL, as without a fence)."""
    store.write_journal([("table_opened", (table, 10.0, {})) for table in (1, 2, 3)])
    assert store.hold_table(1) == 1
    fenced = store.write_journal([("command", (1, 0, 11.0, b"a0")),
                                  ("command", (2, 0, 11.0, b"b0")),
                                  ("snapshot", (1, 1, "code", b"a")),
                                  ("snapshot", (2, 1, "code", b"b")),
                                  ("command", (3, 0, 11.0, b"c0"))], holders={1: 0, 2: 0})
    assert fenced == {1}
    rows = store.read_journal()
    assert rows.commands == [(2, 0, 11.0, b"b0"), (3, 0, 11.0, b"c0")], \
        "a table the fence does not name is written"
    assert rows.snapshots == [(2, 1, "code", b"b")]

    assert store.write_journal([("command", (1, 0, 12.0, b"a0 again"))],
                               holders={1: 1}) == set()
    assert store.write_journal([("snapshot", (1, 1, "code", b"a"))], holders={1: 0}) == {1}
    assert store.write_journal([("command", (2, 1, 12.0, b"b1"))],
                               holders={1: 0, 2: 0}) == set(), "only its own tables count"
    with pytest.raises(Conflict):  # seq 1 of table 2 is written: nothing of this lands
        store.write_journal([("snapshot", (2, 2, "code", b"b2")),
                             ("command", (2, 1, 13.0, b"b1 again"))], holders={2: 0})
    assert store.write_journal([("command", (3, 1, 12.0, b"c1"))],
                               holders={1: 0}) == set(), "a fence naming none of its tables"
    assert store.read_journal().commands[-1] == (3, 1, 12.0, b"c1")
    store.write_journal([("table_closed", (3,))])
    assert store.write_journal([("command", (3, 2, 13.0, b"late"))],
                               holders={3: 0}) == {3}, "a table no longer open is fenced"
    rows = store.read_journal()
    assert rows.commands == [(1, 0, 12.0, b"a0 again"), (2, 0, 11.0, b"b0"),
                             (2, 1, 12.0, b"b1")]
    assert rows.snapshots == [(2, 1, "code", b"b")]


def test_journal_rows_of_one_shape_take_numbers_of_any_size(store: Store) -> None:
    """PostgreSQL prepares a statement run often, and psycopg types a number by its
    size: the same write with larger numbers is another statement, not an error."""
    big = 2**31 - 1
    store.write_journal([("table_opened", (1, 10.0, {})), ("table_opened", (big, 10.0, {}))])
    for seq in range(6):
        store.write_journal([("command", (1, seq, 11.0, b"a")),
                             ("snapshot", (1, seq, "code", b"s"))])
        store.write_journal([("command", (big, seq, 11.0, b"b"))], holders={big: 0})
    store.write_journal([("command", (1, 40_000, 1e300, b"a")),
                         ("snapshot", (1, big, "code", b"s"))])
    assert store.write_journal([("command", (big, 70_000, 12.0, b"b"))],
                               holders={big: 0}) == set()
    rows = store.read_journal()
    assert rows.commands[-2:] == [(big, 5, 11.0, b"b"), (big, 70_000, 12.0, b"b")]
    assert (1, 40_000, 1e300, b"a") in rows.commands
    assert rows.snapshots == [(1, big, "code", b"s")]


def test_the_journal_counts_the_highest_id_any_writer_gave_out(store: Store) -> None:
    store.write_journal([("counter", ("player", 9)), ("counter", ("table", 2))])
    store.write_journal([("counter", ("player", 4))])  # another process, behind
    assert store.journal_counters() == {"player": 9, "table": 2}
    assert store.read_journal().counters == {"player": 9, "table": 2}


def test_a_takeover_waits_for_the_write_in_flight(backend: Backend, where: str) -> None:
    old, new = backend.open(where), backend.open(where)
    try:
        old.write_journal([("table_opened", (1, 10.0, {}))])
        held: list[int | None] = []
        taking = threading.Thread(target=lambda: held.append(new.hold_table(1)))
        with old.transaction():
            assert old.write_journal([("command", (1, 0, 11.0, b"a0"))], {1: 0}) == set()
            taking.start()
            taking.join(0.5)
            assert taking.is_alive(), "the count waits for the write that read it"
        taking.join(30)
        assert held == [1]
        assert new.read_journal().commands == [(1, 0, 11.0, b"a0")], "what landed first is read"
        assert old.write_journal([("command", (1, 1, 12.0, b"a1"))], {1: 0}) == {1}
    finally:
        old.close()
        new.close()


# -- accounts ----------------------------------------------------------------------------

def test_accounts_are_created_found_and_listed(store: Store) -> None:
    ayse = store.create_account("Ayşe", ["ayse", "ayşe"], "h-ayse", 1.0)
    deniz = store.create_account("Deniz", ["deniz"], "h-deniz", 2.0, operator=True)
    robo = store.create_account("Robo", ["robo"], "h-robo", 3.0, bot=True)
    rows, keys = store.load_accounts()
    assert [tuple(r) for r in rows] == [(ayse, "Ayşe", False, False),
                                        (deniz, "Deniz", True, False), (robo, "Robo", False, True)]
    assert keys == {"ayse": ayse, "ayşe": ayse, "deniz": deniz, "robo": robo}
    assert store.find_account(["nobody", "ayşe"]) == ayse
    assert store.find_account(["nobody"]) is None
    assert tuple(store.account_row(["nobody", "ayse"]) or ()) == (ayse, "Ayşe", False, False)
    assert tuple(store.account_row(["deniz"]) or ()) == (deniz, "Deniz", True, False)
    assert tuple(store.account_row(["robo"]) or ()) == (robo, "Robo", False, True)
    assert store.account_row(["nobody"]) is None
    assert store.operators() == ["Deniz"]
    store.set_operator(ayse, True)
    store.set_operator(deniz, False)
    assert store.operators() == ["Ayşe"]


def test_a_name_key_held_already_is_a_conflict_and_nothing_is_kept(store: Store) -> None:
    store.create_account("Ayse", ["ayse"], "h", 1.0)
    with pytest.raises(Conflict):
        store.create_account("AYSE", ["other", "ayse"], "h", 2.0)
    rows, keys = store.load_accounts()
    assert [r.name for r in rows] == ["Ayse"] and set(keys) == {"ayse"}


def test_a_password_hash_is_read_and_replaced(store: Store) -> None:
    account = store.create_account("Ayse", ["ayse"], "old", 1.0)
    assert store.password_of(account) == "old"
    store.set_password(account, "new")
    assert store.password_of(account) == "new"
    assert store.password_of(account + 1) is None


def test_login_tokens_are_issued_used_and_revoked(store: Store) -> None:
    ayse = store.create_account("Ayse", ["ayse"], "h", 1.0)
    can = store.create_account("Can", ["can"], "h", 1.0)
    for token in (b"a1", b"a2", b"a3"):
        store.issue_login(ayse, token, 5.0)
    store.issue_login(can, b"c1", 5.0)
    assert store.login_account(b"a1", 6.0) == ayse
    assert store.login_account(b"c1", 6.0) == can
    assert store.login_account(b"nobody's", 6.0) is None
    with pytest.raises(Conflict):
        store.issue_login(can, b"a1", 7.0)  # one token, one account
    store.revoke_logins(ayse, b"a1")
    store.revoke_logins(can, b"a2")  # not Can's: nothing happens
    assert store.login_account(b"a1", 8.0) is None
    assert store.login_account(b"a2", 8.0) == ayse
    store.revoke_logins(ayse, None)
    assert [store.login_account(t, 9.0) for t in (b"a2", b"a3")] == [None, None]
    assert store.login_account(b"c1", 9.0) == can


# -- ratings -----------------------------------------------------------------------------

def test_ratings_are_saved_counted_and_laddered(store: Store) -> None:
    ayse = store.create_account("Ayse", ["ayse"], "h", 1.0)
    assert store.ratings("classic", [f"a:{ayse}", "bot:easy"]) == {}
    assert store.ratings("classic", []) == {}
    store.save_rating("classic", f"a:{ayse}", 27.0, 7.0, 6.0, True, 10.0)
    store.save_rating("classic", "bot:easy", 23.0, 7.0, 2.0, False, 10.0)
    store.save_rating("classic", "bot:hard", 23.0, 5.0, 8.0, False, 10.0)  # easy's mu
    store.save_rating("classic", f"a:{ayse}", 28.0, 6.0, 10.0, False, 11.0)
    store.save_rating("classic", "a:999", 20.0, 8.0, -4.0, True, 11.0)  # no such account
    store.save_rating("other", f"a:{ayse}", 25.0, 8.0, 1.0, True, 11.0)
    robo = store.create_account("Robo", ["robo"], "h", 1.0, bot=True)
    store.save_rating("classic", f"a:{robo}", 24.0, 8.0, 0.0, False, 12.0)
    assert store.ratings("classic", [f"a:{ayse}", "bot:easy", "bot:wild"]) == {
        f"a:{ayse}": (28.0, 6.0), "bot:easy": (23.0, 7.0)}
    # Settled (sigma 7 or less) by mu, ties by subject; the unsettled only with everyone,
    # after them, however high their mu.
    settled = [LadderRow(f"a:{ayse}", 28.0, 6.0, 10.0, 2, 1, "Ayse"),
               LadderRow("bot:easy", 23.0, 7.0, 2.0, 1, 0, None),
               LadderRow("bot:hard", 23.0, 5.0, 8.0, 1, 0, None)]
    assert store.ladder("classic", 10, 7.0) == settled
    assert store.ladder("classic", 10, 7.0, everyone=True) == [
        *settled,
        LadderRow(f"a:{robo}", 24.0, 8.0, 0.0, 1, 0, "Robo", True),  # a bot's account
        LadderRow("a:999", 20.0, 8.0, -4.0, 1, 1, None)]
    assert [row.subject for row in store.ladder("classic", 1, 7.0)] == [f"a:{ayse}"]
    assert [row.subject for row in store.ladder("classic", 10, 6.0)] == [
        f"a:{ayse}", "bot:hard"]
    # Each rating's place is the one `ladder(everyone=True)` gives it.
    assert store.ratings_of("bot:hard", 7.0) == [RatingRow("classic", 23.0, 5.0, 8.0, 1, 0, 2)]
    assert store.ratings_of(f"a:{robo}", 7.0)[0].above == 3
    assert store.ratings_of("a:999", 7.0)[0].above == 4
    assert store.ratings_of(f"a:{ayse}", 7.0) == [
        RatingRow("classic", 28.0, 6.0, 10.0, 2, 1, 0),
        RatingRow("other", 25.0, 8.0, 1.0, 1, 1, 0)]


def test_each_rated_match_adds_a_point_to_its_rating_history(store: Store) -> None:
    store.save_rating("classic", "a:1", 27.0, 7.0, 6.0, True, 10.0)
    store.save_rating("other", "a:1", 24.0, 8.0, 0.0, False, 10.5)
    store.save_rating("classic", "a:2", 20.0, 8.0, -4.0, False, 10.5)
    store.save_rating("classic", "a:1", 28.0, 6.5, 8.5, True, 11.0)
    store.save_rating("classic", "a:1", 26.0, 6.0, 8.0, False, 12.0)
    assert store.rating_history("a:1", "classic", 10) == [
        RatingPoint(1, 10.0, 27.0, 7.0), RatingPoint(2, 11.0, 28.0, 6.5),
        RatingPoint(3, 12.0, 26.0, 6.0)]
    assert store.rating_history("a:1", "classic", 2) == [  # the latest, oldest first
        RatingPoint(2, 11.0, 28.0, 6.5), RatingPoint(3, 12.0, 26.0, 6.0)]
    assert store.rating_history("a:1", "other", 10) == [RatingPoint(1, 10.5, 24.0, 8.0)]
    assert store.rating_history("a:3", "classic", 10) == []
    store.prune(0, now=1e9)  # matches are forgotten; ratings and their history are not
    assert len(store.rating_history("a:1", "classic", 10)) == 3


def test_an_accounts_matches_are_listed_newest_first(store: Store) -> None:
    first = store.record_match(a_match(1_000.0, ("Ayse", "Can")))
    second = store.record_match(a_match(2_000.0, ("Can", "Ayse"), totals=(5, 9)))
    store.note_match_accounts(first, [(0, 41), (1, 42)], False)
    store.note_match_accounts(second, [(1, 41)], True)
    assert store.account_matches(41, seen_by("Nobody", 41)) == [
        (second, 1, True, "classic", 2_000.0, a_match(names=("Can", "Ayse")).players,
         [5, 9], [0]),
        (first, 0, False, "classic", 1_000.0, a_match(names=("Ayse", "Can")).players,
         [30, 101], [0])]
    assert [m.id for m in store.account_matches(42, seen_by("Nobody", 42))] == [first]
    assert store.account_matches(43, seen_by("Nobody", 43)) == []
    store.prune(0, now=3_000.0)  # a pruned match leaves no trace in a profile
    assert store.account_matches(41, seen_by("Nobody", 41)) == []


def test_rating_a_match_in_one_transaction_with_its_accounts(store: Store) -> None:
    """What ratings.record does: the seats' accounts and the ratings commit together."""
    match_id = store.record_match(a_match())
    with pytest.raises(RuntimeError), store.transaction():
        store.note_match_accounts(match_id, [(0, 41)], True)
        store.save_rating("classic", "a:41", 27.0, 7.0, 6.0, True, 10.0)
        raise RuntimeError("the rating update failed")
    assert store.account_matches(41, seen_by("Nobody", 41)) == []
    assert store.ratings_of("a:41", 7.0) == [] and store.rating_history("a:41", "classic", 9) == []
    assert store.match(match_id) is not None  # the match itself was kept before


# -- moderation --------------------------------------------------------------------------

def test_sanctions_are_in_force_until_they_expire_or_are_lifted(store: Store) -> None:
    account = store.create_account("Troll", ["troll"], "h", 1.0)
    ban = SanctionRow("ban", account, None, None, "spam", "Deniz", None)
    mute = SanctionRow("mute", None, 7, None, "", "Deniz", 100.0)
    net = SanctionRow("ban", None, None, "10.0.0.0/24", "flood", "Ece", 50.0)
    for s in (ban, mute, net):
        store.add_sanction(s, 10.0)
    assert store.sanctions_in_force(20.0) == [ban, mute, net]
    assert store.sanctions_in_force(60.0) == [ban, mute]
    store.lift_sanctions("ban", account, None, None, 70.0)
    store.lift_sanctions("mute", None, 8, None, 70.0)  # another session: not lifted
    assert store.sanctions_in_force(70.0) == [mute]
    assert store.sanctions_in_force(100.0) == []
    store.add_sanction(ban, 80.0)  # banned again
    assert store.sanctions_in_force(90.0) == [mute, ban]


def test_the_moderation_log_keeps_every_action_in_order(store: Store) -> None:
    assert store.moderation_log() == []
    store.log_action(1.0, "Deniz", "kick", "Troll", "spam")
    store.log_action(2.0, "Ece", "unban", "10.0.0.0/24", "")
    assert store.moderation_log() == [LogEntry(1.0, "Deniz", "kick", "Troll", "spam"),
                                      LogEntry(2.0, "Ece", "unban", "10.0.0.0/24", "")]


# -- on the reactor ----------------------------------------------------------------------

@pytest_twisted.ensureDeferred
async def test_an_archive_runs_the_store_on_its_thread(backend: Backend, where: str) -> None:
    import threading

    archive = Archive(lambda: backend.open(where), reactor)
    await archive.open()
    try:
        assert archive.available and archive.store.path == where
        threads: list[str] = []

        def record(store: Store) -> int:
            threads.append(threading.current_thread().name)
            return store.record_match(a_match())

        match_id = await archive.use(record)
        assert threads and threads[0] != threading.current_thread().name
        found = await archive.query(lambda store: store.match(match_id))
        assert found is not None and found["id"] == match_id
    finally:
        await archive.close()
    assert not archive.available
