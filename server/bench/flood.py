"""`pisyedili-bench flood`: the real server, in its own process, under a flood.

Two rounds, each against a fresh server at the default limits:

- `frames` (issue 37, fault 4): connections flood `/ws` with WebSocket pings and empty
  continuation frames, reconnecting as soon as they are closed, while a canary player
  on TCP pings every 100 ms. Printed: the canary's round trips (p50, p90, p99, max), the
  server's CPU, and how many flooders the server closed. The issue's target is a canary
  p99 within 50 ms.
- `requests` (issue 40, item 1): TCP connections send `ping`s far over the rate, and
  the server never closes them (`flood_close` raised), so that every request past the
  burst is refused. Two servers take turns, one answering each refusal (this tree), one
  dropping those past a window's first ten, unanswered;
  the figure is the ratio of their CPU per refused request, measured alternately in one
  run because the machines this runs on are noisy.

Figures are printed as JSON, never asserted.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys
import time
from collections.abc import Sequence
from typing import Any, cast

from pisyedili.protocol.codec import encode
from pisyedili.server.bench.load import Child, cpu_seconds, percentile

HOST = "127.0.0.1"
WEB_LISTENING = re.compile(rb"serving the web client on .*port=(\d+)")
CANARY_EVERY = 0.1
"""Seconds between the canary's pings: 10 a second, within the default rate (20)."""
FLOOD_EVERY = 0.01
"""Seconds between a flooder's writes."""
VARIANTS = ("reply", "drop")
"""The `requests` round's servers: this tree's refusal path, and the one dropping."""


# -- the server's side ------------------------------------------------------------------


def _dropping_over_limit(self: Any, rid: int | None) -> None:
    """`Connection._over_limit` with refusals past a window's first ten dropped, not
    answered: the cost the bench compares answering them with."""
    from pisyedili.server.net.limits import ANSWERED_REFUSALS

    refused = self._refusal()
    if not self._closing and refused <= ANSWERED_REFUSALS:
        self.send_error("rate_limited", "too many messages too fast; this one was ignored",
                        rid, retry_after=round(self._bucket.retry_after(), 3))


def serve(argv: list[str]) -> None:
    """`--serve FLOOD_CLOSE VARIANT ARGS`: `pisyedili-server ARGS` with `flood_close` set
    (no option sets it); the `drop` variant has the dropping refusal path, the
    `uncounted` one counts a WebSocket message but not its frames."""
    from pisyedili.server.net.connection import Connection
    from pisyedili.server.net.limits import ServerLimits
    from pisyedili.server.service import tap

    vars(tap)["ServerLimits"] = functools.partial(ServerLimits, flood_close=int(argv[0]))
    if argv[1] == "drop":
        Connection._over_limit = _dropping_over_limit  # type: ignore[method-assign]
    if argv[1] == "uncounted":
        from autobahn.twisted.websocket import WebSocketServerProtocol

        from pisyedili.server.net.websocket import WebSocketServer

        for hook in ("onFrameBegin", "processControlFrame"):
            setattr(WebSocketServer, hook, getattr(WebSocketServerProtocol, hook))
    tap.main(argv[2:])


class Server:
    """A server subprocess with TCP and `--web` on ports of its own choosing."""

    def __init__(self, flood_close: int, variant: str = "reply") -> None:
        self.child = Child([sys.executable, "-m", "pisyedili.server.bench.flood", "--serve",
                            str(flood_close), variant, "--listen", f"tcp:0:interface={HOST}",
                            "--web", f"tcp:0:interface={HOST}", "--no-announce",
                            "--db", ":memory:"])
        self.port = self.child.port
        deadline = time.monotonic() + 20
        while True:  # the web port is named just after the TCP one
            self.child.out.seek(0)
            found = WEB_LISTENING.search(self.child.out.read())
            if found:
                self.web_port = int(found.group(1))
                break
            if time.monotonic() > deadline:
                self.child.stop()
                raise RuntimeError("the server named no web port")
            time.sleep(0.05)

    def cpu(self) -> float:
        return cpu_seconds(self.child.pid) or 0.0

    def stop(self) -> None:
        self.child.stop()


# -- the clients ------------------------------------------------------------------------


def _frame(opcode: int, fin: bool = True) -> bytes:
    """An empty masked client frame."""
    return bytes([(0x80 if fin else 0) | opcode, 0x80]) + b"\0\0\0\0"


