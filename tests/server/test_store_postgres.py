"""The PostgreSQL store as an operator meets it: `--db postgresql://...` for the server
and its subcommands, a server that cannot reach PostgreSQL, and one whose PostgreSQL
goes away under it and comes back. Against a real PostgreSQL (tests/pg_kit.py).

What every backend does alike is tests/server/test_store_interface.py's."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import threading
from typing import Any, cast

import fork_kit
import msgpack
import pg_kit
import psycopg
import pytest
import pytest_twisted
from poll_kit import BACKSTOP, poll_until
from process_output import SERVER, Output, add_operator
from test_restart_process import Client
from twisted.internet import reactor
from twisted.internet.task import Clock, deferLater
from twisted.logger import formatEvent, globalLogPublisher

from pisyedili.protocol.version import PROTOCOL_VERSION
from pisyedili.server.bench.services import free_port
from pisyedili.server.service import admin
from pisyedili.server.store import Archive, RatingPoint, open_store
from pisyedili.server.store.journal import CATCH_UP_SECONDS, StoreJournal
from pisyedili.server.store.postgres import TABLES, PostgresStore
from pisyedili.server.store.schema import POSTGRES, SCHEMA_VERSION, VERSIONS
from pisyedili.server.table.commands import Chat, Play, from_record
from pisyedili.server.table.effects import MatchOver

Msg = dict[str, Any]
PASSWORD = "correct horse battery"


def a_match(finished_at: float = 2_000.0) -> MatchOver:
    players: list[dict[str, Any]] = [{"seat": 0, "name": "Ayse", "kind": "human"},
                                     {"seat": 1, "name": "bot", "kind": "bot",
                                      "level": "easy"}]
    return MatchOver(table_id=1, rules="classic", options={}, players=players,
                     started_at=finished_at - 10, finished_at=finished_at, totals=[1, 2],
                     winners=[0], deals=[{"deal_no": 1, "result": {}, "record": {}}],
                     private=False)


def test_without_postgresql_a_test_skips_saying_why_but_fails_in_ci(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no PostgreSQL to test against: why"):
        pg_kit.unavailable("why")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="cannot run in CI: why"):
        pg_kit.unavailable("why")


def test_the_backup_order_names_every_table_after_those_it_references(
        postgres: pg_kit.Cluster) -> None:
    store = PostgresStore(postgres.store())
    try:
        tables = {name for (name,) in store.query(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = "
            "current_schema() AND table_name <> 'store_schema'")}
        references = store.query(
            "SELECT c.conrelid::regclass::text, c.confrelid::regclass::text "
            "FROM pg_constraint c WHERE c.contype = 'f' "
            "AND c.connamespace = current_schema()::regnamespace")
    finally:
        store.close()
    assert set(TABLES) == tables and len(TABLES) == len(tables)
    for table, referenced in references:
        assert TABLES.index(referenced) < TABLES.index(table), (table, referenced)


def test_a_version_8_database_gets_a_rating_history_from_its_ratings(
        postgres: pg_kit.Cluster) -> None:
    url = postgres.store()
    with psycopg.connect(url, autocommit=True) as conn:
        for version in VERSIONS[:8]:
            for statement in POSTGRES.statements(version.ddl):
                conn.execute(statement)  # (an empty store: no data step has rows to move)
        conn.execute("CREATE TABLE store_schema (version INTEGER NOT NULL)")
        conn.execute("INSERT INTO store_schema VALUES (8)")
        conn.execute("INSERT INTO ratings VALUES ('classic', 'a:1', 27.5, 6.0, 9.5, 14, 9, 50.0)")
    store = PostgresStore(url)
    try:
        assert store.schema_version() == SCHEMA_VERSION
        assert store.rating_history("a:1", "classic", 10) == [RatingPoint(14, 50.0, 27.5, 6.0)]
        store.save_rating("classic", "a:1", 28.0, 5.9, 10.3, True, 60.0)
        assert store.rating_history("a:1", "classic", 10) == [
            RatingPoint(14, 50.0, 27.5, 6.0), RatingPoint(15, 60.0, 28.0, 5.9)]
    finally:
        store.close()


def test_the_url_shown_never_holds_the_password(postgres: pg_kit.Cluster) -> None:
    url = postgres.store()
    with_password = url.replace("@", ":not-needed@", 1)  # trust: any password will do
    store = open_store(with_password)
    try:
        assert store.path == url and "not-needed" not in store.path
    finally:
        store.close()


def test_two_stores_opening_one_new_database_at_once_migrate_it_once(
        postgres: pg_kit.Cluster) -> None:
    url = postgres.store()
    opened = [PostgresStore(url), PostgresStore(url)]
    try:
        assert [s.schema_version() for s in opened] == [SCHEMA_VERSION] * 2
        assert opened[0].query("SELECT count(*) FROM store_schema") == [(1,)]
    finally:
        for store in opened:
            store.close()


@pytest.mark.parametrize("write", [
    [("command", (1, 0, 11.0, b"a0"))],
    [("command", (1, 0, 11.0, b"a0")), ("snapshot", (1, 1, "code", b"core"))],
], ids=["commands", "with a snapshot"])
def test_a_fenced_write_waits_for_a_takeover_in_flight_then_finds_its_table_taken(
        postgres: pg_kit.Cluster, write: list[Any]) -> None:
    """A takeover counts the table's holder on (`hold_table`) while the old holder's
    commit is on its way: the commit's one statement waits for that row, then sees the
    new count, and writes none of the table's rows."""
    url = postgres.store()
    store = PostgresStore(url)
    try:
        store.write_journal([("table_opened", (1, 10.0, {}))])
        found: dict[str, set[int]] = {}
        with psycopg.connect(url) as takeover, psycopg.connect(url, autocommit=True) as look:
            takeover.execute("UPDATE live_tables SET holder = holder + 1 WHERE id = 1")
            writer = threading.Thread(target=lambda: found.update(
                fenced=store.write_journal(write, holders={1: 0})))
            writer.start()
            def waiting() -> int:
                assert writer.is_alive(), "the write ended without waiting for the takeover"
                (count,) = look.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                    "AND application_name = 'pisyedili-server'").fetchone() or (0,)
                return int(count)

            assert poll_until(waiting, BACKSTOP, "the write to wait on the row the "
                              "takeover locked", 0.01) == 1
            takeover.commit()
            writer.join(10)
        assert found == {"fenced": {1}}
        rows = store.read_journal()
        assert rows.commands == [] and rows.snapshots == []
        assert store.write_journal(write, holders={1: 1}) == set(), "the new holder writes"
    finally:
        store.close()


