"""What the processes of one cluster share, and how a process reaches it.

A process keeps its sessions (`people/session.py`) and its tables (`table/lobby.py`)
in memory, as one server always did. What must be one across processes lives behind
`Cluster`: the player and table ids, the name claims (two processes must not both
welcome an "Ali"), the invite codes, the sessions by their token's hash, which process
holds which table, the lobby rows, and the connections per address. One process alone
is its own cluster (`local.py`: nothing to share, every answer at once); `--cluster
redis://...` makes it one of many (`redis/`).

The answers that decide (an id, a claim) come as Deferreds, since a shared store
answers over the network; the writes that only tell the others (a row, a session's
life) return nothing and are the cluster's to retry or log.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

from twisted.internet import defer
from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IReactorTime

from pisyedili.protocol.errors import ProtocolError
from pisyedili.server.cluster.holdings import Effect, Holdings

RETRY_AFTER = 1
"""Seconds a request refused for want of the shared state is told to wait: the shared
state is out of reach for about that long in most outages (a link made again, Redis
restarted, a woken process's keys checked), so a client waiting longer only comes back
later than it could; one request a second from each waiting client is little."""


DOUBT_WAIT = 2
"""Leases a request or a resume read while this process is in doubt of its lease waits
for it to know again what it homes (`until_sure`)."""


async def until_sure(cluster: Cluster, clock: IReactorTime) -> bool:
    """Whether this process knows again what it homes (`Cluster.out_of_doubt`) within
    `DOUBT_WAIT` leases: until then a session held here may have been taken over
    elsewhere, and what its copy here says or does may be stale."""
    sure = cluster.out_of_doubt()
    sure.addTimeout(DOUBT_WAIT * cluster.lease, clock)
    try:
        await sure
    except defer.TimeoutError:
        return False
    return True


def unavailable(what: str) -> ProtocolError:
    """The refusal of a request that needs the shared state while it is out of reach:
    a stable code, at once, rather than a wait for a link that may not come back."""
    return ProtocolError("cluster_unavailable", f"{what} waits for the cluster's shared "
                         "state, which is out of reach for now", retry_after=RETRY_AFTER)


@dataclass(frozen=True)
class ClusterAddress:
    """Where the cluster's shared state is: `redis://HOST:PORT/N` (N the database)."""

    host: str
    port: int
    db: int

    @classmethod
    def parse(cls, text: str) -> ClusterAddress:
        """Raises ValueError with a message an operator can act on."""
        parts = urlsplit(text)
        if parts.scheme != "redis":
            raise ValueError(f"a cluster is addressed as redis://HOST:PORT/N, not {text!r}")
        try:
            port = parts.port or 6379
        except ValueError:
            raise ValueError(f"bad port in {text!r}") from None
        path = parts.path.strip("/")
        if path and not path.isdigit():
            raise ValueError(f"the database in {text!r} must be a number (redis://HOST:PORT/N)")
        if parts.query or parts.fragment or parts.username or parts.password:
            raise ValueError(f"{text!r}: only redis://HOST:PORT/N is understood")
        return cls(parts.hostname or "localhost", port, int(path or 0))

    def __str__(self) -> str:
        return f"redis://{self.host}:{self.port}/{self.db}"


class Cluster(Protocol):
    """The state the processes of one lobby share (module docstring)."""

    @property
    def process(self) -> str:
        """This process's name in the cluster (in the table -> process map)."""
        ...

    @property
    def holdings(self) -> Holdings:
        """Who holds what, as this process sees it: the state machine every decision
        about its tables' ownership (and its fencing tokens) is taken in."""
        ...

    @property
    def lease(self) -> float:
        """Seconds a process that stopped renewing its keys is still taken for alive."""
        ...

    @property
    def shared(self) -> bool:
        """False for a process alone: the callers keep their in-memory ways."""
        ...

    @property
    def reachable(self) -> bool:
        """False while the shared state is out of reach: the answers that decide fail
        with `unavailable`'s refusal, the writes that tell are kept for its return."""
        ...

    @property
    def lease_in_doubt(self) -> bool:
        """True while this process may have been taken for dead without knowing it yet:
        its lease was last renewed longer than a lease ago (it was paused, or cut off),
        and the others may have taken over what it holds, session rows of the shared
        journal included. False again once it renewed, or checked what it holds."""
        ...

    def out_of_doubt(self) -> Deferred[None]:
        """Fires once the lease is not in doubt (`lease_in_doubt`): at once if it is not,
        else as it renewed, or what this process holds was checked. Cancel it to stop
        waiting."""
        ...

    def named(self, name: str, address: str) -> None:
        """What the operator calls this process (`--cluster-name`; "" for `address`)
        and where it serves (this host and its game port): stable across restarts,
        unlike `process`, and what the other processes' logs name it by."""
        ...

    def draining(self) -> None:
        """This process stops (SIGTERM): said where `pisyedili-server status` reads it,
        for the time it still serves."""
        ...

    def watch_link(self, lost: Callable[[], None], back: Callable[[], None]) -> None:
        """Who hears that the shared state went out of reach (`lost`), and that it is
        back, with everything this process holds written there again (`back`)."""
        ...

    def watch_sessions(self, disowned: Callable[[str, bytes, str], None]) -> None:
        """Who hears that another process took a session of this one over while this
        one was taken for dead (paused, or cut off, past its lease): its player id,
        token hash and the process that holds it now. It is that one's: it goes from
        here, as after a hand-over."""
        ...

    def watch_holdings(self, carry: Callable[[Effect], None]) -> None:
        """Who carries out what `holdings` decide about sessions in answer to the
        cluster's own events: a hand asked while the lease was in doubt is answered
        (`HandOver`, `SendOn`, `RefuseHand`) once the keys are checked."""
        ...

    def start(self) -> Deferred[None]:
        """Join: fires once the shared state answers (fails if it cannot be reached)."""
        ...

    def stop(self) -> Deferred[None]:
        """Leave: this process's live keys go (those still its own: it may have been
        taken for dead, and another process may hold some of them now), then the link."""
        ...

    # -- ids, names, codes: the answers that decide --------------------------------

    def next_id(self, kind: str) -> Deferred[int]:
        """A fresh `player` or `table` id, never handed out by any process before."""
        ...

    def claim_name(self, player_id: str, keys: tuple[str, ...]) -> Deferred[bool]:
        """Hold every one of a name's `keys` (`names.keys`) for `player_id`, or none
        (False: another player holds one)."""
        ...

    def own(self, table_id: int) -> Deferred[None]:
        """Put a new table of this process in the table -> process map: once it has
        fired, any process finds it there (the lobby row follows)."""
        ...

    def take(self, table_id: int) -> Deferred[bool]:
        """Hold a table of the shared journal whose process is gone (or that none
        holds): True if this process holds it now, and it is in the map under it."""
        ...

    def session_holder(self, hashed: bytes) -> Deferred[str | None]:
        """The live process holding a session (None: none, or a gone one)."""
        ...

    def name_holder(self, keys: tuple[str, ...]) -> Deferred[str | None]:
        """The player holding one of a name's `keys` (`names.keys`), whichever process
        holds its session (None: nobody): an operator's request names a player, who
        may be connected to another process."""
        ...

    def claim_code(self, code: str, table_id: int) -> Deferred[bool]:
        """Hold an invite code for a table (False: another table has it)."""
        ...

    def release_name(self, player_id: str, keys: tuple[str, ...]) -> None:
        """`player_id` no longer holds these keys (renamed, or never welcomed)."""
        ...

    def connection_opened(self, address: str) -> Deferred[int]:
        """Count one more connection from `address`: how many the cluster now has."""
        ...

    # -- what the others are told ---------------------------------------------------

    def connection_closed(self, address: str) -> None: ...

    def session_live(self, hashed: bytes, player_id: str, name: str,
                     keys: tuple[str, ...]) -> None:
        """A connected session (and its name's keys): kept while this process lives."""
        ...

    def session_away(self, hashed: bytes, keys: tuple[str, ...], grace: float) -> None:
        """Its connection dropped: the session and its name last `grace` seconds more."""
        ...

    def session_gone(self, hashed: bytes, player_id: str, keys: tuple[str, ...],
                     forgotten: Callable[[], None] | None = None) -> None:
        """Forgotten (or its token replaced): its keys are free again. `forgotten` is
        called then, unless another process homes the session now (its record names
        that one): the copy here was stale, and the shared journal's row of the session
        is that process's, to be kept."""
        ...

    def session_moved(self, hashed: bytes, keys: tuple[str, ...]) -> None:
        """Resumed on another process, which keeps its keys now: this one stops
        renewing them and writes nothing (the new home's writes must stand)."""
        ...

    def find_session(self, hashed: bytes) -> Deferred[dict[str, str] | None]:
        """A session by its token's hash, whichever process holds it: its `player`
        and `process` (None: no process does)."""
        ...

    def table_row(self, table_id: int, row: dict[str, Any]) -> None:
        """A table of this process and its lobby row, as it now is."""
        ...

    def table_closed(self, table_id: int, code: str | None) -> None: ...

    def keep_code(self, code: str, table_id: int) -> None:
        """The invite code of a table this process read back (took over, or restarted
        with), held from now on as if claimed here (kept while this process lives,
        freed as the table closes): the claim of the run that opened the table dies
        with it, and the others find the table by its code only in the shared state."""
        ...

    def seen_ids(self, highest: Mapping[str, int]) -> None:
        """Ids given out by any process (as a shared journal keeps them): the counters
        go on above them (a Redis that restarted empty knows none)."""
        ...

    def count_from(self, read: Callable[[], Deferred[dict[str, int]]]) -> None:
        """Where the ids given out before are read (the store: `Store.id_floors`), before
        `start`. They are read as this process joins, and again each time the shared
        state is back; no id is handed out until the counters are above what was read
        (a Redis that restarted empty, or a database moved in from a server that ran
        alone, knows none of them), and a first read that fails fails the start."""
        ...

    def table_lost(self, table_id: int, code: str | None) -> None:
        """Another process holds this table now (it took it over while this one was
        taken for dead): this one stops renewing its keys and writes nothing."""
        ...

    # -- the lobby of every process, and messages between processes -----------------

    def lobby_rows(self) -> Mapping[int, dict[str, Any]]:
        """The other processes' tables: their lobby rows by table id."""
        ...

    def owner_of(self, table_id: int) -> str | None:
        """The process that holds a table of another process (None: none does)."""
        ...

    def locate(self, table_id: int) -> Deferred[str | None]:
        """The process that holds a table, asked of the shared state itself."""
        ...

    def code_table(self, code: str) -> Deferred[int | None]:
        """The table an invite code opens, whichever process holds it."""
        ...

    def publish_lobby(self, delta: dict[str, Any]) -> None:
        """A `lobby_update` of one of this process's tables, or (op `chat`) a line of
        lobby chat, for every other process (in the order published: one publisher per
        table keeps each table's order)."""
        ...

    def send(self, process: str, message: dict[str, Any]) -> None:
        """One message to another process (in order, per pair of processes)."""
        ...

    def listen(self, on_lobby: Callable[[dict[str, Any]], None],
               on_message: Callable[[dict[str, Any]], None],
               on_gone: Callable[[str], None]) -> None:
        """Where the other processes' lobby deltas and this process's messages go, and
        who hears that a process is gone (its lease ran out). The `remove` of a gone
        process's table says `gone` (the table may be taken over)."""
        ...

    def watch(self, process: str) -> None:
        """Tell `on_gone` when `process` is gone (those whose rows are listed, always)."""
        ...

    # -- accounts and sessions across processes (`net/relay.py`) ----------------------

    def take_session(self, hashed: bytes, player_id: str, name: str) -> Deferred[bool]:
        """Hold a session whose process is gone (or that none holds), to rebuild it here
        from the shared journal: True if this process holds it now (one process wins)."""
        ...

    def tell_all(self, message: dict[str, Any]) -> None:
        """One message for every other process (`on_message`), in the order told."""
        ...

    def live_processes(self) -> Deferred[list[str]]:
        """The other processes whose lease is alive now (`unavailable` while the shared
        state is out of reach): those an act told to all of them waits to hear from."""
        ...
