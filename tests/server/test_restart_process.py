"""A real server process `SIGKILL`ed at random moments of matches in both rule sets and
started again on the same store (a SQLite file; a PostgreSQL database too): what its
client last received is where the table is.

With `--seed` and bots that move at once, a match is the same every time it is played
the same way; a reference run records every view the player receives. A killed run
reads, after the kill, whatever the server managed to write before it died; the table
its file holds must then be at the last view received or (when a step was committed
but the process died before writing it) the one just after. Never an earlier one:
that would be a step someone was told of and the server forgot. The restarted server
then gives the player the seat back, and the match plays on.
"""

from __future__ import annotations

import random
import signal
import socket
import struct
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from process_output import server_process
from twisted.internet.task import Clock

from pisyedili.protocol.codec import decode, frame
from pisyedili.protocol.limits import SERVER_FRAME_LIMITS
from pisyedili.protocol.version import PROTOCOL_VERSION
from pisyedili.server.rules import Options
from pisyedili.server.store.journal import StoreJournal
from pisyedili.server.table.core import TableCore, TableSettings

BACKSTOP = 20.0
Msg = dict[str, Any]


@contextmanager
def server(db: str) -> Iterator[tuple[subprocess.Popen[str], int]]:
    with server_process("--listen", "tcp:0:interface=127.0.0.1", "--db", db, "--seed",
                        "3", "--turn-seconds", "0", "--bot-delay", "0", "--no-announce",
                        timeout=BACKSTOP) as running:
        yield running


class Client:
    """A blocking client, as small as the protocol allows."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=BACKSTOP)
        self.rid = 0
        self.views: list[Msg] = []  # every message that carried a view, in order
        self.welcome: Msg = {}

    def send(self, type_: str, **fields: Any) -> None:
        self.rid += 1
        self.sock.sendall(frame({"type": type_, "id": self.rid, **fields}))

    def recv(self) -> Msg | None:
        try:
            head = self.sock.recv(4, socket.MSG_WAITALL)
            (size,) = struct.unpack(">I", head) if len(head) == 4 else (-1,)
            body = self.sock.recv(size, socket.MSG_WAITALL) if size >= 0 else b""
        except ConnectionResetError:  # killed with our move unread: after what it sent
            return None
        if size < 0 or len(body) < size:
            return None  # the server is gone
        msg = decode(body, SERVER_FRAME_LIMITS)
        if msg.get("view") is not None:
            self.views.append(msg)
        return msg

    def answer(self, type_: str, **fields: Any) -> Msg:
        self.send(type_, **fields)
        while True:
            msg = self.recv()
            assert msg is not None
            if msg.get("id") == self.rid:
                assert msg["type"] != "error", msg
                return msg


def stored_view(db: str, member: str) -> tuple[int, dict[str, Any]]:
    """The table in the file, as a restart rebuilds it (before its timers run on)."""
    journal = StoreJournal.open(db, Clock())
    try:
        (table,) = journal.load().tables
    finally:
        journal.close()
    setup = table.setup
    core = table.core or TableCore(  # from its deal snapshot, or from the start
        table.id, setup["name"], Options(**setup["options"]), private=setup["private"],
        host=setup["opener"], settings=TableSettings(**setup["settings"]),
        code=setup["code"])
    assert table.core is not None  # the match is under way: a deal began
    for at, command in table.commands:
        core.handle(command, at)
    return table.id, core.snapshot(member)["view"]


def play(client: Client, rules: str, rng: random.Random, kill_after: int | None = None,
         proc: subprocess.Popen[str] | None = None) -> str:
    """Open a table with two bots and play; with `kill_after`, SIGKILL the server once
    that many views have arrived — half the time right after sending the next move,
    before reading a byte of its answer. The player's token."""
    welcome = client.welcome = client.answer("hello", protocol=PROTOCOL_VERSION, name="Ayşe")
    client.answer("create_table", rules=rules, seats=3, options={"match_end": "deals:1"})
    for seat in (1, 2):
        client.answer("add_bot", seat=seat, level="medium")
    client.answer("start")
    mid_move = rng.random() < 0.5
    while True:
        msg = client.recv()
        assert msg is not None, "the server went away"
        if kill_after is not None and proc is not None and len(client.views) >= kill_after \
                and not mid_move:
            proc.send_signal(signal.SIGKILL)
            return str(welcome["token"])
        if msg["type"] == "update" and any(e["event"] == "match_end" for e in msg["events"]):
            if proc is not None:  # no move of ours came after `kill_after`: now, then
                proc.send_signal(signal.SIGKILL)
            return str(welcome["token"])
        if "moves" in msg:
            client.send("move", move=rng.choice(msg["moves"]))
            if kill_after is not None and proc is not None and len(client.views) >= kill_after:
                proc.send_signal(signal.SIGKILL)
                return str(welcome["token"])


