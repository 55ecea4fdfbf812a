"""`pisyedili-bench nemesis`: a cluster played on while a nemesis breaks it, then checked.

Three server processes (`--processes`) share one PostgreSQL journal and one Redis,
each reaching both through a link of its own that can be cut (`faults.CutProxy`), with
HAProxy in front where it is installed. Scripted players play four-seat tables at a
person's pace: each table's host and one more on the table's own process, the others
on other processes or through HAProxy, and a spectator at each table. Meanwhile the
nemesis acts out a seeded schedule of faults (`nemesis_plan`), one after another: kill
-9, SIGTERM with a restart, SIGSTOP past the lease, a rolling restart, Redis restarted
with and without its data, PostgreSQL restarted, a process cut off from Redis or from
PostgreSQL. A player whose connection drops (or goes silent: a ping unanswered) comes
back as a client does, with a backoff, through the next address, with its token, and
sends nothing again that it sent before the drop.

Every request, reply, drop, return and fault goes into `history.jsonl` in the run's
folder (`--out`), with the processes' logs; at the end the checker (`nemesis_check`)
reads it with each table's stored journal (kept there too, `journal.json`) and prints
its verdict (`summary.json`, and each violation with its history lines in
`violations.jsonl`). The exit status is 0
only when it found nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

import msgpack
from twisted.protocols.basic import Int32StringReceiver
from twisted.python.failure import Failure

from pisyedili.protocol.limits import MAX_SERVER_FRAME
from pisyedili.server.bench.faults import (
    HOST,
    CutProxy,
    ServerProcess,
    accepting,
    listen_proxy,
    server_command,
)
from pisyedili.server.bench.nemesis_check import Verdict, check, percentile
from pisyedili.server.bench.nemesis_plan import (
    CUT_PG,
    CUT_REDIS,
    KILL,
    KINDS,
    PAUSE,
    PG_RESTART,
    REDIS_KEEP,
    REDIS_WIPE,
    ROLLING,
    TERM,
    Fault,
    schedule,
)
from pisyedili.server.bench.services import (
    NotInstalled,
    Postgres,
    RedisServer,
    free_port,
)

Msg = dict[str, Any]

SEATS = 4
TURN_SECONDS = 30
"""Each decision's time, as on a real table: a seat whose player cannot answer (its
session stuck somewhere) is played by the server, and its table goes on."""
LEASE = 3.0
"""The processes' `--cluster-lease` unless told: short, so that a pause past it and a
process taken for dead fit many times into a run."""
THINK = (0.4, 1.6)
"""Seconds a player thinks before a move, uniformly: a person's pace."""
PING_EVERY = 1.0
SILENT_LIMIT = 3.0
"""Seconds without a frame after which a player takes its connection for dead (a
paused process keeps its sockets open), as a client's heartbeat would."""
BACKOFF = (0.2, 2.0)
"""A reconnecting player's first wait and its longest (doubling between)."""
CONNECT_TIMEOUT = 5.0
RETRY_LIMIT = 5.0
"""The longest a player waits when a resume is refused for now (`retry_after`)."""
QUIET = 5.0
"""Seconds the journal must be unchanged at the end before it is read for the check:
rows a process kept while its store was out of reach are written on its next try,
which comes every second (`journal.HELD_CATCH_UP_SECONDS`)."""
SETTLE_LIMIT = 90.0
"""Seconds at the end for every player to be back and every reply in."""
TERM_LIMIT = 30.0
"""Seconds a process may take to stop on SIGTERM before it is killed (and logged)."""
BACK_TARGET = 5.0
"""The target for the p99 of a player's time back at its table after a drop."""


