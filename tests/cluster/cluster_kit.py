"""Server processes of one cluster, and a blocking player to talk to them."""

from __future__ import annotations

import random
import select
import socket
import struct
import subprocess
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any
from weakref import WeakKeyDictionary

from process_output import Output, add_operator, logged_server

from pisyedili.protocol.codec import decode, frame
from pisyedili.protocol.limits import SERVER_FRAME_LIMITS
from pisyedili.protocol.version import PROTOCOL_VERSION

BACKSTOP = 20.0
LEASE = 3
"""Seconds a killed process is taken for alive by the others: short, for the tests."""
Msg = dict[str, Any]
PASSWORD = "a long enough password 7"
"""The password of the accounts the tests register, the operator's too."""


@contextmanager
def cluster(url: str, folder: Path, count: int, *extra: str, db: str | None = None,
            listen: str = "tcp:0:interface=127.0.0.1",
            each: Callable[[int], Sequence[str]] = lambda n: ()
            ) -> Iterator[list[tuple[subprocess.Popen[str], int]]]:
    """`count` server processes joined to the cluster at `url`, each with its own file
    (or all on the one database `db`), listening at `listen` (the port yielded) and
    given `each(n)` as well."""
    with ExitStack() as stack:
        yield [stack.enter_context(server(url, db or str(folder / f"p{n}.db"), n, *extra,
                                          *each(n), listen=listen))
               for n in range(count)]


@contextmanager
def server(url: str, db: str, n: int, *extra: str,
           listen: str = "tcp:0:interface=127.0.0.1"
           ) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """One process of the cluster at `url`, on the store `db` (`n` seeds it); its log
    is `log_of` it."""
    with logged_server(
            "--listen", listen, "--db", db,
            "--cluster", url, "--cluster-lease", str(LEASE), "--seed", str(n),
            "--turn-seconds", "0", "--bot-delay", "0", "--no-announce", *extra,
            timeout=BACKSTOP) as (proc, port, out):
        _LOGS[proc] = out
        yield proc, port


_LOGS: WeakKeyDictionary[subprocess.Popen[str], Output] = WeakKeyDictionary()


def log_of(proc: subprocess.Popen[str]) -> Output:
    """The log of a process `server` (or `cluster`) started: a test waits on the line
    that says a thing happened in it, where nothing on the wire shows it."""
    return _LOGS[proc]


@contextmanager
def operated(url: str, db: str, folder: Path, features: tuple[str, ...]
             ) -> Iterator[tuple[Player, int, subprocess.Popen[str], int]]:
    """Two processes of the cluster at `url` on the one shared store `db`, with Zeynep
    made an operator by `pisyedili-server operator add` and logged in on A (with
    `features` and moderation): the operator, A's port, B's process and B's port."""
    add_operator(db, "Zeynep", PASSWORD)
    with cluster(url, folder, 2, db=db) as [(_, a), (proc_b, b)]:
        operator = Player(a)
        operator.hello("z", (*features, "moderation"))
        assert operator.ok("login", name="Zeynep", password=PASSWORD)["operator"] is True
        yield operator, a, proc_b, b