CONTINUATION_FRAME = _frame(0, fin=False)
CLOSED_FOR_FLOODING = b"\x88\x0e\x03\xe8rate_limited"
"""The server's close frame for a flood: code 1000, reason `rate_limited`."""


def _upgrade(port: int) -> bytes:
    return (f"GET /ws HTTP/1.1\r\nHost: {HOST}:{port}\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n").encode()


def _length_prefixed(body: bytes) -> bytes:
    return len(body).to_bytes(4, "big") + body


async def run_frames(seconds: float, flooders: int, variant: str) -> dict[str, Any]:
    import msgpack
    from twisted.internet import reactor as _reactor
    from twisted.internet import task
    from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
    from twisted.internet.protocol import Protocol
    from twisted.protocols.basic import Int32StringReceiver

    reactor: Any = _reactor
    server = Server(flood_close=200, variant=variant)
    closed = [0]
    upgraded = [0]
    round_trips: list[float] = []
    sent: dict[int, float] = {}

    class Canary(Int32StringReceiver):
        MAX_LENGTH = 1 << 20

        def stringReceived(self, string: bytes) -> None:
            msg = msgpack.unpackb(string)
            start = sent.pop(msg.get("id", -1), None)
            if msg.get("type") == "pong" and start is not None:
                round_trips.append((time.perf_counter() - start) * 1000)

    class Flooder(Protocol):
        """Floods once upgraded; on the server's close drops the connection and
        connects again, as an attacker would rather than wait for the close's end."""

        def __init__(self, batch: bytes) -> None:
            self.batch = batch
            self.loop = task.LoopingCall(self.write)
            self.tail = b""

        def connectionMade(self) -> None:
            cast(Any, self.transport).write(_upgrade(server.web_port))

        def dataReceived(self, data: bytes) -> None:
            if not self.loop.running and b"\r\n\r\n" in data:  # the 101: flood from now
                upgraded[0] += 1
                if self.batch.startswith(CONTINUATION_FRAME):
                    cast(Any, self.transport).write(_frame(2, fin=False))  # a message begun
                self.loop.start(FLOOD_EVERY)
            self.tail = (self.tail + data)[-64:]
            if CLOSED_FOR_FLOODING in self.tail:
                cast(Any, self.transport).loseConnection()

        def write(self) -> None:
            cast(Any, self.transport).write(self.batch)

        def connectionLost(self, reason: Any = None) -> None:
            closed[0] += 1
            if self.loop.running:
                self.loop.stop()
            if running:
                reactor.callLater(0.05, start_flooder, self.batch)

    def start_flooder(batch: bytes) -> None:
        endpoint = TCP4ClientEndpoint(reactor, HOST, server.web_port)
        connectProtocol(endpoint, Flooder(batch))  # type: ignore[no-untyped-call]

    running = True
    try:
        endpoint = TCP4ClientEndpoint(reactor, HOST, server.port)
        canary: Canary = await connectProtocol(endpoint, Canary())  # type: ignore[no-untyped-call]
        canary.sendString(encode({"type": "hello", "protocol": 2, "name": "canary"}))  # type: ignore[no-untyped-call]
        pings = [_frame(9)] * 200  # 200 frames every 10 ms: 20,000 a second each
        continuations = [CONTINUATION_FRAME] * 200
        for i in range(flooders):
            start_flooder(b"".join(pings if i % 2 == 0 else continuations))
        ids = iter(range(1, 1 << 30))

        def ping() -> None:
            rid = next(ids)
            sent[rid] = time.perf_counter()
            canary.sendString(encode({"type": "ping", "id": rid}))  # type: ignore[no-untyped-call]

        cpu0 = server.cpu()
        pinging = task.LoopingCall(ping)
        pinging.start(CANARY_EVERY)
        await task.deferLater(reactor, seconds, lambda: None)
        pinging.stop()
        running = False
        cpu = server.cpu() - cpu0
        await task.deferLater(reactor, 0.5, lambda: None)  # the last pongs
    finally:
        running = False
        server.stop()
    return {"flooders": flooders, "seconds": seconds, "server_cpu_s": round(cpu, 3),
            "flooders_upgraded": upgraded[0], "flooders_closed": closed[0],
            "canary_pings": len(round_trips) + len(sent), "canary_unanswered": len(sent),
            **{f"canary_{name}_ms": _rounded(percentile(round_trips, p))
               for name, p in (("p50", 50), ("p90", 90), ("p99", 99))},
            "canary_max_ms": _rounded(max(round_trips, default=None))}


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


