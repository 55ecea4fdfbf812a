"""`pisyedili-bench load`: the real server, in its own process, under many connections.

The server runs as a subprocess (its own entry point, `tap.main`) so that its CPU and
memory are its own and the load client in this process cannot borrow its core. The
figure that matters is a ratio: moves/s against the requests/s of a bare Twisted
msgpack echo server at the same concurrency, measured alternately in the same run,
because the machines this is run on are noisy and absolute numbers do not carry over.

The pause between deals is set to the bench's (0 s by default, not the server's 4 s):
with it, most tables would sit idle reading scores and the bench would measure the
pause. `pisyedili-server --deal-pause` sets it; the bench starts the server through `--serve`,
which sets the pause whether or not the server has that option.

Two more measures put the figure in context. The fan-out bar (`--fanout-serve`) is a
bare Twisted server with a move's I/O shape and nothing else: the I/O floor of a move,
what a server that only reads a move and writes an `update` to each member of the
table reaches; no work on the game's side can take the server past it. The paced round
has the scripted clients think for the server's own bot delay before each move, the
pace a real table plays at, where latency is the server's own and not the queue of a
saturated closed loop.
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import os
import random
import re
import resource
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack

from pisyedili.server.bench.services import (
    NotInstalled,
    Postgres,
    RedisServer,
    end_process,
    flush_redis,
)

HOST = "127.0.0.1"
SESSIONS_PER_SOURCE = 30
"""The server allows 32 live sessions per address by default, so many connections come
from many 127.x.y.z source addresses, 30 each, whatever that limit is set to."""
MAX_SAMPLES = 2_000_000
SETUP_PARALLEL = 200
"""Tables (or idle connections) set up at once: enough to be quick, few enough that the
listen backlog never overflows into SYN retries."""
REQUEST_TIMEOUT = 30.0
START_TIMEOUT = 20.0
HELLO_PROBES = 20
MATCH_END = {"classic": "deals:100", "cardiva": "points:10000"}
"""The longest matches allowed, so that matches rarely end inside a measurement (when one
does, every human agrees to a rematch)."""

Msg = dict[str, Any]

FANOUT_GROUP = 4
"""Members of one fan-out group: the connections of a four-seat table."""
FANOUT_UPDATE: Msg = {
    "type": "update", "table": 137, "events": [{"event": "play", "seat": 2, "card": "9h"}],
    "view": {"rules": "classic",
             "options": {"rules": "classic", "players": 4, "ten": "reverse",
                         "empty_stock": "end_deal", "match_end": "deals:100", "decks": 1,
                         "turn_seconds": 0},
             "players": 4, "seat": 3, "dealer": 1, "phase": "play", "turn": 3,
             "direction": 1, "hand": ["Ac", "5d", "8d", "Kd", "2s", "7s", "9c"],
             "hand_counts": [4, 6, 5, 7], "top": "9h", "named_suit": None,
             "pile": ["Qc", "Kc", "9c", "7c", "Jh", "9h"], "stock": 19, "penalty": 0,
             "first_round": 0, "must_follow": None, "drew": False,
             "scores": [36, 0, 70, 12], "deal_no": 3, "muamele": None, "result": None},
    "moves": [{"kind": "play", "card": "9c"}, {"kind": "draw"}]}
"""What the fan-out bar sends each member: a classic four-seat `update` of about the
size the real server sends in mid-deal (~460 bytes framed, `seq` added per request)."""
_LENGTH = struct.Struct("!I")
FANOUT_ROUND_KEYS = ("fanout_moves_per_s", "fanout_server_cpu_s", "fanout_client_cpu_s")
RATE_KEYS = ("moves_per_s", "mover_p50_ms", "mover_p99_ms", "last_seat_p50_ms",
             "last_seat_p99_ms", "cpu_per_move_ms", "errors")
"""The figures of a round paced at `--paced-rate`, one process's (`rate_single_`) and
the cluster's (`cluster_paced_`)."""
PACED_KEYS = ("paced_moves_per_s", "paced_mover_p50_ms", "paced_mover_p99_ms",
              "paced_last_seat_p50_ms", "paced_last_seat_p99_ms", "paced_server_cpu_s",
              "paced_errors")
"""The figures of a fan-out round and of the paced round: null when they are skipped
(`--no-fanout`, `--paced-think 0`), so that every run prints the same keys."""


# -- measuring processes ------------------------------------------------------------------


def cpu_seconds(pid: int | None = None) -> float | None:
    """User + system CPU seconds of this process (None) or of `pid` (Linux /proc only)."""
    if pid is None:
        ru = resource.getrusage(resource.RUSAGE_SELF)
        return ru.ru_utime + ru.ru_stime
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()  # the name may hold spaces
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    return (int(fields[11]) + int(fields[12])) / ticks


def runqueue_seconds(pid: int) -> float | None:
    """Seconds `pid` was ready to run but waited for a core (`/proc/PID/schedstat`,
    Linux with schedstats; None elsewhere): on a shared machine, how much of a round's
    latency is other jobs' doing."""
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


def rss_kib(pid: int) -> int | None:
    """Resident memory of `pid` in KiB (VmRSS), or None off Linux."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def source_address(i: int) -> str:
    """The `i`th loopback source address (127.0.0.2 on), skipping .0 and .255."""
    block, last = divmod(i + 1, 254)
    return f"127.{(block >> 8) & 255}.{block & 255}.{last + 1}"


def _usable_sources() -> bool:
    try:
        with socket.socket() as s:
            s.bind((source_address(300), 0))
        return True
    except OSError:
        return False


def raise_fd_limit() -> None:
    """Children inherit it: 10k connections need 10k descriptors on each side."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError):
            pass


_LIVE: list[Child] = []
"""Children not stopped yet: `main` ends them whatever way the run ended."""
_SERVICES: list[RedisServer | Postgres] = []
"""The Redis and PostgreSQL a run started or made stores on: ended (or their stores
dropped) after the children, whatever way the run ended."""


LISTENING = re.compile(rb"listening on .*port=(\d+)")
"""The line a server child writes once it listens: the server's log line, or the bars'."""