class Player:
    """One connection: requests and their replies, and every other message kept."""

    def __init__(self, port: int, source: str = "127.0.0.1") -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=BACKSTOP,
                                             source_address=(source, 0))
        self.rid = 0
        self.seen: list[Msg] = []
        self.welcome: Msg = {}

    def hello(self, name: str, features: tuple[str, ...] = ("chat",)) -> Msg:
        self.welcome = self.request("hello", protocol=PROTOCOL_VERSION, name=name,
                                    features=list(features))
        return self.welcome

    def send(self, type_: str, **fields: Any) -> None:
        self.rid += 1
        self.sock.sendall(frame({"type": type_, "id": self.rid, **fields}))

    def recv(self) -> Msg | None:
        """The next message, or None once the server closed."""
        head = self.sock.recv(4, socket.MSG_WAITALL)
        if len(head) < 4:
            return None
        body = self.sock.recv(struct.unpack(">I", head)[0], socket.MSG_WAITALL)
        msg = decode(body, SERVER_FRAME_LIMITS)
        self.seen.append(msg)
        return msg

    def request(self, type_: str, **fields: Any) -> Msg:
        """The reply to one request (an `error` too)."""
        self.send(type_, **fields)
        while (msg := self.recv()) is not None:
            if msg.get("id") == self.rid:
                return msg
        raise AssertionError(f"closed before the reply to {type_}")

    def ok(self, type_: str, **fields: Any) -> Msg:
        reply = self.request(type_, **fields)
        assert reply["type"] != "error", reply
        return reply

    def wait(self, wanted: Callable[[Msg], bool], since: int = 0) -> Msg:
        """The first message, seen already (from `seen[since]` on) or to come, that
        is `wanted`."""
        for old in self.seen[since:]:
            if wanted(old):
                return old
        while (msg := self.recv()) is not None:
            if wanted(msg):
                return msg
        raise AssertionError("closed before the message awaited")

    def seated_again(self, table: int, seat: int = 0) -> None:
        """The snapshot a resumed player gets next: `table`, at `seat`, shown connected."""
        snapshot = self.wait(lambda m: m["type"] == "table")
        assert (snapshot["table"]["id"], snapshot["you"]["seat"]) == (table, seat), snapshot
        assert snapshot["table"]["seats"][seat]["connected"] is True, snapshot

    def close(self) -> None:
        self.sock.close()


def watched_table(watching: int, hosting: int
                  ) -> tuple[Player, Player, int, Callable[[str, int], Msg]]:
    """A lobby subscriber at the process on port `watching`, the host connected to
    `hosting` (kept connected by the caller: a table whose host's grace ran out closes)
    and the table it opens (told to the subscriber: the table's first `add` is waited
    for); `told(op, since)` is the subscriber's next `lobby_update` of `op` about the
    table, from its `seen[since]` on."""
    watcher = Player(watching)
    watcher.hello("Zeynep")
    watcher.ok("lobby_subscribe")
    host = Player(hosting)
    host.hello("Deniz")
    table: int = host.ok("create_table", rules="classic", seats=2)["table"]["id"]

    def told(op: str, since: int) -> Msg:
        return watcher.wait(lambda m: m["type"] == "lobby_update" and m["op"] == op
                            and m["table"] == table, since)

    told("add", 0)
    return watcher, host, table, told


def listed(port: int) -> list[int]:
    """The tables a new player at `port` finds listed."""
    reader = Player(port)
    try:
        reader.hello("Okur")
        return [row["id"] for row in reader.ok("lobby_subscribe")["tables"]]
    finally:
        reader.close()


def over(player: Player) -> bool:
    """Whether `player` saw its match end."""
    return any(e.get("event") == "match_end" for m in player.seen if m["type"] == "update"
               for e in m.get("events", ()))


def play_out(players: list[Player], watchers: list[Player], rng: random.Random) -> None:
    """Every message, in turn, until both players saw the match end; each player
    answers the moves it is offered."""
    everyone = {p.sock: p for p in players + watchers}
    moved: dict[Player, int] = {}  # a move sent, its reply not read yet
    while not all(over(p) for p in players):
        ready, _, _ = select.select(list(everyone), [], [], 20)
        assert ready, "nothing came for 20 s"
        for sock in ready:
            someone = everyone[sock]
            msg = someone.recv()
            assert msg is not None, "a server closed a connection"
            assert msg["type"] != "error", msg
            if msg.get("id") is not None and msg["id"] == moved.get(someone):
                del moved[someone]  # what came before this reply was offered before the move
            if someone in players and "moves" in msg and someone not in moved:
                someone.send("move", move=rng.choice(msg["moves"]))
                moved[someone] = someone.rid