async def run_requests(seconds: float, flooders: int, per_write: int,
                       rounds: int) -> dict[str, Any]:
    from twisted.internet import reactor as _reactor
    from twisted.internet import task
    from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
    from twisted.protocols.basic import Int32StringReceiver

    reactor: Any = _reactor
    batch = b"".join(_length_prefixed(encode({"type": "ping", "id": 1000 + i}))
                     for i in range(per_write))
    per_refusal: dict[str, list[float]] = {v: [] for v in VARIANTS}
    replies: dict[str, int] = dict.fromkeys(VARIANTS, 0)

    class Flooder(Int32StringReceiver):
        MAX_LENGTH = 1 << 20
        received = 0

        def stringReceived(self, string: bytes) -> None:
            self.received += 1

    for _ in range(rounds):
        for variant in VARIANTS:
            server = Server(flood_close=10**9, variant=variant)
            try:
                clients: list[Flooder] = []
                for i in range(flooders):
                    endpoint = TCP4ClientEndpoint(reactor, HOST, server.port)
                    client: Flooder = await connectProtocol(endpoint, Flooder())  # type: ignore[no-untyped-call]
                    client.sendString(encode({"type": "hello", "protocol": 2,  # type: ignore[no-untyped-call]
                                              "name": f"flood-{i}"}))
                    clients.append(client)
                loops = [task.LoopingCall(c.transport.write, batch)  # type: ignore[union-attr]
                         for c in clients]
                cpu0 = server.cpu()
                for loop in loops:
                    loop.start(FLOOD_EVERY)
                await task.deferLater(reactor, seconds, lambda: None)
                for loop in loops:
                    loop.stop()
                await task.deferLater(reactor, 0.3, lambda: None)  # what is in flight
                cpu = server.cpu() - cpu0
                requests = len(loops) * per_write * (seconds / FLOOD_EVERY)
                per_refusal[variant].append(cpu / requests * 1e6)
                replies[variant] += sum(c.received for c in clients)
            finally:
                server.stop()
    reply, drop = (sorted(per_refusal[v])[len(per_refusal[v]) // 2] for v in VARIANTS)
    return {"requests_offered_per_s": round(flooders * per_write / FLOOD_EVERY),
            "requests_reply_cpu_us": round(reply, 2), "requests_drop_cpu_us": round(drop, 2),
            "requests_reply_over_drop": round(reply / drop, 3) if drop else None,
            "requests_replies_read": replies}


def parse(argv: Sequence[str], prog: str) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog=prog, description="The server in a subprocess under "
                                "a flood of WebSocket frames, then of requests over the rate.")
    p.add_argument("--seconds", type=float, default=10.0, help="length of each measure")
    p.add_argument("--flooders", type=int, default=12,
                   help="flooding connections (at most --max-per-address, 16 by default)")
    p.add_argument("--per-write", type=int, default=20,
                   help="`requests`: pings each flooder writes every 10 ms")
    p.add_argument("--rounds", type=int, default=3,
                   help="`requests`: turns of each server variant (the median is printed)")
    p.add_argument("--only", choices=("frames", "requests"), help="run one round only")
    p.add_argument("--before", action="store_true",
                   help="`frames`: also against a server counting no frame but messages")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None, prog: str = "pisyedili-bench flood") -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--serve"]:
        serve(args[1:])
        return 0
    opts = parse(args, prog)
    from twisted.internet import reactor as _reactor
    from twisted.internet.defer import ensureDeferred

    reactor: Any = _reactor
    result: dict[str, Any] = {}
    failure: list[Any] = []

    async def run() -> None:
        if opts.only in (None, "frames"):
            for variant in ("counted", "uncounted") if opts.before else ("counted",):
                result[f"frames_{variant}"] = await run_frames(opts.seconds, opts.flooders,
                                                               variant)
        if opts.only in (None, "requests"):
            result.update(await run_requests(opts.seconds, opts.flooders, opts.per_write,
                                             opts.rounds))

    done = ensureDeferred(run())
    done.addErrback(failure.append)
    done.addBoth(lambda _: reactor.stop())
    reactor.run()
    if failure:
        failure[0].printTraceback()
        return 1
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
