"""Abuse limits: how much one connection, one address and the whole server may take.

Kept apart from the network code so that the numbers an operator tunes live in one
dataclass, and the mechanisms (a connection counter per address, a window of
refusals per connection; the token bucket they share with accounts is
`server/token_bucket.py`) can be tested with a `task.Clock` and no sockets.
"""

from __future__ import annotations

import ipaddress
import math
from collections import Counter
from dataclasses import dataclass

from pisyedili.protocol.limits import MAX_SERVER_FRAME


@dataclass(frozen=True)
class ServerLimits:
    """Operator-tunable limits; every field is documented in docs/operating.md."""

    max_connections: int = 1000
    max_per_address: int = 16
    max_http_per_address: int = 64
    """Plain HTTP connections to `--web` (page loads, a WebSocket's until its upgrade)
    from one address at once, counted apart from `max_per_address`: a browser opens
    up to six to load the page and keeps them a minute, so several browsers behind one
    NAT address need more than their players' share."""
    handshake_seconds: float = 10.0
    """A connection that has not said `hello` by then is told so and closed."""
    ping_seconds: float = 30.0
    """After this much silence from a client the server sends it a `ping`."""
    idle_seconds: float = 90.0
    """After this much silence (a `pong` counts as traffic) the connection is closed."""
    rate: float = 20.0
    """Requests per second a connection may sustain (token bucket refill rate)."""
    burst: int = 40
    """Requests a connection may send at once before the rate applies."""
    flood_close: int = 200
    """Refused requests within one `FLOOD_WINDOW` after which a flooding connection is
    closed (counted over the window, not in a row: a refill between refusals must not
    reset the count, or a steady flood would last for ever)."""
    max_tables_per_player: int = 3
    """Open tables one player may host at once."""
    max_tables_per_address: int = 6
    """Open tables opened from one address (`address_key`) at once: every `hello` is a
    new player, so only this keeps one host from filling the lobby."""
    max_tables_total: int = 2000
    """Open tables on the whole server, whoever opened them."""
    max_sessions_per_address: int = 32
    """Live sessions opened from one address (`address_key`): a dropped session outlives
    its connection by the grace period, so the connection cap alone does not bound them."""
    max_output_bytes: int = 4 * 1024 * 1024
    """Bytes the server may hold for one connection that stopped reading before it is
    closed with `too_slow`; a burst of the largest lobby pages fits within the default."""
    kick_seconds: float = 300.0
    """How long a kick keeps its player out (the account, or a guest's address): a
    `hello` or `login` meanwhile is refused with `kicked`, its reason and `retry_after`."""

    def __post_init__(self) -> None:
        for field in ("max_connections", "max_per_address", "max_http_per_address",
                      "burst", "flood_close",
                      "max_tables_per_player", "max_tables_per_address",
                      "max_tables_total", "max_sessions_per_address"):
            if getattr(self, field) < 1:
                raise ValueError(f"{field} must be at least 1")
        if self.max_output_bytes < MAX_SERVER_FRAME:
            # Below one frame of the largest size, a client could never be sent one.
            raise ValueError(f"max_output_bytes must be at least {MAX_SERVER_FRAME}")
        for field in ("handshake_seconds", "ping_seconds", "idle_seconds", "rate",
                      "kick_seconds"):
            if getattr(self, field) <= 0:
                raise ValueError(f"{field} must be positive")
        if self.idle_seconds <= self.ping_seconds:
            raise ValueError("idle_seconds must be longer than ping_seconds")

    def to_wire(self) -> dict[str, int]:
        """The policy limits a client should know about, for `welcome.limits` (integers)."""
        return {
            "rate": max(1, int(self.rate)),
            "burst": self.burst,
            "ping_seconds": math.ceil(self.ping_seconds),
            "idle_seconds": int(self.idle_seconds),
            "tables_per_player": self.max_tables_per_player,
        }


FLOOD_WINDOW = 10.0
"""Seconds over which a connection's refused requests are counted."""
ANSWERED_REFUSALS = 10
"""Refused requests per `FLOOD_WINDOW` answered with a `rate_limited` of their own (the
wait for the next token); the rest get one pre-encoded frame each, so that answering a
flood costs little more than dropping it (`connection.refusal_reply`)."""


class RefusalWindow:
    """A connection's refused requests, counted over fixed windows of `FLOOD_WINDOW`
    seconds, the first starting at its first refusal. Made at that first refusal, so
    a connection that never floods holds none."""

    __slots__ = ("_count", "_start")

    def __init__(self, now: float) -> None:
        self._start = now
        self._count = 0

    def refuse(self, now: float) -> int:
        """Count one refusal at `now`; the count in its window, this one included."""
        if now - self._start >= FLOOD_WINDOW:
            self._start = now
            self._count = 0
        self._count += 1
        return self._count


class ConnectionCounter:
    """Counts live connections in total and per remote address."""

    def __init__(self, max_total: int, max_per_address: int) -> None:
        self._max_total = max_total
        self._max_per_address = max_per_address
        self._per_address: Counter[str] = Counter()
        self._total = 0

    @property
    def total(self) -> int:
        return self._total

    def admit(self, address: str, *, reserve: int = 0,
              per_address: bool = True) -> str | None:
        """Count a new connection, or return the error code that refuses it.

        `reserve`: places of the total this connection may not take (web connections
        leave `web_reserve` to the TCP port). `per_address` False: counted in the total
        only (an HTTP connection from a trusted proxy, which speaks for many)."""
        if self._total >= self._max_total - reserve:
            return "server_full"
        if per_address and self._per_address[address] >= self._max_per_address:
            return "too_many_connections"
        self._total += 1
        if per_address:
            self._per_address[address] += 1
        return None

    def release(self, address: str, per_address: bool = True) -> None:
        """Forget one admitted connection from `address` (admitted as `per_address`)."""
        if not per_address:
            self._total = max(0, self._total - 1)
            return
        if self._per_address[address] <= 0:
            return
        self._total -= 1
        self._per_address[address] -= 1
        if not self._per_address[address]:
            del self._per_address[address]


def web_reserve(max_connections: int) -> int:
    """Places of `max_connections` that plain HTTP connections may not take: a tenth,
    so that however many page loads (or half-sent requests) hold the web port, the
    TCP port still admits players."""
    return max_connections // 10


def address_key(host: str) -> str:
    """What `--max-per-address` counts by: one IPv4 address, or one IPv6 /64.

    An IPv6 host usually holds a whole /64, so counting single addresses there would
    cap nothing; an IPv4-mapped IPv6 address counts as its IPv4 address.
    """
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host  # not an IP (UNIX socket): one key for all
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)
