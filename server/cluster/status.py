"""What `pisyedili-server status` reads from a cluster's Redis: its live processes,
with what each holds.

A one-shot, blocking read from a command line, so a plain socket and hiredis's
reply parser rather than the server's txredisapi, which needs a running reactor.
Only keys are read (`redis/` describes them): a live process is a `process:P`
lease; its name, address, start time and whether it drains are its field of
`names`; a table's holder is its `table:ID` row's `process`, a session's its
`session:HASH` hash's `process`.
"""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass, field
from typing import Any

import hiredis

from pisyedili.server.cluster.base import ClusterAddress
from pisyedili.server.cluster.redis import PREFIX

TIMEOUT = 5.0
"""Seconds to connect, and to wait for each reply: an operator's command that hangs
on an unreachable Redis is worse than one that says so."""
SCAN_COUNT = 1000


class Unreachable(Exception):
    """The cluster's Redis could not be reached or answered wrongly (the message says
    which, in one line)."""


@dataclass
class ProcessStatus:
    """One live process of the cluster, as `status` shows it."""

    process: str
    name: str = ""
    address: str = ""
    started: float | None = None
    """When it joined (Unix time); None for a process too old to say."""
    draining: bool = False
    messages: int | None = None
    """The version of the messages it writes to the other processes
    (`interproc.messages.VERSION`); None for a process too old to say, version 1's."""
    tables: list[int] = field(default_factory=list)
    sessions: int = 0


class _Link:
    """One connection, one command at a time."""

    def __init__(self, address: ClusterAddress) -> None:
        self._sock = socket.create_connection((address.host, address.port), timeout=TIMEOUT)
        self._reader = hiredis.Reader(encoding="utf-8", errors="replace")
        self.command("SELECT", address.db)

    def command(self, *args: object) -> Any:
        parts = [str(a).encode() for a in args]
        self._sock.sendall(b"*%d\r\n" % len(parts) + b"".join(
            b"$%d\r\n%s\r\n" % (len(p), p) for p in parts))
        while (reply := self._reader.gets()) is False:
            data = self._sock.recv(65536)
            if not data:
                raise ConnectionError("Redis closed the connection")
            self._reader.feed(data)
        if isinstance(reply, hiredis.ReplyError):
            raise Unreachable(f"Redis refused {args[0]}: {reply}")
        return reply

    def scan(self, pattern: str) -> list[str]:
        found: set[str] = set()
        cursor = "0"
        while True:
            cursor, keys = self.command("SCAN", cursor, "MATCH", pattern, "COUNT", SCAN_COUNT)
            found.update(keys)
            if cursor == "0":
                return sorted(found)

    def close(self) -> None:
        self._sock.close()


def read_processes(address: ClusterAddress) -> list[ProcessStatus]:
    """The live processes of the cluster at `address`, in number order; raises
    `Unreachable` with a one-line reason."""
    try:
        link = _Link(address)
    except OSError as e:
        raise Unreachable(f"cannot reach the cluster's Redis at {address}: {e}") from None
    try:
        return _read(link)
    except (OSError, hiredis.ProtocolError, ValueError) as e:
        raise Unreachable(f"reading the cluster's Redis at {address} failed: {e}") from None
    finally:
        link.close()


def _read(link: _Link) -> list[ProcessStatus]:
    lease = PREFIX + "process:"
    live = {key.removeprefix(lease): ProcessStatus(key.removeprefix(lease))
            for key in link.scan(lease + "*")}
    for process, told in _pairs(link.command("HGETALL", PREFIX + "names")):
        if process in live:
            _named(live[process], told)
    for table_id in link.command("SMEMBERS", PREFIX + "tables"):
        holder = link.command("HGET", PREFIX + f"table:{table_id}", "process")
        if holder in live and table_id.isdigit():
            live[holder].tables.append(int(table_id))
    for key in link.scan(PREFIX + "session:*"):
        holder = link.command("HGET", key, "process")
        if holder in live:
            live[holder].sessions += 1
    for status in live.values():
        status.tables.sort()
    return sorted(live.values(), key=_by_number)


def _pairs(flat: list[str]) -> list[tuple[str, str]]:
    return list(zip(flat[::2], flat[1::2], strict=True))


def _named(status: ProcessStatus, told: str) -> None:
    """A process's field of `names`: JSON, its later keys absent from older processes."""
    try:
        fields = json.loads(told)
    except ValueError:
        return
    if not isinstance(fields, dict):
        return
    status.name = str(fields.get("name", ""))
    status.address = str(fields.get("address", ""))
    started = fields.get("started")
    status.started = float(started) if isinstance(started, (int, float)) and started else None
    status.draining = fields.get("draining") is True
    messages = fields.get("messages")
    status.messages = messages if isinstance(messages, int) else None


def _by_number(status: ProcessStatus) -> tuple[int, str]:
    number = status.process.removeprefix("p")
    return (int(number), "") if number.isdigit() else (0, status.process)
