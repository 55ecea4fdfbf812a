"""A session handed over to a resume on another process is kept by the shared journal
until its new home has it: should that process die (or miss the answer) before it
takes the session in, the token still resumes elsewhere, rebuilt from the journal's
row, never refused `bad_token`. A session a stopping process hands on is its new
home's only while no other process took it meanwhile.

The test reads the processes' messages as Redis carries them (a subscriber of their
channels), so each fault falls between two messages, not after a guessed delay."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import msgpack
import pg_kit
from poll_kit import poll_until

from cluster.cluster_kit import BACKSTOP, Player, log_of, server
from cluster.redis_kit import RedisAt
from cluster.test_cluster_failover import _one_deal_started, _resume
from pisyedili.protocol.version import PROTOCOL_VERSION
from pisyedili.server.cluster.redis import PREFIX
from pisyedili.server.store.journal import token_hash


class Channels:
    """A subscriber of some of the processes' channels: every message published there,
    as the process it was sent to reads it."""

    def __init__(self, redis: RedisAt, processes: list[str]) -> None:
        address = redis.address
        self._channels = {f"{PREFIX}{address.db}:to:{p}".encode(): p for p in processes}
        self._sock = socket.create_connection((address.host, address.port), timeout=BACKSTOP)
        self._stream = self._sock.makefile("rb")
        self._sock.sendall(_command(b"SUBSCRIBE", *self._channels))
        for _ in self._channels:
            self._reply()  # ["subscribe", channel, count]

    def wait(self, to: str, kind: str) -> dict[str, Any]:
        """The next message of `kind` sent to process `to`."""
        while True:
            _, channel, payload = self._reply()
            unpacked = msgpack.unpackb(payload, raw=False)
            for message in unpacked if isinstance(unpacked, list) else [unpacked]:
                if self._channels.get(channel) == to and message.get("k") == kind:
                    return dict(message)

    def _reply(self) -> Any:
        line = self._stream.readline()
        assert line, "Redis closed the subscription"
        kind, rest = line[:1], line[1:-2]
        if kind == b"*":
            return [self._reply() for _ in range(int(rest))]
        if kind == b"$":
            return self._stream.read(int(rest) + 2)[:-2]
        if kind == b":":
            return int(rest)
        raise AssertionError(f"unexpected {line!r}")

    def close(self) -> None:
        self._sock.close()


def _command(*parts: bytes) -> bytes:
    return b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)


@contextmanager
def _listening(redis: RedisAt, processes: list[str]) -> Iterator[Channels]:
    channels = Channels(redis, processes)
    try:
        yield channels
    finally:
        channels.close()


def _name(proc: subprocess.Popen[str]) -> str:
    """The process's name in the cluster (`p1`, ...)."""
    joined = re.search(r"joined the cluster at \S+ as process (p\d+)", log_of(proc).text)
    assert joined is not None, log_of(proc).text
    return joined.group(1)


def test_a_session_handed_to_a_resume_whose_process_dies_before_taking_it_in_resumes(
        redis: RedisAt, postgres: pg_kit.Cluster) -> None:
    """The player's session is at A; its token resumes through B, which asks A to hand
    it over. B is paused (SIGSTOP) once it asked, A hands the session over and says so,
    and B is killed before it read that. The token resumes through C: the same player,
    in the lobby, rebuilt from the journal."""
    db = postgres.store()
    procs: list[subprocess.Popen[str]] = []
    with ExitStack() as stack:
        ports = []
        for n in range(3):
            proc, port = stack.enter_context(server(redis.url, db, n))
            procs.append(proc)
            ports.append(port)
        (home, asker, _), (a, b, c) = procs, ports
        names = [_name(proc) for proc in procs]
        poll_until(lambda: len(redis.keys(PREFIX + "process:*")) == 3, BACKSTOP,
                   "every process's lease")
        player = Player(a)
        welcome = player.hello("Ayşe")
        heard = stack.enter_context(_listening(redis, names[:2]))
        home.send_signal(signal.SIGSTOP)  # B's ask waits for A to read it
        try:
            resuming = Player(b)
            resuming.send("hello", protocol=PROTOCOL_VERSION, token=welcome["token"],
                          name=welcome["name"])
            assert heard.wait(names[0], "hand")["p"] == str(welcome["player"])
            asker.send_signal(signal.SIGSTOP)
        finally:
            home.send_signal(signal.SIGCONT)
        try:
            handed = heard.wait(names[1], "handed")
            assert handed["ok"] is True, handed
            log_of(home).wait_for(rf"session {welcome['player']} is held by another "
                                  r"process now")
        finally:
            asker.send_signal(signal.SIGKILL)
            asker.wait(BACKSTOP)
        player.close()
        resuming.close()
        _, again = _resume(c, welcome)
        assert (again["resumed"], again["player"], again["name"], again.get("table")) \
            == (True, welcome["player"], welcome["name"], None), again