# -- the journal commits off the reactor -------------------------------------------------

def tables_in(url: str) -> list[int]:
    """The open tables the store at `url` holds, read on a connection of its own."""
    store = open_store(url)
    try:
        return [table_id for table_id, _, _ in store.read_journal().tables]
    finally:
        store.close()


@pytest_twisted.ensureDeferred
async def test_the_journal_commits_on_its_thread_and_sends_only_what_is_committed(
        postgres: pg_kit.Cluster) -> None:
    url = postgres.store()
    journal = StoreJournal.open(url, cast(Any, reactor))
    sent: list[tuple[str, list[int]]] = []

    def send(what: str) -> None:  # what a client gets, and what the store holds by then
        sent.append((what, tables_in(url)))

    try:
        journal.table_opened(1, 10.0, {"name": "one"})
        journal.after_commit(send, "one")
        journal.flush()  # returns at once: the commit is on the journal's thread
        journal.table_opened(2, 11.0, {"name": "two"})  # meanwhile: in the next commit
        journal.after_commit(send, "two")
        journal.flush()
        assert sent == []
        while len(sent) < 2:
            await deferLater(reactor, 0.01, lambda: None)
        assert sent == [("one", [1]), ("two", [1, 2])] and journal.commits == 2
        journal.after_commit(send, "now")  # nothing waits: at once
        assert sent[-1] == ("now", [1, 2])

        journal.table_closed(1)
        journal.after_commit(send, "closed")
        journal.flush()
        journal.table_opened(3, 12.0, {"name": "three"})
        journal.after_commit(send, "three")
    finally:
        journal.close()  # the commit in flight lands, the rest commits, all is sent
    assert sent[-2:] == [("closed", [2]), ("three", [2, 3])]