class Child:
    """A subprocess that is always ended: terminate, then kill if it lingers.

    It listens on a port it bound itself (port 0) and names it on stdout (`LISTENING`),
    so no port is picked here and hoped free until the child binds it. Its stdout goes
    to a file, which a talkative server cannot fill the way it fills a pipe."""

    def __init__(self, argv: list[str]) -> None:
        self.log = tempfile.TemporaryFile()
        self.out = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self.out,
                                     stderr=self.log)
        _LIVE.append(self)
        deadline = time.monotonic() + START_TIMEOUT
        while True:  # bounded by START_TIMEOUT
            self.out.seek(0)
            found = LISTENING.search(self.out.read())
            if found:
                self.port = int(found.group(1))
                break
            if self.proc.poll() is not None:
                raise RuntimeError(f"{argv[:4]} exited with {self.proc.returncode}: "
                                   f"{self.stderr()}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"{argv[:4]} did not listen in {START_TIMEOUT} s")
            time.sleep(0.05)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stderr(self) -> str:
        self.log.seek(0)
        return self.log.read()[-2000:].decode(errors="replace")

    def stop(self) -> None:
        if self in _LIVE:
            _LIVE.remove(self)
        end_process(self.proc)
        self.log.close()
        self.out.close()


def _write(transport: Any, body: bytes) -> None:
    """One frame (`Int32StringReceiver.sendString`, without its per-call checks)."""
    transport.write(len(body).to_bytes(4, "big") + body)


def _nodelay(transport: Any) -> None:
    transport.setTcpNoDelay(True)  # small interactive frames, as the server sets too


def server_argv(seed: int, deal_pause: float, profile: str | None,
                db_path: str = ":memory:", cluster: str | None = None) -> list[str]:
    """The server's command line, on a port of its choosing (`Child` reads it from the
    server's log). `db_path` is `:memory:` (nothing kept) or a fresh
    file or PostgreSQL schema, so the journal writes every command as a server on a
    real store does; never the user's own database. With `cluster` (a Redis URL) the
    process joins that cluster."""
    run = ([sys.executable, "-m", "cProfile", "-o", profile] if profile
           else [sys.executable])
    huge = "1000000"
    from pisyedili.server.service.tap import ServerOptions

    db = ["--db", db_path]
    # An explicit --deal-pause wins over the default `serve` patches in.
    pause = ["--deal-pause", str(deal_pause)] \
        if any(o[0] == "deal-pause" for o in ServerOptions.optParameters) else []
    return [*run, "-m", "pisyedili.server.bench.load", "--serve", str(deal_pause),
            "--listen", f"tcp:0:interface={HOST}:backlog=4096", "--no-announce",
            "--seed", str(seed), "--bot-delay", "0", "--turn-seconds", "0",
            "--max-connections", "30000", "--max-per-address", "30000",
            "--max-tables-per-address", huge, "--max-tables-total", huge,
            "--rate", huge, "--burst", huge, "--ping-seconds", "3600",
            "--idle-seconds", "7200", "--handshake-seconds", "600", *db, *pause,
            *(["--cluster", cluster] if cluster else [])]


def serve(argv: list[str]) -> None:
    """`--serve PAUSE ARGS`: `pisyedili-server ARGS`, with the pause between deals set
    (for servers without `--deal-pause`; with it, ARGS sets the pause itself)."""
    from pisyedili.server.service import tap
    from pisyedili.server.table.core import TableSettings

    vars(tap)["TableSettings"] = functools.partial(TableSettings, deal_pause=float(argv[0]))
    tap.main(argv[1:])


def _listening(listener: Any) -> None:
    """Name the port a bar's server bound (`LISTENING`), for `Child`."""
    sys.stdout.write(f"listening on port={listener.getHost().port}\n")
    sys.stdout.flush()


def echo(port: int = 0) -> None:
    """`--echo [PORT]`: the bar; one msgpack frame decoded and encoded back per request."""
    from twisted.internet import reactor as _reactor
    from twisted.internet.protocol import Factory
    from twisted.protocols.basic import Int32StringReceiver

    reactor: Any = _reactor

    class Echo(Int32StringReceiver):
        def connectionMade(self) -> None:
            _nodelay(self.transport)

        def stringReceived(self, string: bytes) -> None:
            _write(self.transport, msgpack.packb(msgpack.unpackb(string)))

    _listening(reactor.listenTCP(port, Factory.forProtocol(Echo), backlog=4096,
                                 interface=HOST))
    reactor.run()


def fanout_frame_bytes(seq: int = 100_000) -> int:
    """Bytes of one fan-out frame on the wire, length prefix included (a `seq` past
    65,535, as most are in a round, takes 5 bytes)."""
    return len(msgpack.packb({**FANOUT_UPDATE, "seq": seq})) + _LENGTH.size


def fanout(port: int) -> None:
    """`--fanout-serve PORT` (0: a free one): the I/O floor of a move. Each connection
    joins a group of `FANOUT_GROUP` with its first frame, in the order those arrive (one
    that never sends joins none); each later frame is decoded and answered by
    an `update` to every member, the requester first, each encoded on its own by the
    server's encoder (as the server encodes every member's view) and sent as the server
    sends (`net.send_frame`): straight to the socket while the transport holds
    nothing, else through it."""
    from twisted.internet import reactor as _reactor
    from twisted.internet.protocol import Factory
    from twisted.protocols.basic import Int32StringReceiver

    from pisyedili.protocol.codec import encode as pack
    from pisyedili.server.net.tcp import send_frame, sendable_socket

    reactor: Any = _reactor
    unpack = msgpack.unpackb
    groups: dict[int, list[Member]] = {}
    joined = 0

    class Member(Int32StringReceiver):
        def connectionMade(self) -> None:
            _nodelay(self.transport)
            self.sock = sendable_socket(self.transport)
            self.group: list[Member] | None = None

        def connectionLost(self, reason: object = None) -> None:
            if self.group is not None and self in self.group:
                self.group.remove(self)

        def stringReceived(self, string: bytes) -> None:
            nonlocal joined
            seq = unpack(string).get("seq")
            group = self.group
            if group is None:
                number, seat = divmod(joined, FANOUT_GROUP)
                joined += 1
                group = self.group = groups.setdefault(number, [])
                group.append(self)
                self.send(pack({"type": "welcome", "group": number, "seat": seat}))
                return
            self.send(pack({**FANOUT_UPDATE, "seq": seq}))
            for member in group:
                if member is not self:
                    member.send(pack({**FANOUT_UPDATE, "seq": seq}))

        def send(self, body: bytes) -> None:
            send_frame(self.sock, self.transport, _LENGTH.pack(len(body)) + body)

    _listening(reactor.listenTCP(port, Factory.forProtocol(Member), backlog=4096,
                                 interface=HOST))
    reactor.run()


# -- the load clients ---------------------------------------------------------------------


@dataclass
class Counters:
    """What the clients saw inside the measurement window (`measuring`)."""

    measuring: bool = False
    think: float = 0.0
    """Mean seconds a scripted client waits before answering a decision (0: at once)."""
    rng: random.Random = field(default_factory=lambda: random.Random(1))
    moves: int = 0
    frames: int = 0
    bytes: int = 0
    errors: int = 0
    echoes: int = 0
    fanouts: int = 0
    moves_at: dict[int, int] = field(default_factory=dict)
    """Moves counted by the process that holds the table (its index in a cluster)."""
    mover_ms: list[float] = field(default_factory=list)
    last_seat_ms: list[float] = field(default_factory=list)

    def reset(self) -> None:
        self.moves = self.frames = self.bytes = self.errors = self.echoes = 0
        self.fanouts = 0
        self.moves_at.clear()
        self.mover_ms.clear()
        self.last_seat_ms.clear()


@dataclass
class Table:
    """One table's clients; `pending` maps a step (the nth update every member gets) to
    the move that causes it: when it was sent, by whom, and how many members have it."""

    humans: int
    pending: dict[int, list[Any]] = field(default_factory=dict)


def _client_class() -> Any:
    """The client protocol, built on first use so that `--serve` never imports it."""
    from twisted.internet import reactor as _reactor
    from twisted.internet.defer import Deferred
    from twisted.protocols.basic import Int32StringReceiver
    from twisted.python.failure import Failure

    from pisyedili.protocol.limits import MAX_SERVER_FRAME

    reactor: Any = _reactor

    unpack = msgpack.unpackb
    pack = msgpack.packb
    now = time.perf_counter

    class LoadClient(Int32StringReceiver):
        """Answers every decision at once with the first legal move offered."""

        MAX_LENGTH = MAX_SERVER_FRAME

        def __init__(self, counters: Counters) -> None:
            self.c = counters
            self.table: Table | None = None
            self.host = False
            self.home = 0
            """The index of the process this client is connected to."""
            self.updates = 0
            self.next_id = 1
            self.waiters: dict[int, Deferred[Msg]] = {}
            self.lost: Deferred[None] = Deferred()

        def connectionMade(self) -> None:
            _nodelay(self.transport)

        def connectionLost(self, reason: Failure | None = None) -> None:
            for d in self.waiters.values():
                if not d.called:
                    d.errback(ConnectionError("connection lost"))
            self.waiters.clear()
            if not self.lost.called:
                self.lost.callback(None)

        def send(self, msg: Msg) -> int:
            rid = self.next_id
            self.next_id += 1
            msg["id"] = rid
            _write(self.transport, pack(msg))
            return rid

        def request(self, type_: str, **fields: Any) -> Deferred[Msg]:
            d: Deferred[Msg] = Deferred()
            self.waiters[self.send({"type": type_, **fields})] = d
            d.addTimeout(REQUEST_TIMEOUT, reactor)
            return d

        def move(self, moves: list[Msg]) -> None:
            if self.c.think:  # uniform around the mean, so that tables fall out of step
                reactor.callLater(self.c.rng.uniform(0, 2 * self.c.think), self._move,
                                  moves[0], self.updates)
            else:
                self._move(moves[0], self.updates)

        def _move(self, move: Msg, seen: int) -> None:
            table = self.table
            if table is not None:
                table.pending[seen + 1] = [now(), self, 0, self.c.measuring]
            self.send({"type": "move", "move": move})

        def stringReceived(self, string: bytes) -> None:
            c = self.c
            if c.measuring:
                c.frames += 1
                c.bytes += len(string) + 4
            msg = unpack(string)
            kind = msg["type"]
            if kind == "update":
                self.updates += 1
                table = self.table
                if table is not None:
                    self._arrived(table, msg)
                if "moves" in msg:
                    self.move(msg["moves"])
                elif any(e["event"] == "match_end" for e in msg["events"]):
                    self.send({"type": "rematch", "agree": True})
            elif kind == "table":
                if "moves" in msg:
                    self.move(msg["moves"])
                self._answer(msg)
            elif kind == "ping":
                _write(self.transport, pack({"type": "pong", **({"id": msg["id"]}
                                                             if "id" in msg else {})}))
            elif kind != "ok" or self.waiters:
                if kind == "error" and c.measuring:
                    c.errors += 1
                self._answer(msg)

        def _answer(self, msg: Msg) -> None:
            rid = msg.get("id")
            d = self.waiters.pop(rid, None) if rid is not None else None
            if d is not None:
                d.callback(msg)

        def _arrived(self, table: Table, msg: Msg) -> None:
            c = self.c
            if self.host and c.measuring:
                events = msg["events"]
                if events and events[0]["event"] != "deal_start":
                    c.moves += 1
                    c.moves_at[self.home] = c.moves_at.get(self.home, 0) + 1
            step = table.pending.get(self.updates)
            if step is None:
                return
            t = now()
            sent, mover, seen, counted = step
            counted = counted and len(c.mover_ms) < MAX_SAMPLES
            if mover is self and counted:
                c.mover_ms.append((t - sent) * 1000)
            seen += 1
            step[2] = seen
            if seen >= table.humans:
                del table.pending[self.updates]
                if counted:
                    c.last_seat_ms.append((t - sent) * 1000)

    return LoadClient


def _echo_client_class() -> Any:
    from twisted.protocols.basic import Int32StringReceiver

    request = msgpack.packb({"type": "ping", "id": 1})

    class EchoClient(Int32StringReceiver):
        """One request in flight: send, await the echo, send again."""

        def __init__(self, counters: Counters) -> None:
            self.c = counters
            self.running = True

        def connectionMade(self) -> None:
            _nodelay(self.transport)

        def go(self) -> None:
            _write(self.transport, request)

        def stringReceived(self, string: bytes) -> None:
            msgpack.unpackb(string)
            if self.c.measuring:
                self.c.echoes += 1
            if self.running:
                _write(self.transport, request)

    return EchoClient


def _fanout_client_class() -> Any:
    from twisted.internet import reactor as _reactor
    from twisted.internet.defer import Deferred
    from twisted.protocols.basic import Int32StringReceiver

    reactor: Any = _reactor
    pack, unpack = msgpack.packb, msgpack.unpackb
    hello = pack({"type": "hello"})

    class FanoutClient(Int32StringReceiver):
        """One member of a fan-out group. Request `seq` is sent by seat `seq` mod the
        group's size; the seat after it sends the next one as soon as its `update`
        arrives, so each group has one request in flight, as each scripted table has
        one move in flight."""

        def __init__(self, counters: Counters) -> None:
            self.c = counters
            self.running = True
            self.group: list[FanoutClient] = [self]
            self.seat = 0
            self.welcome: Deferred[Msg] = Deferred()

        def connectionMade(self) -> None:
            _nodelay(self.transport)

        def join(self) -> Deferred[Msg]:
            _write(self.transport, hello)
            self.welcome.addTimeout(REQUEST_TIMEOUT, reactor)
            return self.welcome

        def go(self, seq: int) -> None:
            _write(self.transport, pack({"type": "move", "move": {"kind": "draw"},
                                         "seq": seq}))

        def stringReceived(self, string: bytes) -> None:
            msg = unpack(string)
            seq = msg.get("seq")
            if seq is None:
                if not self.welcome.called:
                    self.welcome.callback(msg)
                return
            if self.seat == (seq + 1) % len(self.group):
                if self.c.measuring:
                    self.c.fanouts += 1
                if self.running:
                    self.go(seq + 1)

    return FanoutClient


class Load:
    """The async half of the bench: connections, tables, windows."""

    def __init__(self, args: argparse.Namespace) -> None:
        from twisted.internet import reactor

        self.reactor: Any = reactor
        self.args = args
        self.sources = _usable_sources()
        self.n_conn = 0
        self.client = _client_class()
        self.echo_client = _echo_client_class()
        self.fanout_client = _fanout_client_class()
        self.pg: Postgres | None = None
        self.redis: RedisServer | None = None

    def postgres(self) -> Postgres:
        """The PostgreSQL the run's stores are made on: `--postgres-url`, or one of our
        own, started on first use."""
        if self.pg is None:
            url = self.args.postgres_url
            self.pg = Postgres(url) if url else Postgres.start()
            _SERVICES.append(self.pg)
        return self.pg

    def redis_url(self) -> str:
        """An empty Redis database for a cluster round: `--redis-url` (emptied), or
        one of our own, started on first use."""
        if self.args.redis_url:
            flush_redis(self.args.redis_url)
            return str(self.args.redis_url)
        if self.redis is None:
            try:
                self.redis = RedisServer()
            except NotInstalled as e:
                raise NotInstalled(f"{e}, and no --redis-url was given") from None
            _SERVICES.append(self.redis)
        else:
            flush_redis(self.redis.url)
        return self.redis.url

    def _source(self) -> str:
        i = self.n_conn
        self.n_conn += 1
        return source_address(i // SESSIONS_PER_SOURCE) if self.sources else HOST

    async def connect(self, port: int, counters: Counters, proto: Any = None) -> Any:
        from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol

        endpoint = TCP4ClientEndpoint(self.reactor, HOST, port, timeout=REQUEST_TIMEOUT,
                                      bindAddress=(self._source(), 0))
        return await connectProtocol(  # type: ignore[no-untyped-call]
            endpoint, (proto or self.client)(counters))

    async def hello(self, port: int, counters: Counters, name: str) -> Any:
        client = await self.connect(port, counters)
        welcome = await client.request("hello", protocol=2, name=name, features=["rematch"])
        if welcome["type"] != "welcome":
            raise RuntimeError(f"hello refused: {welcome}")
        return client

    async def sleep(self, seconds: float) -> None:
        from twisted.internet.task import deferLater

        await deferLater(self.reactor, seconds, lambda: None)

    async def bounded(self, jobs: Sequence[Callable[[], Any]]) -> list[Any]:
        """Run coroutine factories, SETUP_PARALLEL at a time."""
        from twisted.internet.defer import (
            Deferred,
            DeferredSemaphore,
            ensureDeferred,
            gatherResults,
        )

        def launch(job: Callable[[], Any]) -> Deferred[Any]:
            return ensureDeferred(job())

        sem = DeferredSemaphore(SETUP_PARALLEL)
        ds = [sem.run(launch, job) for job in jobs]
        return list(await gatherResults(ds, consumeErrors=True))

    async def open_table(self, ports: list[int], c: Counters, n: int) -> list[Any]:
        """Table `n`, held by process `n` mod the processes (`ports`): tables spread
        evenly over them, and its 4 members too, from the holder on (with 2 processes,
        seats 0 and 1 on the holder, 2 and 3 on the other)."""
        a = self.args
        owner = n % len(ports)

        def home(seat: int) -> int:
            return (owner + seat * len(ports) // 4) % len(ports)

        host = await self.hello(ports[owner], c, f"T{n}s0")
        host.host, host.home = True, owner
        reply = await host.request("create_table", rules=a.rules, seats=4, options={
            "turn_seconds": 0, "match_end": MATCH_END[a.rules]})
        if reply["type"] != "table":
            raise RuntimeError(f"create_table refused: {reply}")
        table_id = reply["table"]["id"]
        clients = [host]
        if a.server_bots:
            for seat in (1, 2, 3):
                await host.request("add_bot", seat=seat, level=a.bot_level)
        else:
            for seat in (1, 2, 3):
                guest = await self.hello(ports[home(seat)], c, f"T{n}s{seat}")
                guest.home = home(seat)
                joined = await guest.request("join_table", table=table_id)
                if joined["type"] != "table":
                    raise RuntimeError(f"join_table refused: {joined}")
                await guest.request("ready", ready=True)
                clients.append(guest)
        table = Table(humans=len(clients))
        for client in clients:
            client.table = table
        return clients

    async def load_round(self, seed: int, store: str = "memory",
                         think_ms: float | None = None, warmup: float | None = None,
                         profiled: bool = True) -> dict[str, Any]:
        """One round of the real server; `think_ms` and `warmup` default to the
        command line's `--think` and `--warmup`; `--profile` applies only where
        `profiled` (a later round would overwrite the file)."""
        a = self.args
        with tempfile.TemporaryDirectory(prefix="pisyedili-bench-") as scratch:
            db = ":memory:" if store == "memory" else os.path.join(scratch, "bench.sqlite3")
            if store == "postgresql":
                db = self.postgres().store()
            child = Child(server_argv(seed, a.deal_pause, a.profile if profiled else None,
                                      db))
            result = await self._load([child], seed,
                                      a.think if think_ms is None else think_ms,
                                      a.warmup if warmup is None else warmup,
                                      {"postgres": self.pg.pids}
                                      if store == "postgresql" and self.pg else {})
            if store == "file":
                result["db_bytes"] = sum(os.path.getsize(os.path.join(scratch, f))
                                         for f in os.listdir(scratch))
        return {**result, "store": store}

    async def _load(self, children: list[Child], seed: int, think_ms: float,
                    warmup: float, others: dict[str, Callable[[], list[int]]]
                    ) -> dict[str, Any]:
        """A round against the server processes `children` (one, or a cluster's), with
        the CPU of the services `others` names (their pids, read at the window's
        start and end) measured alongside."""
        a = self.args
        c = Counters(think=think_ms / 1000, rng=random.Random(seed))
        ports = [child.port for child in children]
        conns: list[Any] = []
        try:
            tables = await self.bounded([functools.partial(self.open_table, ports, c, n)
                                         for n in range(a.tables)])
            conns = [x for clients in tables for x in clients]
            for clients in tables:
                clients[0].request("start")
            await self.sleep(warmup)
            window = await self.window(c, [child.pid for child in children], others)
            for child in children:
                if child.proc.poll() is not None:
                    raise RuntimeError(f"a server died: {child.stderr()}")
        finally:
            for child in children:
                child.stop()
            for x in conns:
                x.transport.abortConnection()
        moves = c.moves
        cpu = window["server_cpu_s"]
        return {**window, "connections": len(conns), "moves": moves,
                **({"moves_by_process": [c.moves_at.get(n, 0) for n in range(len(ports))],
                    "connections_by_process": [sum(x.home == n for x in conns)
                                               for n in range(len(ports))]}
                   if len(ports) > 1 else {}),
                "cpu_per_move_ms": round(cpu * 1000 / moves, 4)
                if cpu is not None and moves else None,
                "moves_per_s": moves / a.seconds, "errors": c.errors,
                "frames_per_move": c.frames / moves if moves else None,
                "bytes_per_move": c.bytes / moves if moves else None,
                "mover_p50_ms": percentile(c.mover_ms, 50),
                "mover_p99_ms": percentile(c.mover_ms, 99),
                "last_seat_p50_ms": percentile(c.last_seat_ms, 50),
                "last_seat_p99_ms": percentile(c.last_seat_ms, 99)}

    async def window(self, c: Counters, pid: int | list[int],
                     others: dict[str, Callable[[], list[int]]] | None = None
                     ) -> dict[str, Any]:
        """The measured window: the clients' counters, and the CPU of the server `pid`
        (a list: summed, and given each as `server_cpu_each_s`) and of each service in
        `others` (`NAME_cpu_s`: its processes' CPU, summed)."""
        pids = pid if isinstance(pid, list) else [pid]
        others = others or {}
        # The clients' set-up (a thousand connections) is most of this process's heap:
        # a full collection of it stops every client for 40-80 ms, which would read as
        # the server's latency. Frozen, the window's collections walk only its own
        # (`settle_heap` does the same for the server).
        gc.collect()
        gc.freeze()
        found = {name: pids_of() for name, pids_of in others.items()}
        c.reset()
        server0, client0 = [cpu_seconds(p) for p in pids], cpu_seconds()
        wait0 = [runqueue_seconds(p) for p in pids]
        other0 = {name: {p: cpu_seconds(p) for p in ps} for name, ps in found.items()}
        c.measuring = True
        await self.sleep(self.args.seconds)
        c.measuring = False
        server1, client1 = [cpu_seconds(p) for p in pids], cpu_seconds()
        gc.unfreeze()  # this round's clients are garbage soon: let them be collected
        wait1 = [runqueue_seconds(p) for p in pids]
        assert client0 is not None and client1 is not None
        waits = [None if x is None or y is None else y - x
                 for x, y in zip(wait0, wait1, strict=True)]
        each = [None if x is None or y is None else round(y - x, 3)
                for x, y in zip(server0, server1, strict=True)]
        spent: dict[str, Any] = {}
        for name, pids_of in others.items():
            before = other0[name]
            after = {p: cpu_seconds(p) for p in {*before, *pids_of()}}
            # a process started inside the window counts from 0, one ended in it is lost
            deltas = [y - (before.get(p) or 0.0) for p, y in after.items() if y is not None]
            spent[f"{name}_cpu_s"] = round(sum(deltas), 3) if deltas else None
        return {"server_cpu_s": None if None in each else round(sum(
                    x for x in each if x is not None), 3),
                **({"server_cpu_each_s": each} if len(pids) > 1 else {}),
                "server_waited_s": None if None in waits else round(sum(
                    x for x in waits if x is not None), 3),
                **spent, "client_cpu_s": round(client1 - client0, 3)}

    async def bar_round(self, serve: str, connections: int,
                        join: Callable[[int, Counters], Any],
                        begin: Callable[[list[Any]], list[Any]]) -> tuple[Counters, Any]:
        """One round against a bar (`--echo`, `--fanout-serve`) in a process of its own:
        `connections` joined by `join`, set going by `begin` (which returns the clients),
        then measured for a window after the warm-up. Counters and that window."""
        child = Child([sys.executable, "-m", "pisyedili.server.bench.load", serve, "0"])
        port = child.port
        c = Counters()
        try:
            clients = begin(await self.bounded(
                [functools.partial(join, port, c) for _ in range(connections)]))
            await self.sleep(self.args.warmup)
            window = await self.window(c, child.pid)
            for x in clients:
                x.running = False
        finally:
            child.stop()
        for x in clients:
            x.transport.abortConnection()
        return c, window

    async def echo_round(self, connections: int) -> dict[str, Any]:
        def begin(clients: list[Any]) -> list[Any]:
            for x in clients:
                x.go()
            return clients

        c, window = await self.bar_round(
            "--echo", connections,
            lambda port, c: self.connect(port, c, self.echo_client), begin)
        return {"echo_requests_per_s": c.echoes / self.args.seconds,
                "echo_server_cpu_s": window["server_cpu_s"],
                "echo_client_cpu_s": window["client_cpu_s"]}

    async def join_fanout(self, port: int, c: Counters) -> tuple[Any, Msg]:
        client = await self.connect(port, c, self.fanout_client)
        welcome: Msg = await client.join()
        return client, welcome

    async def fanout_round(self, connections: int) -> dict[str, Any]:
        """The fan-out bar at `connections`, in groups of `FANOUT_GROUP` as the server
        formed them (from the seats its `welcome` names)."""

        def begin(joined: list[tuple[Any, Msg]]) -> list[Any]:
            seats: dict[int, list[tuple[int, Any]]] = {}
            for client, welcome in joined:
                seats.setdefault(welcome["group"], []).append((welcome["seat"], client))
            groups = [[x for _, x in sorted(members, key=lambda m: m[0])]
                      for members in seats.values()]
            for group in groups:
                for seat, x in enumerate(group):
                    x.group, x.seat = group, seat
            for group in groups:
                group[0].go(0)
            return [x for x, _ in joined]

        c, window = await self.bar_round("--fanout-serve", connections, self.join_fanout,
                                         begin)
        return {"fanout_moves_per_s": c.fanouts / self.args.seconds,
                "fanout_server_cpu_s": window["server_cpu_s"],
                "fanout_client_cpu_s": window["client_cpu_s"]}

    async def cluster_round(self, seed: int, think_ms: float | None = None,
                            warmup: float | None = None) -> dict[str, Any]:
        """One round of `--cluster N` processes joined over Redis, each table held by
        one of them and its members spread over them (`open_table`); CPU summed over
        the processes and Redis (and PostgreSQL, our own, with `--cluster-db
        postgresql`)."""
        a = self.args
        url = self.redis_url()
        redis = self.redis
        others: dict[str, Callable[[], list[int]]] = {}
        if redis is not None and not a.redis_url:
            others["redis"] = lambda: [redis.pid]
        db = ":memory:"
        if a.cluster_db == "postgresql":
            pg = self.postgres()
            db = pg.store()
            others["postgres"] = pg.pids
        children: list[Child] = []
        try:
            for n in range(a.cluster):
                children.append(Child(server_argv(seed + 1000 * n, a.deal_pause, None, db,
                                                  cluster=url)))
        except BaseException:
            for child in children:
                child.stop()
            raise
        r = await self._load(children, seed, a.think if think_ms is None else think_ms,
                             a.warmup if warmup is None else warmup, others)
        spent = [r["server_cpu_s"], *(r.get(f"{name}_cpu_s") for name in others)]
        total = None if None in spent else sum(x for x in spent if x is not None)
        r["cpu_per_move_ms"] = round(total * 1000 / r["moves"], 4) \
            if total is not None and r["moves"] else None
        r["total_cpu_s"] = None if total is None else round(total, 3)
        return {**r, "processes": a.cluster, "store": a.cluster_db}

    async def rate_rounds(self) -> dict[str, Any]:
        """With `--cluster`: one process, then the cluster, each paced at `--paced-rate`
        moves/s (the clients' mean think time is tables / rate, since a table has one
        move in flight), after a warm-up of at least twice that think time."""
        a = self.args
        if not a.cluster or not a.paced_rate:
            return {"cluster_paced_rate": a.paced_rate if a.cluster else None,
                    "cluster_paced_think_ms": None,
                    **{f"{side}_{k}": None for side in ("rate_single", "cluster_paced")
                       for k in RATE_KEYS}}
        think = a.tables * 1000 / a.paced_rate
        warmup = max(a.warmup, 2 * think / 1000)
        single = await self.load_round(a.seed + a.rounds + 1, "memory", think, warmup,
                                       profiled=False)
        await self.sleep(0.5)
        cluster = await self.cluster_round(a.seed + a.rounds + 1, think, warmup)
        return {"cluster_paced_rate": a.paced_rate, "cluster_paced_think_ms": think,
                **{f"rate_single_{k}": single[k] for k in RATE_KEYS},
                **{f"cluster_paced_{k}": cluster[k] for k in RATE_KEYS}}

    async def paced_round(self) -> dict[str, Any]:
        """The real server with every scripted client thinking `--paced-think` ms on
        average before each move, after a warm-up of at least twice that: each client
        draws its delay from 0 to twice the mean, so by then every table has moved."""
        a = self.args
        think = a.paced_think
        if not think:
            return {"paced_think_ms": think, "paced_warmup": None, **dict.fromkeys(
                PACED_KEYS)}
        warmup = max(a.warmup, 2 * think / 1000)
        r = await self.load_round(a.seed + a.rounds,
                                  "file" if a.db == "file" else "memory", think, warmup,
                                  profiled=False)
        return {"paced_think_ms": think, "paced_warmup": warmup,
                **{f"paced_{k}": r[k] for k in ("moves_per_s", "mover_p50_ms",
                                                "mover_p99_ms", "last_seat_p50_ms",
                                                "last_seat_p99_ms", "server_cpu_s",
                                                "errors")}}

    async def probe_hello(self, port: int, c: Counters, tag: str,
                          held: list[Any]) -> dict[str, float | None]:
        """Milliseconds from `hello` sent to `welcome` read, on fresh connections, one at
        a time (loopback round trip and client included)."""
        times = []
        for i in range(HELLO_PROBES):
            client = await self.connect(port, c)
            t0 = time.perf_counter()
            await client.request("hello", protocol=2, name=f"H{tag}x{i}")
            times.append((time.perf_counter() - t0) * 1000)
            held.append(client)
        return {"hello_p50_ms": percentile(times, 50), "hello_max_ms": round(max(times), 3)}

    async def idle(self, seed: int) -> dict[str, Any]:
        """Server RSS per idle welcomed connection, and `hello` time with K sessions."""
        a = self.args
        levels = sorted({min(1000, a.idle), a.idle}) if a.idle > 0 else []
        if not levels:
            return {"baseline": None, "levels": []}
        child = Child(server_argv(seed, a.deal_pause, None))
        port = child.port
        c = Counters()
        held: list[Any] = []
        out: list[dict[str, Any]] = []
        try:
            held += await self.bounded([functools.partial(self.hello, port, c, f"W{i}")
                                        for i in range(20)])  # warm the code paths
            baseline = {"sessions": len(held),
                        **await self.probe_hello(port, c, "base", held)}
            await self.sleep(0.3)
            before = rss_kib(child.pid)
            base = len(held)
            for level in levels:
                todo = level - (len(held) - base)
                start = len(held)
                held += await self.bounded([functools.partial(self.hello, port, c, f"I{i}")
                                            for i in range(start, start + todo)])
                await self.sleep(0.5)
                after = rss_kib(child.pid)
                probe = await self.probe_hello(port, c, str(level), held)
                base += HELLO_PROBES  # probes are not part of the next level's count
                per = None if before is None or after is None \
                    else round((after - before) * 1024 / level)
                out.append({"connections": level, "rss_before_kib": before,
                            "rss_after_kib": after, "bytes_per_connection": per, **probe})
        finally:
            child.stop()
        for x in held:
            x.transport.abortConnection()
        return {"baseline": baseline, "levels": out}

    async def run(self) -> dict[str, Any]:
        a = self.args
        loads: list[dict[str, Any]] = []
        echoes: list[dict[str, Any]] = []
        stored: list[dict[str, Any]] = []  # with --db both: the same load on a file
        fanouts: list[dict[str, Any]] = []  # all None with --no-fanout
        clusters: list[dict[str, Any]] = []  # with --cluster N
        main_store = "file" if a.db in ("file", "postgresql") else "memory"
        for r in range(a.rounds):
            loads.append(await self.load_round(a.seed + r, main_store))
            await self.sleep(0.5)  # let the aborted connections go
            if a.cluster:
                clusters.append(await self.cluster_round(a.seed + r))
                await self.sleep(0.5)
            echoes.append(await self.echo_round(loads[-1]["connections"]))
            await self.sleep(0.5)
            if a.fanout:
                fanouts.append(await self.fanout_round(loads[-1]["connections"]))
                await self.sleep(0.5)
            else:
                fanouts.append(dict.fromkeys(FANOUT_ROUND_KEYS))
            if a.db in ("both", "postgresql"):
                stored.append(await self.load_round(
                    a.seed + r, "file" if a.db == "both" else "postgresql"))
                await self.sleep(0.5)
        rated = await self.rate_rounds()
        paced = await self.paced_round()
        if a.paced_think:
            await self.sleep(0.5)
        idle = await self.idle(a.seed)

        def med(rows: list[dict[str, Any]], key: str) -> float | None:
            values = [row[key] for row in rows if row[key] is not None]
            return round(statistics.median(values), 3) if values else None

        moves, echo_rate = med(loads, "moves_per_s"), med(echoes, "echo_requests_per_s")

        def ratio(tops: list[float | None], bottoms: list[float | None]) -> float | None:
            """The median of per-round ratios, rounds with a missing or zero side left
            out: the rounds' conditions differ, so each ratio is taken within one."""
            values = [x / y for x, y in zip(tops, bottoms, strict=True)
                      if x is not None and y]
            return round(statistics.median(values), 4) if values else None

        fan = [y["fanout_moves_per_s"] for y in fanouts]

        def bar_client(y: dict[str, Any]) -> float | None:
            """The fan-out bar's client CPU per request, ms: on two cores its bound."""
            cpu, rate = y["fanout_client_cpu_s"], y["fanout_moves_per_s"]
            return None if cpu is None or not rate else cpu * 1000 / (rate * a.seconds)

        bar_clients = [bar_client(y) for y in fanouts]
        known = [x for x in bar_clients if x is not None]
        return {
            "bench": "load", "rules": a.rules,
            "mode": "server_bots" if a.server_bots else "scripted",
            "tables": a.tables, "connections": loads[0]["connections"],
            "seconds": a.seconds, "warmup": a.warmup, "rounds": a.rounds,
            "deal_pause": a.deal_pause, "think_ms": a.think,
            "moves_per_s": moves, "echo_requests_per_s": echo_rate,
            "ratio_to_echo": ratio([x["moves_per_s"] for x in loads],
                                   [y["echo_requests_per_s"] for y in echoes]),
            "fanout_moves_per_s": med(fanouts, "fanout_moves_per_s"),
            "fanout_to_echo": ratio(fan, [y["echo_requests_per_s"] for y in echoes]),
            "ratio_to_fanout": ratio([x["moves_per_s"] for x in loads], fan),
            "fanout_bytes_per_frame": fanout_frame_bytes() if a.fanout else None,
            "fanout_client_cpu_per_request_ms":
                round(statistics.median(known), 4) if known else None,
            "fanout_client_to_server_cpu": ratio(
                bar_clients, [x["cpu_per_move_ms"] for x in loads]),
            **{k: med(loads, k) for k in ("mover_p50_ms", "mover_p99_ms",
                                          "last_seat_p50_ms", "last_seat_p99_ms",
                                          "frames_per_move", "bytes_per_move")},
            "errors": sum(x["errors"] for x in loads),
            "server_cpu_s": [x["server_cpu_s"] for x in loads],
            "client_cpu_s": [x["client_cpu_s"] for x in loads],
            "server_waited_s": [x["server_waited_s"] for x in loads],
            "echo_server_cpu_s": [y["echo_server_cpu_s"] for y in echoes],
            "echo_client_cpu_s": [y["echo_client_cpu_s"] for y in echoes],
            "fanout_server_cpu_s": [y["fanout_server_cpu_s"] for y in fanouts],
            "fanout_client_cpu_s": [y["fanout_client_cpu_s"] for y in fanouts],
            **paced,
            "cpu_per_move_ms": med(loads, "cpu_per_move_ms"),
            **self.cluster_figures(loads, clusters, med, ratio), **rated,
            "rounds_detail": [{**x, **y, **z}
                              for x, y, z in zip(loads, echoes, fanouts, strict=True)],
            "idle": idle,
            "store": a.db,
            **({"file_moves_per_s": med(stored, "moves_per_s"),
                "file_to_memory": round(statistics.median(
                    x["moves_per_s"] / y["moves_per_s"]
                    for x, y in zip(stored, loads, strict=True)), 4),
                "file_last_seat_p99_ms": med(stored, "last_seat_p99_ms"),
                "file_db_bytes": [x["db_bytes"] for x in stored],
                "file_rounds_detail": stored} if stored and a.db == "both" else {}),
            **({"postgres_moves_per_s": med(stored, "moves_per_s"),
                "file_moves_per_s": moves,
                "postgres_to_file": ratio([x["moves_per_s"] for x in stored],
                                          [x["moves_per_s"] for x in loads]),
                "postgres_cpu_per_move_ms": med(stored, "cpu_per_move_ms"),
                "file_cpu_per_move_ms": med(loads, "cpu_per_move_ms"),
                "postgres_cpu_ratio": ratio([x["cpu_per_move_ms"] for x in stored],
                                            [x["cpu_per_move_ms"] for x in loads]),
                "postgres_last_seat_p99_ms": med(stored, "last_seat_p99_ms"),
                "postgres_db_cpu_s": [x.get("postgres_cpu_s") for x in stored],
                "postgres_rounds_detail": stored} if a.db == "postgresql" else {}),
        }

    def cluster_figures(self, loads: list[dict[str, Any]], clusters: list[dict[str, Any]],
                        med: Callable[[list[dict[str, Any]], str], float | None],
                        ratio: Callable[[list[float | None], list[float | None]],
                                        float | None]) -> dict[str, Any]:
        """The `cluster_*` keys: medians over the cluster rounds, and the ratio of CPU
        per move (processes and Redis) to one process's, taken round by round (each
        cluster round follows a one-process round)."""
        a = self.args
        if not a.cluster:
            return {"cluster": None}
        return {
            "cluster": a.cluster, "cluster_db": a.cluster_db,
            "cluster_moves_per_s": med(clusters, "moves_per_s"),
            "cluster_cpu_per_move_ms": med(clusters, "cpu_per_move_ms"),
            "cluster_cpu_ratio": ratio([x["cpu_per_move_ms"] for x in clusters],
                                       [x["cpu_per_move_ms"] for x in loads]),
            "cluster_to_single": ratio([x["moves_per_s"] for x in clusters],
                                       [x["moves_per_s"] for x in loads]),
            **{f"cluster_{k}": med(clusters, k) for k in (
                "mover_p50_ms", "mover_p99_ms", "last_seat_p50_ms", "last_seat_p99_ms",
                "frames_per_move")},
            "cluster_errors": sum(x["errors"] for x in clusters),
            "cluster_server_cpu_s": [x.get("server_cpu_each_s", [x["server_cpu_s"]])
                                     for x in clusters],
            "cluster_redis_cpu_s": [x.get("redis_cpu_s") for x in clusters],
            "cluster_server_waited_s": [x["server_waited_s"] for x in clusters],
            "cluster_moves_by_process": [x["moves_by_process"] for x in clusters],
            "cluster_connections_by_process": clusters[0]["connections_by_process"],
            "cluster_rounds_detail": clusters,
        }


def percentile(values: list[float], p: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * p / 100))], 3)