def test_a_session_handed_on_by_a_stopping_process_and_rebuilt_meanwhile_stays_its_taker_s(
        redis: RedisAt, postgres: pg_kit.Cluster) -> None:
    """The host's table and session are A's, its guest's C's. B, to which A hands the
    host's session as it stops (SIGTERM), is paused (SIGSTOP) before it reads that: A
    stops anyway once B's lease runs out, C takes the table over, and the host resumes
    through C, its session rebuilt there from the journal. B, woken, takes the session
    handed to it in, finds C holds it in the cluster, and lets it go: a resume through
    B is handed over by C, welcomed at its table, and the table's snapshot follows."""
    db = postgres.store()
    procs: list[subprocess.Popen[str]] = []
    ports: list[int] = []
    with ExitStack() as stack:
        for n in range(3):
            proc, port = stack.enter_context(server(redis.url, db, n))
            procs.append(proc)
            ports.append(port)
        poll_until(lambda: len(redis.keys(PREFIX + "process:*")) == 3, BACKSTOP,
                   "every process's lease")
        names = [_name(proc) for proc in procs]
        # A stopping process hands a session at its own table to the first live one.
        b, c = sorted((1, 2), key=lambda n: names[n])
        home, taker, keeper = procs[0], procs[b], procs[c]
        host, guest, table = _one_deal_started(ports[0], ports[c])
        heard = stack.enter_context(_listening(redis, [names[0]]))
        taker.send_signal(signal.SIGSTOP)
        try:
            home.send_signal(signal.SIGTERM)
            assert home.wait(BACKSTOP) == 0
            log_of(keeper).wait_for(rf"took table {table} over")
            host.close()
            back, welcome = _resume(ports[c], host.welcome)
            assert (welcome["resumed"], welcome.get("table")) == (True, table), welcome
        finally:
            taker.send_signal(signal.SIGCONT)
        player = str(welcome["player"])
        adopted = heard.wait(names[0], "adopted")
        assert (adopted["p"], adopted["from"], adopted["ok"]) == (player, names[b], True)
        log_of(taker).wait_for(rf"the session of player {player} is held by process "
                               rf"{names[c]} ")
        record = PREFIX + f"session:{token_hash(welcome['token']).hex()}"
        assert redis.command("HGET", record, "process") == names[c]
        back.close()
        again, rewelcome = _resume(ports[b], welcome)
        assert (rewelcome["resumed"], rewelcome.get("table")) == (True, table), rewelcome
        again.seated_again(table)
        guest.close()


def test_a_session_asked_for_while_a_takeover_places_it_is_handed_over_at_its_table(
        redis: RedisAt, postgres: pg_kit.Cluster) -> None:
    """A stops (SIGTERM) and hands its host's session to B, whose sweep takes the host's
    table over (C, where the guest plays, is paused meanwhile and takes nothing). As
    B places the table's members (Redis's answer about the guest held back), the host
    resumes through C, which asks B for the session: B hands it over once the table
    seats it, as a table of its own, and the table's snapshot follows the welcome."""
    db = postgres.store()
    held = pg_kit.HeldReply(redis.url)
    with ExitStack() as stack:
        home, a = stack.enter_context(server(redis.url, db, 0))
        taker, _ = stack.enter_context(server(held.url, db, 1))
        keeper, c = stack.enter_context(server(redis.url, db, 2))
        poll_until(lambda: len(redis.keys(PREFIX + "process:*")) == 3, BACKSTOP,
                   "every process's lease")
        names = [_name(proc) for proc in (home, taker, keeper)]
        # A stopping process hands a session at its own table to the first live one.
        assert names[1] < names[2], names
        host, guest, table = _one_deal_started(a, c)
        player = host.welcome["player"]
        held.arm(f"session:{token_hash(guest.welcome['token']).hex()}".encode())
        keeper.send_signal(signal.SIGSTOP)
        try:
            home.send_signal(signal.SIGTERM)
            assert home.wait(BACKSTOP) == 0
            poll_until(held.cut.is_set, BACKSTOP, "the taker's question about the guest")
        finally:
            keeper.send_signal(signal.SIGCONT)
        try:
            host.close()
            back = Player(c)
            back.send("hello", protocol=PROTOCOL_VERSION, token=host.welcome["token"],
                      name=host.welcome["name"])
            log_of(taker).wait_for(rf"session {player}(, asked for by| is held by another)")
        finally:
            held.release()
        welcome = back.wait(lambda m: m.get("id") == back.rid)
        assert (welcome["type"], welcome.get("table")) == ("welcome", table), welcome
        back.seated_again(table)
        guest.close()
    held.close()