@pytest.mark.parametrize(("new_db", "rules", "kills"), [
    ("sqlite", "classic", 4), ("sqlite", "cardiva", 4),
    ("postgres", "classic", 2)],  # the store's part is the same for every rule set
    indirect=["new_db"])
def test_a_killed_server_comes_back_where_its_client_was(new_db: Callable[[str], str],
                                                         rules: str, kills: int) -> None:
    with server(new_db("reference")) as (_, port):
        reference = Client(port)
        play(reference, rules, random.Random(rules))
    full = reference.views
    assert len(full) > 10
    picker = random.Random(f"kills-{rules}")
    for run in range(kills):
        db = new_db(f"{rules}-{run}")
        kill_after = picker.randrange(1, len(full) - 1)
        with server(db) as (proc, port):
            client = Client(port)
            token = play(client, rules, random.Random(rules), kill_after, proc)
            proc.wait(timeout=BACKSTOP)
            while client.recv() is not None:  # what it wrote before it died
                pass
        got = client.views
        assert [m["view"] for m in got] == [m["view"] for m in full[:len(got)]]
        member = str(client.welcome["player"])
        table_id, stored = stored_view(db, member)
        # Nothing seen is lost: the store is at the last view seen or past it. Past it
        # by more than one view when the kill came between a commit and its sends: a
        # database server's commit holds every command made while the one before was
        # in flight (bots at delay 0 make several).
        candidates = [m["view"] for m in full[len(got) - 1:]]
        assert stored in candidates, (run, kill_after, len(got))
        with server(db) as (_, port):
            back = Client(port)
            welcome = back.answer("hello", protocol=PROTOCOL_VERSION, name="Ayşe",
                                  token=token)
            assert welcome["resumed"] is True and welcome["name"] == "Ayşe"
            snap = back.recv()
            assert snap is not None and snap["type"] == "table", snap
            assert snap["table"]["id"] == table_id and snap["you"]["seat"] == 0
            if "moves" in snap:  # and the match plays on
                back.answer("move", move=snap["moves"][0])


OUTAGE = 6.0
"""Seconds a killed server stays down in the clock's test: far longer than a restarted
server takes, even on a busy machine, from rebuilding its tables to a player's resume."""


def test_a_killed_servers_turn_keeps_its_time(tmp_path: Path) -> None:
    """The turn's clock stands still while the server is down: the resumed snapshot's
    `deadline` has not lost the outage."""
    db = str(tmp_path / "clock.sqlite3")
    timed = ("--listen", "tcp:0:interface=127.0.0.1", "--db", db, "--seed", "3",
             "--turn-seconds", "60", "--bot-delay", "0", "--no-announce")
    with server_process(*timed, timeout=BACKSTOP) as (proc, port):
        client = Client(port)
        token = client.answer("hello", protocol=PROTOCOL_VERSION, name="Ayşe")["token"]
        client.answer("create_table", rules="classic", seats=2,
                      options={"match_end": "deals:1"})
        client.answer("add_bot", seat=1, level="medium")
        client.answer("start")
        while "moves" not in (turn := client.recv() or {}):
            assert turn, "the server went away"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=BACKSTOP)
        client.sock.close()
    time.sleep(OUTAGE)  # the outage itself: nothing to wait for
    with server_process(*timed, timeout=BACKSTOP) as (_, port):
        back = Client(port)
        welcome = back.answer("hello", protocol=PROTOCOL_VERSION, name="Ayşe", token=token)
        assert welcome["resumed"] is True
        snap = back.recv()
        assert snap is not None and snap["type"] == "table" and "moves" in snap, snap
        assert snap["deadline"] > turn["deadline"] - OUTAGE / 2, (turn, snap)