def default_paced_think() -> float:
    """The server's own bot delay in ms: the pace of a table of bots, and so the pace a
    real table plays at."""
    from pisyedili.server.table.core import TableSettings

    return TableSettings().bot_delay * 1000


def parse(argv: Sequence[str], prog: str) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog=prog, description="The server in a subprocess under "
                                "N tables of load clients, against a bare echo server; "
                                "prints one JSON line.")
    p.add_argument("--tables", type=int, default=50, help="tables (default 50)")
    p.add_argument("--rules", choices=sorted(MATCH_END), default="classic")
    p.add_argument("--seconds", type=float, default=10.0,
                   help="measured seconds per round (default 10)")
    p.add_argument("--warmup", type=float, default=2.0, help="seconds before measuring")
    p.add_argument("--rounds", type=int, default=2,
                   help="load/echo rounds, alternated; medians reported (default 2)")
    p.add_argument("--server-bots", action="store_true",
                   help="1 load client and 3 server bots per table, not 4 clients")
    p.add_argument("--think", type=float, default=0.0, metavar="MS",
                   help="mean milliseconds a client waits before each move, drawn uniformly "
                   "from 0 to twice it (default 0: at "
                   "once, a closed loop whose latency is tables / throughput); with a "
                   "think time the load is paced and latency is the server's own")
    p.add_argument("--fanout", action=argparse.BooleanOptionalAction, default=True,
                   help="after each echo round, a round against a bare server with a "
                   "move's I/O shape (one frame in, an update to each of 4 group members "
                   "out): the I/O floor of a move (default on)")
    p.add_argument("--paced-think", type=float, default=default_paced_think(), metavar="MS",
                   help="after the rounds, one round whose clients think this mean time "
                   "before each move, after a warm-up of at least twice it (default: the "
                   "server's bot delay, %(default)g; 0: skip)")
    p.add_argument("--bot-level", choices=("easy", "medium", "hard"), default="easy")
    p.add_argument("--idle", type=int, default=1000,
                   help="idle welcomed connections for RSS and hello time (measured at "
                   "1000 and at this count; 0: skip)")
    p.add_argument("--deal-pause", type=float, default=0.0,
                   help="seconds between deals on the server (its built-in default is 4)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--db", choices=("memory", "file", "both", "postgresql"),
                   default="memory",
                   help="the server's store: memory (keeps nothing), file (a fresh SQLite "
                   "file: every table command journalled), both, alternated in each "
                   "round, with their ratio, or postgresql: file, then a fresh "
                   "PostgreSQL store in each round, with their ratio (default memory)")
    p.add_argument("--postgres-url", metavar="URL",
                   help="the PostgreSQL to make stores on (a schema each; its user may "
                   "create schemas); default: a throwaway cluster of the bench's own")
    p.add_argument("--cluster", type=int, default=0, metavar="N",
                   help="after each one-process round, a round of N server processes "
                   "joined over Redis, each table held by one and its members spread "
                   "over them; then both paced at --paced-rate (default 0: none)")
    p.add_argument("--cluster-db", choices=("memory", "postgresql"), default="memory",
                   help="the cluster's store: memory (each process keeps nothing, as the "
                   "one-process round) or one shared PostgreSQL store (default memory)")
    p.add_argument("--redis-url", metavar="URL",
                   help="the Redis for --cluster, redis://HOST:PORT/N: its database is "
                   "EMPTIED before each round; default: a redis-server of the bench's own")
    p.add_argument("--paced-rate", type=float, default=1000.0, metavar="MOVES_PER_S",
                   help="with --cluster: one process and the cluster paced at this many "
                   "moves/s (think time: tables / rate), for latency at a set load "
                   "(default 1000; 0: skip)")
    p.add_argument("--profile", metavar="FILE",
                   help="run the server under cProfile, writing stats to FILE")
    args = p.parse_args(list(argv))
    if args.tables < 1 or args.rounds < 1 or args.seconds <= 0 or args.warmup < 0 \
            or args.think < 0 or args.paced_think < 0 or args.cluster < 0 \
            or args.paced_rate < 0:
        p.error("--tables and --rounds must be at least 1, --seconds positive, "
                "--think, --paced-think, --paced-rate, --cluster and --warmup not "
                "negative")
    if not 0 <= args.idle <= 15000:
        p.error("--idle must be 0..15000")
    return args