def test_a_commit_whose_answer_was_lost_is_written_once_when_the_journal_catches_up(
        postgres: pg_kit.Cluster) -> None:
    """The connection goes as PostgreSQL commits a run of commands: the journal cannot
    know they landed, keeps them and plays on; its catch-up, on a new connection,
    writes each row once (the second try does not stop on the first's rows)."""
    url = postgres.store()
    relay = pg_kit.LostReply(url)
    clock = Clock()
    journal = StoreJournal.open(relay.url, clock)  # (a clock, not a reactor: no thread)
    sent: list[str] = []
    try:
        journal.table_opened(1, 0.0, {})
        clock.advance(0)
        relay.arm(b"answer lost")  # in the commands' own bytes: the statement runs
        for i in range(3):
            journal.command(1, float(i), Chat("1", f"{i}: answer lost"))
        journal.after_commit(sent.append, "update")
        clock.advance(0)
        assert relay.cut.is_set() and sent == ["update"], "play goes on"
        assert commands_in(url) == 3, "the commit landed all the same"
        journal.command(1, 3.0, Chat("1", "3"))
        clock.advance(CATCH_UP_SECONDS)
        assert commands_in(url) == 4
        journal.command(1, 4.0, Chat("1", "4"))
        journal.after_commit(sent.append, "kept up")
        assert sent[-1] == "update", "caught up: a send waits for its commit again"
        clock.advance(0)
        assert sent[-1] == "kept up"
    finally:
        journal.close()
        relay.close()
    (table,) = StoreJournal.open(url, clock).load().tables
    texts = [command.text for _, command in table.commands]  # type: ignore[union-attr]
    assert texts == ["0: answer lost", "1: answer lost", "2: answer lost", "3", "4"]