class History:
    """The run's JSON lines, each stamped with seconds since the run's start; written
    from the reactor and from the nemesis's thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: IO[str] = path.open("w", encoding="utf-8", buffering=1)
        self._lock = threading.Lock()
        self.started = time.monotonic()

    def now(self) -> float:
        return round(time.monotonic() - self.started, 4)

    def add(self, ev: str, **fields: Any) -> None:
        line = json.dumps({"t": self.now(), "ev": ev, **fields}, separators=(",", ":"))
        with self._lock:
            self._file.write(line + "\n")

    def close(self) -> None:
        with self._lock:
            self._file.close()


def read_history(path: Path) -> list[Msg]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def read_journal(path: Path) -> dict[int, list[tuple[int, float, list[Any]]]]:
    """The tables' journals a run kept in its folder (`journal.json`)."""
    kept = json.loads(path.read_text(encoding="utf-8"))
    return {int(table): [(int(seq), float(at), record) for seq, at, record in rows]
            for table, rows in kept.items()}


class Player:
    """One scripted member of a table, seated or watching, on the reactor."""

    def __init__(self, run: Run, who: str, ports: list[int], rng: random.Random) -> None:
        self.run, self.who, self.ports, self.rng = run, who, ports, rng
        self.token: str | None = None
        self.member: int | None = None
        self.table: int | None = None
        self.proto: Conn | None = None
        self.rid = 0
        self.waiting: dict[int, Callable[[Msg], None]] = {}
        self.at = 0  # index into ports
        self.backoff = BACKOFF[0]
        self.away = False
        self.base = who
        self.generation = 0
        self.renewing = False
        """Its session lost, it is starting a new one, to join its table again."""
        self.think: Any = None
        self.last_frame = 0.0
        self.moving = True
        self.retry_after: float | None = None
        self.ready: Any = None  # a Deferred fired with each reply that setup awaits

    # -- the connection ------------------------------------------------------------

    def connect(self) -> None:
        from twisted.internet.protocol import ClientFactory

        player = self

        class Factory(ClientFactory):
            def buildProtocol(self, addr: Any) -> Conn:
                return Conn(player)

            def clientConnectionFailed(self, connector: Any, reason: Any) -> None:
                player.gone(f"connect failed: {reason.getErrorMessage()}")

        port = self.ports[self.at % len(self.ports)]
        self.run.reactor.connectTCP(HOST, port, Factory(), timeout=CONNECT_TIMEOUT)

    def connected(self, proto: Conn) -> None:
        self.proto = proto
        self.last_frame = time.monotonic()
        fields: Msg = {"protocol": 2, "name": self.who}
        if self.token is not None:
            fields["token"] = self.token
        self.request("hello", fields, self.welcomed)

    def gone(self, why: str) -> None:
        """The connection is lost (or never made): record the drop once, come back."""
        self.proto = None
        if self.think is not None and self.think.active():
            self.think.cancel()
        self.think = None
        self.waiting.clear()
        if self.run.finished:
            return
        if self.token is None:
            if self.renewing:
                self.run.reactor.callLater(BACKOFF[1], self.connect)
            elif self.ready is not None:
                d, self.ready = self.ready, None
                d.errback(ConnectionError(why))
            return
        if not self.away:  # a fresh drop: back to its own entry first, as a client is
            self.away = True
            self.backoff = BACKOFF[0]
            self.at = 0
            self.run.history.add("drop", who=self.who, why=why)
        else:
            self.at += 1
        delay = self.backoff * self.rng.uniform(0.5, 1.0)
        if self.retry_after is not None:
            delay, self.retry_after = self.retry_after, None
        self.backoff = min(BACKOFF[1], self.backoff * 2)
        self.run.reactor.callLater(delay, self.connect)

    def frame(self, msg: Msg) -> None:
        self.last_frame = time.monotonic()
        kind = msg.get("type")
        rid = msg.get("id")
        if rid is not None and rid in self.waiting and kind not in ("ping",):
            self.waiting.pop(rid)(msg)
            return
        if kind == "ping":
            self.send("pong", {"id": rid} if rid is not None else {})
        elif kind == "table":
            self.snapshot(msg)
        elif kind == "update":
            if "moves" in msg:
                self.decide(msg["moves"])
            elif any(e.get("event") == "match_end" for e in msg.get("events", ())):
                self.request("rematch", {"agree": True}, lambda m: None)
        elif kind == "replaced":
            self.run.history.add("replaced", who=self.who)

    def send(self, type_: str, fields: Msg) -> None:
        if self.proto is not None:
            self.proto.write({"type": type_, **fields})

    def request(self, type_: str, fields: Msg, answer: Callable[[Msg], None]) -> int:
        self.rid += 1
        self.waiting[self.rid] = answer
        self.send(type_, {**fields, "id": self.rid})
        return self.rid

    def heartbeat(self) -> None:
        """Ping; a connection silent for `SILENT_LIMIT` is given up, as a client does."""
        if self.proto is None:
            return
        if time.monotonic() - self.last_frame > SILENT_LIMIT:
            self.proto.abort()
            return
        self.request("ping", {}, lambda m: None)

    # -- the session ---------------------------------------------------------------

    def welcomed(self, msg: Msg) -> None:
        if msg.get("type") != "welcome":
            if self.token is not None and msg.get("code") == "cluster_unavailable":
                # Nothing changed: try again when told, as a client does.
                self.run.history.add("retry", who=self.who, after=msg.get("retry_after"))
                self.retry_after = min(RETRY_LIMIT, float(msg.get("retry_after") or 1.0))
                if self.proto is not None:
                    self.proto.abort()
            elif self.token is not None:
                self.lose(f"resume refused: {msg}")
            elif self.ready is not None:
                d, self.ready = self.ready, None
                d.errback(RuntimeError(f"hello refused: {msg}"))
            return
        self.run.history.add("welcome", who=self.who, player=msg["player"],
                             resumed=bool(msg.get("resumed")))
        if self.token is None:
            self.token, self.member = msg["token"], msg["player"]
            if self.ready is not None:
                d, self.ready = self.ready, None
                d.callback(msg)
            elif self.renewing:
                self.rejoin()
            return
        if not msg.get("resumed") or msg.get("player") != self.member:
            self.lose(f"welcomed as a new session: {msg}")
        elif msg.get("table") is None:
            # The protocol says such a session is at no table; the checker holds that
            # against the server, and the player waits for its table all the same.
            self.run.history.add("no_table", who=self.who, table=self.table)
        elif msg.get("table") != self.table:
            self.lose(f"resumed at table {msg.get('table')}, not {self.table}")

    def lose(self, why: str) -> None:
        """Its session is gone: say so, then come back as a person would, in a new
        session (a name of its own in the history) that joins the table again."""
        self.run.history.add("lost", who=self.who, why=why)
        self.generation += 1
        self.who = f"{self.base}r{self.generation}"
        self.token = self.member = None
        self.away, self.renewing = False, True
        proto, self.proto = self.proto, None
        if proto is not None:
            proto.abort()  # (no longer this player's: no drop of the new session)
        self.run.reactor.callLater(self.rng.uniform(*BACKOFF), self.connect)

    def rejoin(self) -> None:
        def joined(msg: Msg) -> None:
            if msg.get("type") == "table":
                self.run.history.add("rejoined", who=self.who, table=self.table,
                                     seat=msg.get("you", {}).get("seat"))
                self.snapshot(msg)
            else:
                self.run.history.add("rejoin_refused", who=self.who, code=msg.get("code"))

        self.renewing = False
        self.request("join_table", {"table": self.table}, joined)

    def snapshot(self, msg: Msg) -> None:
        table = msg.get("table", {}).get("id")
        if table != self.table:
            return
        self.backoff = BACKOFF[0]
        if self.away:
            self.away = False
            self.run.history.add("back", who=self.who, table=table)
        if "moves" in msg:
            self.decide(msg["moves"])

    def decide(self, moves: list[Msg]) -> None:
        if self.think is not None and self.think.active():
            self.think.cancel()
        if not self.moving or not moves:
            return
        plays = [m for m in moves if m.get("kind") not in ("draw", "pass")]
        move = self.rng.choice(plays or moves)
        self.think = self.run.reactor.callLater(self.rng.uniform(*THINK), self.play, move)

    def play(self, move: Msg) -> None:
        self.think = None
        if self.proto is None or not self.moving:
            return
        history = self.run.history
        rid = self.rid + 1
        history.add("send", who=self.who, rid=rid, table=self.table, member=self.member,
                    move=move)

        def answered(msg: Msg) -> None:
            if msg.get("type") == "ok":
                history.add("ack", who=self.who, rid=rid)
                return
            history.add("refused", who=self.who, rid=rid, code=msg.get("code"))
            if msg.get("code") == "cluster_unavailable" and self.think is None:
                # Nothing changed: the same move again when told, as a client would
                # (unless the table moves on meanwhile: `decide` cancels it).
                wait = min(RETRY_LIMIT, float(msg.get("retry_after") or 1.0))
                self.think = self.run.reactor.callLater(wait, self.play, move)

        self.request("move", {"move": move}, answered)

    # -- setup, before any fault ---------------------------------------------------

    async def ask(self, type_: str, **fields: Any) -> Msg:
        from twisted.internet.defer import Deferred

        d: Deferred[Msg] = Deferred()
        self.request(type_, fields, d.callback)
        d.addTimeout(60, self.run.reactor)
        reply: Msg = await d
        if reply.get("type") == "error":
            raise RuntimeError(f"{self.who}: {type_} refused: {reply}")
        return reply

    async def hello(self) -> None:
        from twisted.internet.defer import Deferred

        d: Deferred[Msg] = Deferred()
        self.ready = d
        self.connect()
        d.addTimeout(60, self.run.reactor)
        await d


