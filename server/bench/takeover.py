"""`pisyedili-bench takeover`: how long a table's members wait after its process dies.

Three server processes (by default) on one Redis and one PostgreSQL journal, with the
cluster's default lease unless told another. Each round a host on one process opens
a four-seat table, a second player on the same process and one on each other process
join it, and the match starts; then the table's process is killed (SIGKILL). The two
players whose connection died with it reconnect at once, each through a live process,
and resume with their token; the other two keep their connections. A member is seated
again when a `table` snapshot of the table reaches it after the kill; the round's
figure is the time from the kill to the last member's. The killed process is started
again between rounds (outside the measure), and the table's process changes each
round. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import select
import signal
import socket
import struct
import sys
import time
from collections.abc import Sequence
from typing import Any

from pisyedili.protocol.codec import decode, frame
from pisyedili.protocol.limits import SERVER_FRAME_LIMITS
from pisyedili.protocol.version import PROTOCOL_VERSION
from pisyedili.server.bench.load import HOST, Child, percentile, server_argv
from pisyedili.server.bench.services import NotInstalled, Postgres, RedisServer, flush_redis

WAIT_SECONDS = 120.0
"""A backstop for one round: a member not seated again by then fails the run."""

Msg = dict[str, Any]


class _Client:
    """One blocking connection: requests, and the messages kept as they come."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection((HOST, port), timeout=WAIT_SECONDS)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.rid = 0
        self.welcome: Msg = {}

    def send(self, type_: str, **fields: Any) -> int:
        self.rid += 1
        self.sock.sendall(frame({"type": type_, "id": self.rid, **fields}))
        return self.rid

    def recv(self) -> Msg | None:
        head = self.sock.recv(4, socket.MSG_WAITALL)
        if len(head) < 4:
            return None
        body = self.sock.recv(struct.unpack(">I", head)[0], socket.MSG_WAITALL)
        msg: Msg = decode(body, SERVER_FRAME_LIMITS)
        return msg

    def ask(self, type_: str, **fields: Any) -> Msg:
        """The reply to one request; a refusal fails the run."""
        rid = self.send(type_, **fields)
        while (msg := self.recv()) is not None:
            if msg.get("id") == rid:
                if msg["type"] == "error":
                    raise RuntimeError(f"{type_} refused: {msg}")
                return msg
        raise RuntimeError(f"closed before the reply to {type_}")

    def hello(self, name: str) -> Msg:
        self.welcome = self.ask("hello", protocol=PROTOCOL_VERSION, name=name)
        return self.welcome

    def close(self) -> None:
        self.sock.close()


def _round(ports: list[int], owner: int, n: int) -> tuple[list[_Client], int, list[int]]:
    """A started match at a table of the process at `ports[owner]`: its members (two on
    that process, one on each other), the table, and the members' ports."""
    where = [ports[owner], ports[owner]] + [p for i, p in enumerate(ports) if i != owner]
    where = where[:4]
    members = [_Client(port) for port in where]
    for i, member in enumerate(members):
        member.hello(f"r{n}m{i}")
    table = members[0].ask("create_table", rules="classic", seats=len(members))["table"]["id"]
    for guest in members[1:]:
        guest.ask("join_table", table=table)
        guest.ask("ready", ready=True)
    members[0].ask("start")
    return members, table, where


def _seated_after_kill(members: list[_Client], where: list[int], dead: int,
                       live: list[int], table: int, killed_at: float) -> float:
    """Seconds from the kill until every member had a snapshot of `table` again."""
    seated: dict[int, float] = {}
    reading: dict[socket.socket, int] = {}
    for i, member in enumerate(members):
        if where[i] == dead:  # its connection died with the process: it resumes
            member.close()
            back = _Client(live[i % len(live)])
            back.send("hello", protocol=PROTOCOL_VERSION, token=member.welcome["token"],
                      name=member.welcome["name"])
            members[i] = back
        reading[members[i].sock] = i
    while len(seated) < len(members):
        left = killed_at + WAIT_SECONDS - time.monotonic()
        if left <= 0:
            raise RuntimeError(f"members {sorted(set(range(len(members))) - set(seated))} "
                               f"not seated again in {WAIT_SECONDS:g} s")
        ready, _, _ = select.select(list(reading), [], [], left)
        for sock in ready:
            i = reading[sock]
            msg = members[i].recv()
            if msg is None:
                del reading[sock]  # (the killed process's: its member reconnected)
                continue
            if msg["type"] == "error" and msg.get("code") == "bad_token":
                raise RuntimeError(f"member {i} could not resume: {msg}")
            if msg["type"] == "table" and msg["table"]["id"] == table and i not in seated:
                seated[i] = time.monotonic() - killed_at
    return max(seated.values())


def _leave(members: list[_Client]) -> None:
    for member in members:
        try:
            member.send("leave_table")
        except OSError:
            pass
        member.close()


def run(args: argparse.Namespace) -> dict[str, Any]:
    redis = None if args.redis_url else RedisServer()
    pg = Postgres(args.postgres_url) if args.postgres_url else Postgres.start()
    children: list[Child] = []
    try:
        url = args.redis_url or (redis.url if redis is not None else "")
        flush_redis(url)
        db = pg.store()
        lease = ["--cluster-lease", str(args.lease)] if args.lease else []

        def start(n: int) -> Child:
            return Child(server_argv(n, 0.5, None, db, cluster=url) + lease)

        children = [start(n) for n in range(args.processes)]
        figures: list[float] = []
        for n in range(args.kills):
            owner = n % len(children)
            ports = [child.port for child in children]
            members, table, where = _round(ports, owner, n)
            dead = ports[owner]
            live = [p for p in ports if p != dead]
            killed_at = time.monotonic()
            children[owner].proc.send_signal(signal.SIGKILL)
            figures.append(_seated_after_kill(members, where, dead, live, table, killed_at))
            children[owner].proc.wait()
            children[owner].stop()
            _leave(members)
            children[owner] = start(args.processes + n)
            if not args.quiet:
                print(f"kill {n + 1}: every member seated again after {figures[-1]:.2f} s",
                      file=sys.stderr)
        return {"bench": "takeover", "processes": args.processes, "kills": args.kills,
                "lease_s": args.lease or "default", "seated_p50_s": percentile(figures, 50),
                "seated_p99_s": percentile(figures, 99), "seated_max_s": round(max(figures), 3),
                "seated_s": [round(f, 3) for f in figures]}
    finally:
        for child in children:
            child.stop()
        pg.stop()
        if redis is not None:
            redis.stop()


def parse(argv: Sequence[str], prog: str) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    p.add_argument("--kills", type=int, default=20, help="rounds, one kill each")
    p.add_argument("--processes", type=int, default=3, help="processes of the cluster (2+)")
    p.add_argument("--lease", type=float, default=None,
                   help="--cluster-lease of the processes (default: the server's own)")
    p.add_argument("--redis-url", help="a Redis to use (its database is emptied); "
                   "by default one of our own")
    p.add_argument("--postgres-url", help="a PostgreSQL to make the store's schema on; "
                   "by default one of our own")
    p.add_argument("--quiet", action="store_true", help="only the JSON line")
    args = p.parse_args(argv)
    if args.processes < 2 or args.kills < 1:
        p.error("--processes must be 2 or more, --kills 1 or more")
    return args


def main(argv: Sequence[str] | None = None, prog: str = "pisyedili-bench takeover") -> int:
    args = parse(sys.argv[1:] if argv is None else argv, prog)
    try:
        result = run(args)
    except (NotInstalled, RuntimeError) as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 1
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