def commands_in(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM table_commands").fetchone()
    assert row is not None
    return int(row[0])


def run_server(*args: str) -> subprocess.CompletedProcess[str]:
    return fork_kit.run([sys.executable, "-c", SERVER, *args], capture_output=True,
                        text=True, timeout=60)


def test_a_server_that_cannot_reach_postgresql_exits_1_saying_where_and_why() -> None:
    port = free_port()  # nothing listens there
    done = run_server("--listen", "tcp:0:interface=127.0.0.1", "--no-announce",
                      "--db", f"postgresql://someone:s3cret@127.0.0.1:{port}/pisyedili")
    assert done.returncode == 1
    assert f"cannot reach PostgreSQL at 127.0.0.1:{port}" in done.stderr
    assert "Connection refused" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert "s3cret" not in done.stderr + done.stdout


def test_backup_copies_into_an_empty_database_or_names_pg_dump(
        postgres: pg_kit.Cluster, capsys: pytest.CaptureFixture[str]) -> None:
    source, dest = postgres.store(), postgres.store()
    store = open_store(source)
    try:
        match_id = store.record_match(a_match())
    finally:
        store.close()

    def backup(*args: str) -> None:
        options = admin.BackupOptions()
        options.parseOptions(list(args))  # type: ignore[no-untyped-call]
        admin.backup(options)

    with pytest.raises(SystemExit) as to_file:
        backup("--db", source, "copy.dump")
    assert to_file.value.code == 2
    assert "pg_dump --format=custom --file=copy.dump" in capsys.readouterr().err

    backup("--db", source, dest)
    assert "backed up" in capsys.readouterr().out
    copy = open_store(dest)
    try:
        assert [m["id"] for m in copy.recent_matches()] == [match_id]
        assert copy.record_match(a_match(3_000.0)) == match_id + 1  # its ids carry on
    finally:
        copy.close()
    with pytest.raises(SystemExit) as again:  # into a database that holds something
        backup("--db", source, dest)
    assert again.value.code == 1 and "not empty" in capsys.readouterr().err


def test_operator_adds_and_lists_on_postgresql(postgres: pg_kit.Cluster,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    url = postgres.store()

    def operator(*args: str) -> None:
        options = admin.OperatorOptions()
        options.parseOptions(list(args))  # type: ignore[no-untyped-call]
        admin.operator(options, io.StringIO(PASSWORD + "\n"))

    operator("--db", url, "add", "Deniz")
    assert "Deniz: a new account, now an operator" in capsys.readouterr().out
    operator("--db", url, "list")
    assert capsys.readouterr().out.splitlines() == ["Deniz"]
    operator("--db", url, "remove", "Deniz")
    operator("--db", url, "list")
    assert "Deniz" not in capsys.readouterr().out.splitlines()


# -- PostgreSQL going away under a running server ----------------------------------------

OPERATOR_PASSWORD = "a long enough password 7"

class Player(Client):
    """A client that plays its turns between requests: what arrives while it waits for
    a reply is read again afterwards."""

    def __init__(self, port: int) -> None:
        super().__init__(port)
        self.backlog: list[Msg] = []

    def request(self, type_: str, **fields: Any) -> Msg:
        """The reply to one request, error or not."""
        self.send(type_, **fields)
        while True:
            msg = self.recv()
            assert msg is not None, "the server went away"
            if msg.get("id") == self.rid:
                return msg
            self.backlog.append(msg)

    def play_turns(self, turns: int) -> None:
        """Move `turns` times (the easy bot answers each): the table plays on."""
        while turns:
            msg = self.backlog.pop(0) if self.backlog else self.recv()
            assert msg is not None, "the server went away"
            if "moves" in msg:
                self.send("move", move=msg["moves"][0])
                turns -= 1


def test_a_store_idle_while_postgresql_restarted_runs_its_next_statement() -> None:
    """PostgreSQL closed the store's connection as it stopped, and nothing used the store
    meanwhile, so psycopg cannot know: the store finds out before its next statement,
    which runs (before, it failed, and with it a finished match or the journal, which
    then writes nothing more)."""
    with pg_kit.own_cluster() as cluster:
        store = open_store(cluster.store())
        try:
            assert store.read_journal().tables == []
            cluster.halt()
            cluster.resume()
            assert store.read_journal().tables == []
        finally:
            store.close()


def plays_kept(url: str, member: str) -> int:
    """How many of `member`'s moves the store's journal holds."""
    store = open_store(url)
    try:
        rows = store.read_journal().commands
    finally:
        store.close()
    return sum(1 for _, _, _, blob in rows
               if isinstance(command := from_record(msgpack.unpackb(blob)), Play)
               and command.member == member)


def test_a_server_outlives_postgresql_going_away_and_coming_back() -> None:
    """PostgreSQL stops mid-match: the table plays on, the journal keeps what it could
    not write, and writes it once PostgreSQL is back, so a restart after that would
    find every move."""
    with pg_kit.own_cluster() as cluster:
        url = cluster.store()
        proc = fork_kit.popen(
            [sys.executable, "-c", SERVER, "--listen", "tcp:0:interface=127.0.0.1",
             "--db", url, "--seed", "5", "--turn-seconds", "0", "--bot-delay", "0",
             "--deal-pause", "0", "--no-announce"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, encoding="utf-8")
        assert proc.stdout is not None
        out = Output(proc.stdout)
        try:
            port = int(out.wait_for(r"listening on .*port=(\d+)").group(1))
            if "keeping finished matches in" not in out.text:  # the archive is open
                out.wait_for(r"keeping finished matches in postgresql://")
            client = Player(port)
            player = client.answer("hello", protocol=PROTOCOL_VERSION, name="Ayşe",
                                   features=["history"])["player"]
            assert client.answer("history", of="recent")["total"] == 0
            client.answer("create_table", rules="classic", seats=2,
                          options={"match_end": "deals:20"})
            client.answer("add_bot", seat=1, level="easy")
            client.request("start")
            client.play_turns(2)

            cluster.halt()
            client.play_turns(3)  # the table plays on from memory
            out.wait_for(r"the journal could not be written .*kept here, to be written")
            failed = client.request("history", of="recent")
            assert (failed["type"], failed.get("code")) == ("error", "internal_error")
            out.wait_for(r"request history from \d+ failed: the store could not be read "
                         r"or written \(.+\); answered internal_error")
            assert proc.poll() is None

            cluster.resume()
            back = client.request("history", of="recent")
            assert back["type"] != "error", back  # the store connected again
            out.wait_for(r"store: connected to 127\.0\.0\.1:\d+ again")
            out.wait_for(r"the journal is written again")
            client.play_turns(2)
            assert proc.poll() is None
            proc.kill()
            proc.wait()
            # Of the 7 moves sent, all but the last (maybe not handled when the server
            # was killed) are in the store: those made while PostgreSQL was away too.
            assert plays_kept(url, str(player)) >= 6
        finally:
            proc.kill()
            proc.wait()
            proc.stdout.close()
        assert "Traceback" not in out.text, out.text  # (an outage, not a defect)
    with pytest.raises(psycopg.OperationalError):  # the cluster is gone with the test
        psycopg.connect(url, connect_timeout=2)


def test_a_match_that_ends_while_postgresql_is_away_is_said_not_kept() -> None:
    """PostgreSQL stops, and a one-deal match ends meanwhile: the table plays it out from
    memory, and the match the store could not keep is said so, with PostgreSQL's
    message and no traceback (an outage, not a defect)."""
    with pg_kit.own_cluster() as cluster:
        proc = fork_kit.popen(
            [sys.executable, "-c", SERVER, "--listen", "tcp:0:interface=127.0.0.1",
             "--db", cluster.store(), "--seed", "5", "--turn-seconds", "0",
             "--bot-delay", "0", "--deal-pause", "0", "--no-announce", "--rate", "500",
             "--burst", "500"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, encoding="utf-8")
        assert proc.stdout is not None
        out = Output(proc.stdout)
        try:
            port = int(out.wait_for(r"listening on .*port=(\d+)").group(1))
            client = Player(port)
            client.answer("hello", protocol=PROTOCOL_VERSION, name="Ayşe")
            table = client.answer("create_table", rules="classic", seats=2,
                                  options={"match_end": "deals:1"})["table"]["id"]
            client.answer("add_bot", seat=1, level="easy")
            client.request("start")
            client.play_turns(1)
            cluster.halt()
            while True:  # bounded by the client's read timeout, and the one deal
                msg = client.backlog.pop(0) if client.backlog else client.recv()
                assert msg is not None, "the server went away"
                if any(e.get("event") == "match_end" for e in msg.get("events", ())):
                    break
                if "moves" in msg:
                    client.send("move", move=msg["moves"][0])
            out.wait_for(rf"store: match at table {table} not kept: the store could not be "
                         r"written \(.+\)")
            assert proc.poll() is None
        finally:
            proc.kill()
            proc.wait()
            proc.stdout.close()
        assert "Traceback" not in out.text, out.text


def test_a_kick_made_while_postgresql_is_away_holds_and_is_said_not_kept() -> None:
    """PostgreSQL stops, and an operator kicks a player: the kick holds (the player is
    told and closed), and what the store could not keep is said so, with PostgreSQL's
    message and no traceback; so is a ban of an account the store must be asked for."""
    with pg_kit.own_cluster() as cluster:
        url = cluster.store()
        add_operator(url, "Zeynep", OPERATOR_PASSWORD)
        proc = fork_kit.popen(
            [sys.executable, "-c", SERVER, "--listen", "tcp:0:interface=127.0.0.1",
             "--db", url, "--no-announce"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, encoding="utf-8")
        assert proc.stdout is not None
        out = Output(proc.stdout)
        try:
            port = int(out.wait_for(r"listening on .*port=(\d+)").group(1))
            operator, troll = Player(port), Player(port)
            operator.answer("hello", protocol=PROTOCOL_VERSION, name="z",
                            features=["accounts", "moderation"])
            operator.answer("login", name="Zeynep", password=OPERATOR_PASSWORD)
            troll.answer("hello", protocol=PROTOCOL_VERSION, name="Troll",
                         features=["accounts"])
            troll.answer("register", password=OPERATOR_PASSWORD)  # (kicked by account)
            cluster.halt()
            operator.request("kick", name="Troll")
            kicked = troll.recv()
            assert kicked is not None and kicked.get("code") == "kicked", kicked
            out.wait_for(r"a kick could not be kept in the store \(.+\): it holds in this "
                         r"process's memory until it ends")
            # An account this process has not read: the store must be asked.
            refused = operator.request("ban", name="Nobody")
            assert refused.get("code") == "internal_error", refused
            out.wait_for(r"the account of 'Nobody' could not be read: the store could not "
                         r"be read \(.+\); answered internal_error")
        finally:
            proc.kill()
            proc.wait()
            proc.stdout.close()
        assert "Traceback" not in out.text, out.text


def _store_lines(events: list[dict[str, Any]]) -> list[tuple[str, bool]]:
    """The archive's log lines, each with whether it carries a traceback."""
    return [(formatEvent(e), "log_failure" in e) for e in events
            if e.get("log_namespace") == "pisyedili.server.store.archive"]


@pytest_twisted.ensureDeferred
async def test_pruning_while_postgresql_is_away_is_one_line_and_a_defect_keeps_its_traceback(
        ) -> None:
    """PostgreSQL stops, and the daily pruning comes meanwhile: it says so in one line,
    with PostgreSQL's message, no traceback (an outage, which the server outlives).
    Once it is back, a pruning that fails for another reason (its table gone) is a
    defect, said with its traceback."""
    events: list[dict[str, Any]] = []
    with pg_kit.own_cluster() as cluster:
        url = cluster.store()
        archive = Archive(lambda: open_store(url), reactor)
        await archive.open()
        globalLogPublisher.addObserver(events.append)  # type: ignore[arg-type]
        try:
            cluster.halt()
            await archive.prune(30)
            [(line, traceback)] = _store_lines(events)
            assert re.fullmatch(r"store: pruning failed: the store could not be reached "
                                r"\(cannot reach PostgreSQL at 127\.0\.0\.1:\d+: .+\); the "
                                r"old matches are forgotten at the next pruning, in a day",
                                line), line
            assert not traceback
            cluster.resume()
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("ALTER TABLE matches RENAME TO matches_gone")
            del events[:]
            await archive.prune(30)
            [(line, traceback)] = _store_lines(events)
            assert line.startswith("store: pruning failed"), line
            assert traceback
        finally:
            globalLogPublisher.removeObserver(events.append)  # type: ignore[arg-type]
            await archive.close()