def run_on_reactor(run: Callable[[], Coroutine[Any, Any, dict[str, Any]]], budget: float,
                   prog: str) -> dict[str, Any] | None:
    """Run a bench's `run` on the reactor, bounded by a watchdog of `budget` seconds, and
    end every child process it started, however it ends; its figures, or None once the
    failure is said on stderr."""
    from twisted.internet import reactor as _reactor
    from twisted.internet.defer import ensureDeferred
    from twisted.internet.error import ReactorNotRunning

    reactor: Any = _reactor
    outcome: dict[str, Any] = {}

    def done(result: Any) -> None:
        outcome.setdefault("result", result)
        try:
            reactor.stop()
        except ReactorNotRunning:  # the watchdog stopped it first
            pass

    watchdog = reactor.callLater(budget, lambda: done(f"still running after {budget:.0f} s"))
    reactor.callWhenRunning(lambda: ensureDeferred(run()).addBoth(done))
    try:
        reactor.run()
    finally:
        for child in list(_LIVE):
            child.stop()
        while _SERVICES:
            _SERVICES.pop().stop()
    if watchdog.active():
        watchdog.cancel()
    result = outcome.get("result")
    if not isinstance(result, dict):
        print(f"{prog}: failed: {result or 'interrupted'}", file=sys.stderr)
        return None
    return result


def main(argv: Sequence[str] | None = None, prog: str = "pisyedili-bench load") -> int:
    args = parse(sys.argv[1:] if argv is None else argv, prog)
    raise_fd_limit()
    # Every wait is bounded on its own; this bounds their sum, whatever goes wrong.
    paced = args.seconds + max(args.warmup, 2 * args.paced_think / 1000) + 240 \
        if args.paced_think else 0
    rated = 2 * (args.seconds + max(args.warmup, 2 * args.tables / args.paced_rate) + 240) \
        if args.cluster and args.paced_rate else 0
    budget = args.rounds * ((3 + bool(args.cluster)) * (args.seconds + args.warmup) + 360
                            + 240 * bool(args.cluster)) + paced + rated \
        + args.idle / 20 + 300
    result = run_on_reactor(Load(args).run, budget, prog)
    if result is None:
        return 1
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        serve(sys.argv[2:])
    elif sys.argv[1:2] == ["--echo"]:
        echo(int(sys.argv[2]))
    elif sys.argv[1:2] == ["--fanout-serve"]:
        fanout(int(sys.argv[2]))
    else:
        raise SystemExit(main())
