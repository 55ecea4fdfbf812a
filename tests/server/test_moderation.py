"""Moderation over loopback: operators kick, mute, ban (accounts and address ranges),
close tables and announce; everyone else is refused with `not_operator`; bans and
mutes survive a restart on the same file; every action is logged with its operator."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, cast

import fork_kit
import pytest
import pytest_twisted
from poll_kit import BACKSTOP, poll_until_async
from process_output import Output
from twisted.internet import reactor
from twisted.internet.task import Clock, deferLater
from twisted.logger import LogEvent, LogLevel, formatEvent, globalLogPublisher
from wireclient import Server, WireClient

from pisyedili.server.net.limits import ServerLimits
from pisyedili.server.people import accounts as accounts_
from pisyedili.server.people.accounts import CHEAP, OPERATORS_EVERY, AccountSettings
from pisyedili.server.service import tap
from pisyedili.server.service.assembly import make_factory
from pisyedili.server.service.server import ServerService
from pisyedili.server.store import Archive
from pisyedili.server.store.journal import StoreJournal
from pisyedili.server.store.sqlite import SqliteStore

PASSWORD = "correct horse battery"
REQUESTS = {
    "kick": {"name": "Troll"}, "mute": {"name": "Troll"}, "unmute": {"name": "Troll"},
    "ban": {"name": "Troll"}, "unban": {"name": "Troll"}, "close_table": {"table": 1},
    "announce": {"text": "hello all"},
}


async def start(path: Path, operators: frozenset[str] = frozenset({"Deniz"}),
                create: bool = True, clock: Clock | None = None,
                limits: ServerLimits | None = None) -> Server:
    """A server on `path`; with `create`, each of `operators` an account there first, as
    `--operator` wants (as `pisyedili-server operator add` makes it, at the cheap cost).
    `clock` and `limits`: the server's, if not the reactor and the tests' roomy ones."""
    store = SqliteStore(path)
    try:
        registered = {account.name for account in accounts_.load(store)[0].values()}
        for name in operators - registered if create else ():
            accounts_.add_account(store, name, CHEAP.hasher().hash(PASSWORD), 0.0)
    finally:
        store.close()
    return await Server.start(
        clock=clock, limits=limits,
        archive=Archive(lambda: SqliteStore(path), reactor),
        journal=StoreJournal.open(path, reactor), community_from=str(path),
        accounts=AccountSettings(cost=CHEAP, operators=operators))


async def member(server: Server, name: str, **connect: str) -> tuple[WireClient, str]:
    """A client logged in to the account `name`: registered now, or by its password if
    it exists."""
    accounts = server.factory.accounts
    assert accounts is not None
    if accounts.find(name) is not None:
        client = await server.connect("someone", **connect)  # type: ignore[arg-type]
        account = await client.request("login", name=name, password=PASSWORD)
    else:
        client = await server.connect(name, **connect)  # type: ignore[arg-type]
        account = await client.request("register", password=PASSWORD)
    assert account["type"] == "account", account
    return client, account["login"]


async def login(server: Server, name: str, token: str) -> WireClient:
    client = await server.connect("someone")
    answer = await client.request("login", name=name, token=token)
    assert answer["type"] == "account", answer
    return client


@pytest_twisted.ensureDeferred
async def test_operator_requests_are_refused_to_everyone_else(tmp_path: Path) -> None:
    server = await start(tmp_path / "db.sqlite3")
    try:
        await member(server, "Troll")
        player, _ = await member(server, "Player")
        guest = await server.connect("Guest")
        for client in (player, guest):
            for kind, fields in REQUESTS.items():
                refused = await client.request(kind, **fields)  # type: ignore[arg-type]
                assert refused["code"] == "not_operator", (kind, refused)
        operator, _ = await member(server, "Deniz")
        account = operator.received[-1]
        assert account["operator"] is True
        # A resumed session's welcome says so too (and says nothing for anyone else).
        back = await server.connect("x", token=account["token"])
        assert (back.welcome["registered"], back.welcome["operator"]) == (True, True)
        mine = next(m for m in player.received if m["type"] == "account")
        plain = await server.connect("y", token=mine["token"])
        assert plain.welcome["registered"] is True and "operator" not in plain.welcome
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_kick_mute_announce_and_close_table(tmp_path: Path) -> None:
    server = await start(tmp_path / "db.sqlite3")
    try:
        operator, _ = await member(server, "Deniz")
        troll, _ = await member(server, "Troll")
        bystander = await server.connect("Bystander")
        snap = await bystander.ok("create_table", rules="classic", seats=2)
        table = snap["table"]["id"]

        assert (await operator.request("mute", name="troll", minutes=5))["type"] == "ok"
        muted = await troll.request("chat", text="spam", scope="lobby")
        assert muted["code"] == "muted"
        await operator.ok("unmute", name="Troll")
        await troll.ok("chat", text="sorry", scope="lobby")

        await operator.ok("announce", text="Restart at ten")
        for client in (troll, bystander, operator):
            notice = await client.wait_type("announcement")
            assert (notice["text"], notice["by"]) == ("Restart at ten", "Deniz")

        await operator.ok("close_table", table=table, reason="test")
        closed = await bystander.wait_type("table_closed")
        assert closed == {"type": "table_closed", "table": table, "reason": "test"}
        lobby = await bystander.request("lobby_subscribe")
        assert lobby["tables"] == []
        again = await bystander.ok("create_table", rules="classic", seats=2)
        assert again["type"] == "table"  # the bystander was at no table any more

        await operator.ok("kick", name="Troll", reason="enough")
        kicked = await troll.wait_type("error")
        assert kicked["code"] == "kicked" and "enough" in kicked["message"]
        await troll.closed
        missing = await operator.request("kick", name="Troll")
        assert missing["code"] == "no_such_player"
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_bans_and_mutes_survive_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    first = await start(path)
    try:
        operator, op_login = await member(first, "Deniz")
        troll, troll_login = await member(first, "Troll")
        chatty, chatty_login = await member(first, "Chatty")
        flooder = await first.connect("Flooder", source="127.0.0.5")
        await operator.ok("ban", name="Troll", reason="cheating")
        banned = await troll.wait_type("error")
        assert banned["code"] == "banned" and "cheating" in banned["message"]
        await troll.closed
        await operator.ok("ban", network="127.0.0.5/32", minutes=60)
        assert (await flooder.wait_type("error"))["code"] == "banned"
        await operator.ok("mute", name="Chatty")
        refused = await operator.request("ban", network="127.0.0.0/8")
        assert refused["code"] == "bad_field"  # it would cover the operator
        bad = await operator.request("ban", network="not-a-net")
        assert bad["code"] == "bad_network"
    finally:
        await first.stop()

    second = await start(path)
    try:
        guest = await second.connect("x")
        refused = await guest.request("login", name="Troll", token=troll_login)
        assert refused["code"] == "banned"
        from_range = await second.connect(source="127.0.0.5")
        hello = await from_range.request("hello", protocol=2, name="Again")
        assert hello["code"] == "banned"
        await from_range.closed
        chatty = await login(second, "Chatty", chatty_login)
        assert (await chatty.request("chat", text="hi", scope="lobby"))["code"] == "muted"
        operator = await login(second, "Deniz", op_login)
        await operator.ok("unban", name="Troll")
        await operator.ok("unban", network="127.0.0.5")
        await operator.ok("unmute", name="Chatty")
        await chatty.ok("chat", text="hi", scope="lobby")
        back = await login(second, "Troll", troll_login)
        assert back.welcome["type"] == "welcome"
        assert (await second.connect("Again", source="127.0.0.5")).welcome["name"] == "Again"
    finally:
        await second.stop()
    conn = sqlite3.connect(path)
    actions = conn.execute("SELECT operator, action, target FROM moderation_log "
                           "ORDER BY id").fetchall()
    conn.close()
    assert actions == [("Deniz", "ban", "Troll"), ("Deniz", "ban", "127.0.0.5/32"),
                       ("Deniz", "mute", "Chatty"), ("Deniz", "unban", "Troll"),
                       ("Deniz", "unban", "127.0.0.5/32"), ("Deniz", "unmute", "Chatty")]


@pytest_twisted.ensureDeferred
async def test_the_operator_subcommand_flags_an_account_in_the_store(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "db.sqlite3"
    first = await start(path, operators=frozenset())
    try:
        _, token = await member(first, "Ayşe")
    finally:
        await first.stop()
    tap.main(["operator", "--db", str(path), "add", "AYŞE"])
    tap.main(["operator", "--db", str(path), "list"])
    assert capsys.readouterr().out.splitlines()[-1] == "Ayşe"
    with pytest.raises(SystemExit):
        tap.main(["operator", "--db", str(path), "remove", "Nobody"])
    second = await start(path, operators=frozenset())
    try:
        client = await second.connect("x")
        answer = await client.request("login", name="Ayşe", token=token)
        assert answer["operator"] is True
        await client.ok("announce", text="now I may")
    finally:
        await second.stop()


@pytest_twisted.ensureDeferred
async def test_the_operator_subcommand_reaches_a_running_server(tmp_path: Path) -> None:
    """`operator add|remove` while the server runs: its next read of the flags
    (`refresh_operators`, every `OPERATORS_EVERY` seconds) makes the account an operator,
    or not, for the session logged in already; and an account the subcommand creates
    meanwhile logs in, an operator, without a restart."""
    path = tmp_path / "db.sqlite3"
    server = await start(path, operators=frozenset())
    accounts = server.factory.accounts
    assert accounts is not None
    try:
        client, _ = await member(server, "Ayşe")
        assert (await client.request("announce", text="hi"))["code"] == "not_operator"
        tap.main(["operator", "--db", str(path), "add", "ayşe"])
        await accounts.refresh_operators()
        await client.ok("announce", text="now I may")
        tap.main(["operator", "--db", str(path), "remove", "Ayşe"])
        await accounts.refresh_operators()
        assert (await client.request("announce", text="hi"))["code"] == "not_operator"

        made = _script("operator", "--db", str(path), "add", "Yeni", stdin=f"{PASSWORD}\n")
        assert made.returncode == 0, made.stderr
        newcomer = await server.connect("x")
        answer = await newcomer.request("login", name="Yeni", password=PASSWORD)
        assert answer["type"] == "account", answer
        assert (answer["name"], answer["operator"]) == ("Yeni", True)
        await newcomer.ok("announce", text="new here")
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_an_account_made_beside_the_running_server_is_banned_by_its_name(
        tmp_path: Path) -> None:
    """An account `operator add` made while the server runs, never logged in since:
    the registry has not seen it, so a ban or mute by its name asks the store; the
    account is banned, not refused as `no_such_player`."""
    path = tmp_path / "db.sqlite3"
    server = await start(path)
    try:
        operator, _ = await member(server, "Deniz")
        made = _script("operator", "--db", str(path), "add", "Yeni", stdin=f"{PASSWORD}\n")
        assert made.returncode == 0, made.stderr
        tap.main(["operator", "--db", str(path), "remove", "Yeni"])
        muted = await operator.ok("mute", name="yeni", minutes=5)
        assert muted["done"].startswith("muted Yeni until"), muted
        banned = await operator.ok("ban", name="yeni", reason="spam")
        assert banned["done"] == "banned Yeni until lifted: spam; 0 connections closed"
        client = await server.connect("x")
        refused = await client.request("login", name="Yeni", password=PASSWORD)
        assert refused["code"] == "banned", refused
        assert (await operator.request("ban", name="Nobody"))["code"] == "no_such_player"
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_operators_that_cannot_be_read_are_said_once_and_read_again_later(
        tmp_path: Path) -> None:
    """The store's accounts out of reach (a table renamed away beside the server): the
    flags stay as they were, the failure is logged once over two reads, and once the
    table is back the next read says so."""
    path = tmp_path / "db.sqlite3"
    server = await start(path, operators=frozenset())
    accounts = server.factory.accounts
    assert accounts is not None
    seen: list[LogEvent] = []
    side = sqlite3.connect(path)
    try:
        client, _ = await member(server, "Ayşe")
        tap.main(["operator", "--db", str(path), "add", "Ayşe"])
        await accounts.refresh_operators()
        globalLogPublisher.addObserver(seen.append)  # type: ignore[arg-type]
        side.execute("ALTER TABLE accounts RENAME TO away")
        side.commit()
        await accounts.refresh_operators()
        await accounts.refresh_operators()
        await client.ok("announce", text="still an operator")
        side.execute("ALTER TABLE away RENAME TO accounts")
        side.commit()
        await accounts.refresh_operators()
        await client.ok("announce", text="and still")
    finally:
        globalLogPublisher.removeObserver(seen.append)  # type: ignore[arg-type]
        side.close()
        await server.stop()
    said = [formatEvent(e) for e in seen if "operators" in e.get("log_format", "")]
    assert [text.split(":")[0] for text in said] == [
        "cannot read the operators from the store", "the operators are read from the "
        "store again"]


@pytest_twisted.ensureDeferred
async def test_the_service_reads_the_operator_flags_on_its_clock(tmp_path: Path) -> None:
    """Once the store is open, the service reads the flags every `OPERATORS_EVERY`
    seconds of its clock (a `TimerService`, stopped with it)."""
    path = tmp_path / "db.sqlite3"
    store = SqliteStore(path)
    try:
        account = accounts_.add_account(store, "Ayşe", CHEAP.hasher().hash(PASSWORD), 0.0)
    finally:
        store.close()
    archive = Archive(lambda: SqliteStore(path), reactor)
    clock = Clock()
    factory = make_factory(reactor, archive=archive, community_from=str(path),
                           account_settings=AccountSettings(cost=CHEAP))
    accounts = factory.accounts
    assert accounts is not None
    service = ServerService(factory, [], clock, archive=archive)
    service.startService()
    try:
        # The store opens on its own thread, then the timer starts.
        await poll_until_async(lambda: list(service), BACKSTOP, "the service's timer")
        tap.main(["operator", "--db", str(path), "add", "Ayşe"])
        clock.advance(OPERATORS_EVERY - 0.5)
        await archive.flush()
        await deferLater(reactor, 0, lambda: None)  # (the answer comes on the reactor)
        assert not accounts.is_operator(account)
        clock.advance(0.5)
        await poll_until_async(lambda: accounts.is_operator(account), BACKSTOP,
                               "the operator flag read from the store")
    finally:
        await service.stopService()
    assert not clock.getDelayedCalls()


@pytest_twisted.ensureDeferred
async def test_an_operator_name_no_account_has_makes_nobody_an_operator(
        tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    seen: list[LogEvent] = []
    globalLogPublisher.addObserver(seen.append)  # type: ignore[arg-type]
    try:
        first = await start(path, operators=frozenset({"Ghost"}), create=False)
    finally:
        globalLogPublisher.removeObserver(seen.append)  # type: ignore[arg-type]
    try:
        (warned,) = [e for e in seen if e.get("name") == "Ghost"]
        assert warned["log_level"] == LogLevel.warn
        assert "names no account" in formatEvent(warned)
        accounts = first.factory.accounts
        assert accounts is not None and accounts.unknown_operators == ["Ghost"]
        squatter, _ = await member(first, "Ghost")  # the first to register the name
        assert squatter.received[-1]["operator"] is False
        assert (await squatter.request("announce", text="mine now"))["code"] == \
            "not_operator"
    finally:
        await first.stop()
    # Named at a start where the account exists, it is the operator's.
    second = await start(path, operators=frozenset({"ghost"}), create=False)
    try:
        owner, _ = await member(second, "Ghost")
        assert owner.received[-1]["operator"] is True
    finally:
        await second.stop()


def _script(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return fork_kit.run([sys.executable, "-c", START, *args], input=stdin,
                        capture_output=True, text=True, timeout=120)


START = "from pisyedili.server.service.tap import main; main()"


@pytest_twisted.ensureDeferred
async def test_operator_add_creates_the_account_with_a_password_from_stdin(
        tmp_path: Path) -> None:
    path = tmp_path / "new" / "db.sqlite3"  # no file yet: a server's first operator
    refused = _script("operator", "--db", str(path), "add", "Ayşe", stdin="short\n")
    assert refused.returncode == 1 and "at least 8 characters" in refused.stderr
    bidi = _script("operator", "--db", str(path), "add", "Ayşe", stdin="abc\u202edef ghi\n")
    assert bidi.returncode == 1 and "U+202E" in bidi.stderr
    done = _script("operator", "--db", str(path), "add", "Ayşe", stdin=f"{PASSWORD}\n")
    assert done.returncode == 0, done.stderr
    assert "creating it" in done.stderr and "Ayşe: a new account" in done.stdout
    assert PASSWORD not in done.stdout + done.stderr
    listed = _script("operator", "--db", str(path), "list")
    assert listed.stdout.splitlines() == ["Ayşe"]
    server = await start(path, operators=frozenset(), create=False)
    try:
        client = await server.connect("x")
        answer = await client.request("login", name="AYŞE", password=PASSWORD)
        assert answer["type"] == "account" and answer["name"] == "Ayşe", answer
        assert answer["operator"] is True
    finally:
        await server.stop()


def test_the_console_script_warns_on_stderr_of_an_operator_without_an_account(
        tmp_path: Path) -> None:
    proc = fork_kit.popen(
        [sys.executable, "-c", START, "--listen", "tcp:0:interface=127.0.0.1", "--db",
         str(tmp_path / "db.sqlite3"), "--no-announce", "--log-format", "json",
         "--operator", "Ghost"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8")
    assert proc.stdout is not None and proc.stderr is not None
    out, err = Output(proc.stdout), Output(proc.stderr)
    try:
        err.wait_for(r"warning: --operator 'Ghost' names no account")
        out.wait_for(r'"level": ?"warn".*names no account|names no account.*"level": ?"warn"')
        out.wait_for(r"port=|\"port\"")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _add_at_a_terminal(path: Path, *typed: str) -> tuple[int, str]:
    """`operator add Ayşe` with a terminal for stdin (a pty): the lines `typed` at its
    prompts; its exit status and what the terminal showed."""
    import os
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen(  # a new session: no /dev/tty, so getpass reads the pty
        [sys.executable, "-c", START, "operator", "--db", str(path), "add", "Ayşe"],
        stdin=slave, stdout=subprocess.PIPE, stderr=slave, start_new_session=True,
        text=True, encoding="utf-8")
    os.close(slave)

    def chunks() -> Iterator[str]:  # as the terminal shows them: a prompt ends no line
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO: the child closed its side
                return
            if not data:
                return
            yield data.decode("utf-8", "replace")

    shown = Output(cast(IO[str], chunks()))
    try:
        for line in typed:
            shown.wait_for(r"(Password for Ayşe|Again): ")
            os.write(master, f"{line}\n".encode())
        assert proc.stdout is not None
        out = proc.stdout.read()
        status = proc.wait(timeout=120)
        shown.rest()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    return status, out + shown.text


def test_operator_add_at_a_terminal_asks_twice_unechoed(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    status, shown = _add_at_a_terminal(path, PASSWORD, "another password")
    assert status == 1 and "differ" in shown
    status, shown = _add_at_a_terminal(path, PASSWORD, PASSWORD)
    assert status == 0 and "Ayşe: a new account, now an operator" in shown
    assert PASSWORD not in shown  # never echoed
