"""One process alone: its own cluster.

The sessions registry and the lobby already hold everything in memory and decide
names, ids and codes themselves, as a single server always did; this cluster adds
nothing to that and answers at once, so the callers' flow stays synchronous.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from twisted.internet.defer import Deferred, succeed

from pisyedili.server.cluster.holdings import Effect, Holdings, Standing


class LocalCluster:
    """The `Cluster` of a process that joined none (the default)."""

    process = "local"
    shared = False
    lease = 0.0  # nothing to renew: it ends with the process
    reachable = True  # its state is its own memory
    lease_in_doubt = False  # nobody else to take anything over

    def __init__(self) -> None:
        self.holdings = Holdings(Standing.SERVING)  # (nobody else to hold anything)

    def watch_link(self, lost: Callable[[], None], back: Callable[[], None]) -> None:
        pass

    def watch_sessions(self, disowned: Callable[[str, bytes, str], None]) -> None:
        pass  # no other process to take one over

    def watch_holdings(self, carry: Callable[[Effect], None]) -> None:
        pass  # never in doubt: nothing waits for it

    def out_of_doubt(self) -> Deferred[None]:
        return succeed(None)

    def named(self, name: str, address: str) -> None:
        pass  # no other process to tell

    def draining(self) -> None:
        pass  # nobody reads it: `status` without --cluster reads the store

    def start(self) -> Deferred[None]:
        return succeed(None)

    def stop(self) -> Deferred[None]:
        return succeed(None)

    def next_id(self, kind: str) -> Deferred[int]:
        raise NotImplementedError("a process alone counts its own ids")

    def claim_name(self, player_id: str, keys: tuple[str, ...]) -> Deferred[bool]:
        return succeed(True)  # the process's own registry is every session there is

    def name_holder(self, keys: tuple[str, ...]) -> Deferred[str | None]:
        return succeed(None)  # a name no session here holds is nobody's

    def release_name(self, player_id: str, keys: tuple[str, ...]) -> None:
        pass

    def own(self, table_id: int) -> Deferred[None]:
        return succeed(None)

    def take(self, table_id: int) -> Deferred[bool]:
        return succeed(True)

    def session_holder(self, hashed: bytes) -> Deferred[str | None]:
        return succeed(None)

    def claim_code(self, code: str, table_id: int) -> Deferred[bool]:
        return succeed(True)

    def connection_opened(self, address: str) -> Deferred[int]:
        return succeed(0)  # `ConnectionCounter` counts them, exactly

    def connection_closed(self, address: str) -> None:
        pass

    def session_live(self, hashed: bytes, player_id: str, name: str,
                     keys: tuple[str, ...]) -> None:
        pass

    def session_away(self, hashed: bytes, keys: tuple[str, ...], grace: float) -> None:
        pass

    def session_gone(self, hashed: bytes, player_id: str, keys: tuple[str, ...],
                     forgotten: Callable[[], None] | None = None) -> None:
        if forgotten is not None:  # (no other process)
            forgotten()

    def session_moved(self, hashed: bytes, keys: tuple[str, ...]) -> None:
        pass

    def find_session(self, hashed: bytes) -> Deferred[dict[str, str] | None]:
        return succeed(None)  # a token this process does not know is nobody's

    def table_row(self, table_id: int, row: dict[str, Any]) -> None:
        pass

    def table_closed(self, table_id: int, code: str | None) -> None:
        pass

    def keep_code(self, code: str, table_id: int) -> None:
        pass

    def table_lost(self, table_id: int, code: str | None) -> None:
        pass

    def seen_ids(self, highest: Mapping[str, int]) -> None:
        pass

    def count_from(self, read: Callable[[], Deferred[dict[str, int]]]) -> None:
        pass  # its journal's ids are its own: a restart goes on from them (recovery.py)

    def lobby_rows(self) -> Mapping[int, dict[str, Any]]:
        return {}

    def owner_of(self, table_id: int) -> str | None:
        return None

    def locate(self, table_id: int) -> Deferred[str | None]:
        return succeed(None)

    def code_table(self, code: str) -> Deferred[int | None]:
        return succeed(None)

    def publish_lobby(self, delta: dict[str, Any]) -> None:
        pass

    def send(self, process: str, message: dict[str, Any]) -> None:
        raise LookupError("a process alone has no other process to send to")

    def listen(self, on_lobby: Callable[[dict[str, Any]], None],
               on_message: Callable[[dict[str, Any]], None],
               on_gone: Callable[[str], None]) -> None:
        pass

    def watch(self, process: str) -> None:
        pass

    def take_session(self, hashed: bytes, player_id: str, name: str) -> Deferred[bool]:
        raise NotImplementedError("a process alone has no other process's sessions")

    def tell_all(self, message: dict[str, Any]) -> None:
        pass

    def live_processes(self) -> Deferred[list[str]]:
        return succeed([])


LOCAL = LocalCluster()