class Conn(Int32StringReceiver):
    """The wire of one player's connection: msgpack frames, 4-byte length first."""

    MAX_LENGTH = MAX_SERVER_FRAME

    def __init__(self, player: Player) -> None:
        self.player = player

    def connectionMade(self) -> None:
        self.wire().setTcpNoDelay(True)
        self.player.connected(self)

    def wire(self) -> Any:
        """The TCP transport (typed by Twisted as a bare `ITransport`)."""
        return self.transport

    def connectionLost(self, reason: Failure | None = None) -> None:
        if self.player.proto is self:
            self.player.gone(reason.getErrorMessage() if reason else "closed")

    def stringReceived(self, string: bytes) -> None:
        self.player.frame(msgpack.unpackb(string))

    def write(self, msg: Msg) -> None:
        body = msgpack.packb(msg)
        self.wire().write(len(body).to_bytes(4, "big") + body)

    def abort(self) -> None:
        self.wire().abortConnection()

    def close(self) -> None:
        self.wire().loseConnection()


class Run:
    """The cluster, its links, its players and the nemesis, for one run."""

    def __init__(self, args: argparse.Namespace, out: Path) -> None:
        from twisted.internet import reactor

        self.reactor: Any = reactor
        self.args, self.out = args, out
        self.history = History(out / "history.jsonl")
        self.rng = random.Random(args.seed)
        self.processes: list[ServerProcess] = []
        self.redis_links: list[CutProxy] = []
        self.pg_links: list[CutProxy] = []
        self.players: list[Player] = []
        self.redis: RedisServer | None = None
        self.pg: Postgres | None = None
        self.haproxy: subprocess.Popen[bytes] | None = None
        self.front = 0
        self.db = ""
        self.stop_faults = threading.Event()
        self.injected = 0
        self.finished = False
        """Set once the history is complete: connections closed after it are no drops."""

    # -- the cluster ---------------------------------------------------------------

    def start_services(self) -> None:
        """Redis, PostgreSQL and the processes (blocking: in a thread)."""
        self.redis = RedisServer(keep=True)
        self.pg = Postgres.start()
        self.db = self.pg.store()

    def build(self) -> None:
        """The links and the processes' command lines (on the reactor)."""
        assert self.redis is not None and self.pg is not None
        pg_port = int(self.pg.url.rsplit(":", 1)[1].split("/", 1)[0])
        haproxy = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin")
        self.front = free_port() if haproxy and not self.args.no_haproxy else 0
        for n in range(self.args.processes):
            redis_link = listen_proxy(self.reactor, HOST, self.redis.port)
            pg_link = listen_proxy(self.reactor, HOST, pg_port)
            self.redis_links.append(redis_link)
            self.pg_links.append(pg_link)
            port, proxied, health = free_port(), free_port(), free_port()
            db = self.db.replace(f":{pg_port}/", f":{pg_link.listening_port}/")
            huge = "1000000"
            argv = [*server_command(), "--listen", f"tcp:{port}:interface={HOST}",
                    "--no-announce", "--seed", str(self.args.seed * 100 + n),
                    "--bot-delay", "0.5",
                    "--max-connections", "30000", "--max-per-address", "30000",
                    "--max-tables-per-address", huge, "--max-tables-total", huge,
                    "--rate", huge, "--burst", huge, "--db", db,
                    "--cluster", f"redis://{HOST}:{redis_link.listening_port}/0",
                    "--cluster-lease", str(self.args.lease)]
            if self.front:
                argv += ["--listen", f"haproxy:tcp:{proxied}:interface={HOST}",
                         "--health", str(health), "--drain-seconds", "1"]
            server = ServerProcess(n, argv, port, self.out / f"process-{n}.log")
            server.proxied, server.health = proxied, health
            self.processes.append(server)
        if self.front:
            assert haproxy is not None
            self.start_haproxy(haproxy)

    def start_haproxy(self, binary: str) -> None:
        servers = "".join(
            f"    server p{p.index} {HOST}:{p.proxied} send-proxy-v2 "
            f"check port {p.health}\n" for p in self.processes)
        config = (
            "defaults\n    mode tcp\n    timeout connect 5s\n    timeout client 120s\n"
            "    timeout server 120s\n    option httpchk GET /ready\n"
            "    http-check expect status 200\n    timeout check 2s\n"
            "    default-server inter 1s fall 2 rise 2\n    option redispatch\n"
            "    retries 2\n"
            f"frontend players\n    bind {HOST}:{self.front}\n"
            "    default_backend processes\n"
            f"backend processes\n    balance roundrobin\n{servers}")
        path = self.out / "haproxy.cfg"
        path.write_text(config, encoding="utf-8")
        log = (self.out / "haproxy.log").open("ab")
        self.haproxy = subprocess.Popen([binary, "-db", "-f", str(path)],
                                        stdin=subprocess.DEVNULL, stdout=log,
                                        stderr=subprocess.STDOUT)

    def addresses(self, home: int, via_front: bool) -> list[int]:
        """The ports a player connects to: its own entry (HAProxy's, or its process's)
        first, then the other processes."""
        own = self.front if via_front and self.front else self.processes[home].port
        return [own, *(p.port for p in self.processes if p.index != home)]

    async def seat_players(self) -> None:
        """Tables of four, started, with a spectator each (before any fault)."""
        n_proc = len(self.processes)
        for t in range(max(1, self.args.players // SEATS)):
            home = t % n_proc
            where = [(home, False), (home, False), ((home + 1) % n_proc, False),
                     ((home + 2) % n_proc, bool(self.front))]
            members = [Player(self, f"t{t}s{i}", self.addresses(h, front),
                              random.Random(self.rng.random())) for i, (h, front)
                       in enumerate(where)]
            watcher = Player(self, f"t{t}w", self.addresses((home + 1) % n_proc,
                                                             bool(self.front)),
                             random.Random(self.rng.random()))
            for p in [*members, watcher]:
                await p.hello()
            made = await members[0].ask("create_table", rules="classic", seats=SEATS,
                                        options={"turn_seconds": TURN_SECONDS,
                                                 "match_end": "deals:100"})
            table = made["table"]["id"]
            self.history.add("table_made", who=members[0].who, table=table)
            for p in [*members, watcher]:
                p.table = table
            for p in members[1:]:
                await p.ask("join_table", table=table)
                await p.ask("ready", ready=True)
            await watcher.ask("join_table", table=table, spectate=True)
            await members[0].ask("start")
            self.players += [*members, watcher]
        print(f"nemesis: {len(self.players)} players at "
              f"{len(self.players) // (SEATS + 1)} tables", file=sys.stderr, flush=True)

    # -- the nemesis (in a thread) -------------------------------------------------

    def on_reactor(self, f: Callable[[], Any]) -> Any:
        from twisted.internet.threads import blockingCallFromThread

        return blockingCallFromThread(self.reactor, f)

    def nemesis(self, until: float) -> None:
        plan = schedule(self.args.seed, len(self.processes), self.args.lease,
                        self.args.kinds)
        for fault in plan:
            if time.monotonic() >= until or self.stop_faults.is_set():
                return
            self.history.add("fault", n=fault.n, kind=fault.kind, target=fault.target,
                             hold=fault.hold, phase="start")
            self.act(fault)
            self.history.add("fault", n=fault.n, kind=fault.kind, target=fault.target,
                             phase="end")
            self.injected += 1
            self.stop_faults.wait(fault.calm)

    def act(self, fault: Fault) -> None:
        kind, hold = fault.kind, fault.hold
        target = self.processes[fault.target] if fault.target is not None else None
        if kind == KILL and target is not None:
            target.signal(signal.SIGKILL)
            target.wait(TERM_LIMIT)
            target.down()
            time.sleep(hold)
            target.start()
        elif kind == TERM and target is not None:
            self.restart(target, hold)
        elif kind == PAUSE and target is not None:
            target.signal(signal.SIGSTOP)
            time.sleep(hold)
            target.signal(signal.SIGCONT)
        elif kind == ROLLING:
            for process in self.processes:
                self.restart(process, 0.0)
        elif kind in (REDIS_KEEP, REDIS_WIPE):
            assert self.redis is not None
            self.redis.kill()
            if kind == REDIS_WIPE:
                for path in Path(self.redis.folder).iterdir():
                    if path.is_dir():
                        shutil.rmtree(path, ignore_errors=True)
                    else:
                        path.unlink(missing_ok=True)
            time.sleep(hold)
            self.redis.start()
        elif kind == PG_RESTART:
            assert self.pg is not None
            self.pg.halt()
            time.sleep(hold)
            self.pg.resume()
        elif kind in (CUT_REDIS, CUT_PG) and fault.target is not None:
            link = (self.redis_links if kind == CUT_REDIS else self.pg_links)[fault.target]
            self.on_reactor(link.sever)
            time.sleep(hold)
            self.on_reactor(link.heal)

    def restart(self, process: ServerProcess, hold: float) -> None:
        process.signal(signal.SIGTERM)
        if not process.wait(TERM_LIMIT):
            self.history.add("term_slow", process=process.index)
            process.signal(signal.SIGKILL)
            process.wait(TERM_LIMIT)
        process.down()
        time.sleep(hold)
        process.start()

    # -- the run -------------------------------------------------------------------

    async def run(self) -> dict[str, Any]:
        from twisted.internet.task import LoopingCall
        from twisted.internet.threads import deferToThread

        a = self.args
        await deferToThread(self.start_services)
        self.build()
        await deferToThread(self.start_processes)
        if self.front:
            await deferToThread(self._front_ready)
        await self.seat_players()
        beat = LoopingCall(self.heartbeat)
        beat.start(PING_EVERY, now=False)
        progress = LoopingCall(self.progress)
        progress.start(10.0, now=False)
        started = time.monotonic()
        await deferToThread(self.nemesis, started + a.duration)
        # The end: no more moves; everyone back, every reply in.
        for p in self.players:
            p.moving = False
        await self.settle()
        progress.stop()
        beat.stop()
        self.history.add("end")
        self.finished = True
        for p in self.players:
            if p.proto is not None:
                p.proto.close()
        stored = await self.quiet_journal()
        # Stopped before their logs are read, so that the check reads all of them, as
        # it would again from the run's folder.
        await deferToThread(self.stop_processes)
        return self.verdict(stored, time.monotonic() - started)

    def stop_processes(self) -> None:
        for process in self.processes:
            process.down()

    def start_processes(self) -> None:
        for process in self.processes:
            process.start()

    def _front_ready(self) -> None:
        deadline = time.monotonic() + 60
        while not accepting(self.front):  # bounded by the deadline
            if time.monotonic() > deadline:
                raise RuntimeError("haproxy did not listen")
            time.sleep(0.1)
        time.sleep(2.5)  # its checks take two intervals to mark the processes up

    async def settle(self) -> None:
        from twisted.internet.task import deferLater

        deadline = time.monotonic() + SETTLE_LIMIT
        while time.monotonic() < deadline:
            if all(not p.away and not p.renewing and p.proto is not None and not p.waiting
                   for p in self.players):
                return
            await deferLater(self.reactor, 0.2, lambda: None)

    def heartbeat(self) -> None:
        for player in self.players:
            player.heartbeat()

    async def quiet_journal(self) -> dict[int, list[tuple[int, float, list[Any]]]]:
        """Each table's journal, once it has been unchanged for `QUIET` seconds (or after
        `SETTLE_LIMIT`: then as it is)."""
        from twisted.internet.task import deferLater
        from twisted.internet.threads import deferToThread

        deadline = time.monotonic() + SETTLE_LIMIT
        stored = await deferToThread(self.stored)
        since = time.monotonic()
        while time.monotonic() < deadline and time.monotonic() - since < QUIET:
            await deferLater(self.reactor, 1.0, lambda: None)
            now = await deferToThread(self.stored)
            if now != stored:
                stored, since = now, time.monotonic()
        return stored

    def progress(self) -> None:
        lines = read_history(self.history.path)
        acks = sum(e["ev"] == "ack" for e in lines)
        drops = sum(e["ev"] == "drop" for e in lines)
        backs = sum(e["ev"] == "back" for e in lines)
        away = sum(p.away for p in self.players)
        print(f"nemesis t={self.history.now():.0f}s faults={self.injected} acked={acks} "
              f"drops={drops} back={backs} away={away}", file=sys.stderr, flush=True)

    def stored(self) -> dict[int, list[tuple[int, float, list[Any]]]]:
        """Every open table's journal, read straight from PostgreSQL."""
        from pisyedili.server.store import open_store

        store = open_store(self.db)
        try:
            rows = store.read_journal().commands
        finally:
            store.close()
        tables: dict[int, list[tuple[int, float, list[Any]]]] = {}
        for table, seq, at, command in rows:
            tables.setdefault(int(table), []).append(
                (int(seq), float(at), msgpack.unpackb(bytes(command))))
        return tables

    def logs(self) -> dict[str, str]:
        return {p.log_path.name: p.log_path.read_text(encoding="utf-8", errors="replace")
                for p in self.processes if p.log_path.exists()}

    def verdict(self, stored: dict[int, list[tuple[int, float, list[Any]]]],
                seconds: float) -> dict[str, Any]:
        self.history.close()
        history = read_history(self.history.path)
        verdict = check(history, stored, self.logs())
        summary = summarize(verdict, self.args, seconds, bool(self.front))
        with (self.out / "violations.jsonl").open("w", encoding="utf-8") as f:
            for v in verdict.violations:
                f.write(json.dumps({"kind": v.kind, "t": v.t, "detail": v.detail,
                                    "lines": v.lines}) + "\n")
        with (self.out / "journal.json").open("w", encoding="utf-8") as f:
            json.dump({str(table): rows for table, rows in stored.items()}, f, default=repr)
        (self.out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n",
                                               encoding="utf-8")
        return summary

    def stop(self) -> None:
        self.stop_faults.set()
        for process in self.processes:
            process.down()
        if self.haproxy is not None:
            with contextlib.suppress(OSError):
                self.haproxy.terminate()
                self.haproxy.wait(10)
        if self.pg is not None:
            self.pg.stop()
        if self.redis is not None:
            self.redis.stop()


def summarize(verdict: Verdict, args: argparse.Namespace, seconds: float,
              haproxy: bool) -> dict[str, Any]:
    p50, p99 = percentile(verdict.back_s, 50), percentile(verdict.back_s, 99)
    return {
        "bench": "nemesis", "seed": args.seed, "duration_s": args.duration,
        "seconds": round(seconds, 1), "processes": args.processes,
        "players": args.players, "haproxy": haproxy, "lease_s": args.lease,
        "faults": sum(verdict.faults.values()),
        "faults_survived": sum(verdict.survived.values()),
        "faults_by_kind": verdict.faults, "survived_by_kind": verdict.survived,
        "moves_acked": verdict.acked,
        "moves_lost": sum(v.kind == "lost_ack" for v in verdict.violations),
        "sessions_lost": verdict.sessions_lost, "returns": len(verdict.back_s),
        "back_p50_s": None if p50 is None else round(p50, 3),
        "back_p99_s": None if p99 is None else round(p99, 3),
        "back_target_met": p99 is None or p99 <= BACK_TARGET,
        "violations": verdict.counts(), "verdict": "pass" if verdict.ok else "fail",
    }


def print_summary(s: dict[str, Any], out: Path) -> None:
    kinds = ", ".join(f"{k} {s['survived_by_kind'].get(k, 0)}/{n}"
                      for k, n in sorted(s["faults_by_kind"].items()))
    print(f"faults injected {s['faults']}, survived {s['faults_survived']} ({kinds})\n"
          f"moves acknowledged {s['moves_acked']}, lost {s['moves_lost']}; "
          f"sessions lost {s['sessions_lost']}\n"
          f"back at the table after a drop ({s['returns']}): p50 {s['back_p50_s']} s, "
          f"p99 {s['back_p99_s']} s (target {BACK_TARGET:g} s)\n"
          f"violations {s['violations'] or 'none'}\n"
          f"verdict: {s['verdict']} (history and logs in {out})", file=sys.stderr)


def parse(argv: Sequence[str], prog: str) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    p.add_argument("--duration", type=float, default=120.0, metavar="S",
                   help="seconds of faults (default 120); the end's settling comes after")
    p.add_argument("--seed", type=int, default=1, help="the fault schedule's and the "
                   "players' seed (default 1)")
    p.add_argument("--processes", type=int, default=3, help="server processes (default 3)")
    p.add_argument("--players", type=int, default=12,
                   help="seated players, four to a table, each table with a spectator "
                   "(default 12)")
    p.add_argument("--lease", type=float, default=LEASE,
                   help=f"the processes' --cluster-lease (default {LEASE:g})")
    p.add_argument("--kinds", default=",".join(KINDS),
                   help="the fault kinds to draw from, by commas (default all)")
    p.add_argument("--no-haproxy", action="store_true",
                   help="no HAProxy in front even where it is installed")
    p.add_argument("--out", type=Path, help="the run's folder (history, logs, summary); "
                   "by default a new temporary one, kept")
    args = p.parse_args(list(argv))
    args.kinds = tuple(k for k in args.kinds.split(",") if k)
    if unknown := [k for k in args.kinds if k not in KINDS]:
        p.error(f"unknown fault kinds {unknown}; known: {', '.join(KINDS)}")
    if args.processes < 2 or args.players < SEATS or args.duration <= 0 or args.lease < 1:
        p.error(f"--processes 2 or more, --players {SEATS} or more, --duration positive, "
                "--lease 1 or more")
    return args


def main(argv: Sequence[str] | None = None, prog: str = "pisyedili-bench nemesis") -> int:
    args = parse(sys.argv[1:] if argv is None else argv, prog)
    out: Path = args.out or Path(tempfile.mkdtemp(prefix="pisyedili-nemesis-"))
    out.mkdir(parents=True, exist_ok=True)
    run = Run(args, out)
    from twisted.internet.defer import ensureDeferred

    outcome: dict[str, Any] = {}

    def done(result: Any) -> None:
        outcome["result"] = result
        run.reactor.stop()

    run.reactor.callWhenRunning(lambda: ensureDeferred(run.run()).addBoth(done))
    # Interrupted (^C, SIGTERM): the fault in hand is repaired and no other begins, so
    # that the reactor's threads end and everything started is stopped below.
    run.reactor.addSystemEventTrigger("before", "shutdown", run.stop_faults.set)
    try:
        run.reactor.run()
    finally:
        run.stop()
    result = outcome.get("result")
    if not isinstance(result, dict):
        reason = getattr(result, "value", result)
        print(f"{prog}: failed: {reason!r} (see {out})", file=sys.stderr)
        if isinstance(reason, NotInstalled):
            return 2
        return 1
    print_summary(result, out)
    print(json.dumps(result))
    return 0 if result["verdict"] == "pass" else 1


if __name__ == "__main__":
    raise SystemExit(main())
