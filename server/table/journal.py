"""What the tables and sessions write down so that a restart finds them again: the
interface only. The store implements it (`pisyedili.server.store.journal.StoreJournal`)
and reads it back (`SavedTable`); the tables and the session registry write to it
without knowing where it goes, so the layers point one way: the store knows the
table, not the other way round.

Nothing is told to anyone before it is written: every byte to a client waits behind
the commit of what it tells of (`Journal.after_commit`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from pisyedili.server.table.commands import Command

if TYPE_CHECKING:
    from pisyedili.server.table.core import TableCore

Waiting = TypeVar("Waiting", bound=Callable[..., object])


def last_word(fn: Waiting) -> Waiting:
    """Marks a method whose calls wait on the journal (`after_commit`) as a hang-up: a
    fence that withholds what waited for an object (`StoreJournal.fence`) keeps these,
    so a connection hung up on before the fence still hears why, and closes."""
    fn.last_word = True  # type: ignore[attr-defined]
    return fn


def is_last_word(fn: Callable[..., object]) -> bool:
    return getattr(fn, "last_word", False) is True

Setup = dict[str, Any]
"""How to build a table's core again (JSON): name, options, host, settings..."""


class Journal(Protocol):
    """Where the server writes down what it must not forget over a restart."""

    def after_commit(self, fn: Callable[..., object], *args: Any) -> None:
        """Call `fn(*args)` once everything written so far is committed (at once if
        nothing waits): how every byte to a client waits for what it tells of."""
        ...

    @property
    def holding(self) -> bool:
        """Whether sends wait for a store out of reach, with no end in sight: requests
        are then refused at once, so that nobody waits for a reply in silence."""
        ...

    def table_opened(self, table_id: int, at: float, setup: Setup) -> None: ...

    def command(self, table_id: int, at: float, command: Command) -> None: ...

    def snapshot(self, core: TableCore) -> None:
        """Keep `core` as it is now: a restart starts from here."""
        ...

    def table_closed(self, table_id: int) -> None: ...

    def session_opened(self, player_id: int, token: bytes, name: str, address: str,
                       at: float) -> None: ...

    def session_moved(self, player_id: int, token: bytes, name: str, address: str,
                      at: float) -> None:
        """A session another process held, held here from now on: its row written over
        the one its old home may have left (`session_opened` for a new player's)."""
        ...

    def session_forgotten(self, player_id: int) -> None: ...

    def session_changed(self, player_id: int, token: bytes, name: str,
                        account: int | None) -> None:
        """A session took another name, token or account (a login, a logout)."""
        ...


class NoJournal:
    """A server that keeps nothing over a restart (`--db :memory:`, tests): writes
    nothing and holds nothing back."""

    holding = False

    def after_commit(self, fn: Callable[..., object], *args: Any) -> None:
        fn(*args)

    def table_opened(self, table_id: int, at: float, setup: Setup) -> None:
        pass

    def command(self, table_id: int, at: float, command: Command) -> None:
        pass

    def snapshot(self, core: TableCore) -> None:
        pass

    def table_closed(self, table_id: int) -> None:
        pass

    def session_opened(self, player_id: int, token: bytes, name: str, address: str,
                       at: float) -> None:
        pass

    def session_moved(self, player_id: int, token: bytes, name: str, address: str,
                      at: float) -> None:
        pass

    def session_forgotten(self, player_id: int) -> None:
        pass

    def session_changed(self, player_id: int, token: bytes, name: str,
                        account: int | None) -> None:
        pass


NO_JOURNAL = NoJournal()


@dataclass
class SavedTable:
    """A table as a restart reads it back, to replay into a fresh core."""

    id: int
    opened_at: float
    setup: Setup
    commands: list[tuple[float, Command]] = field(default_factory=list)
    """Every command since `core` (all of them if there is no usable snapshot)."""
    core: TableCore | None = None
    """The core at its latest deal's start, if this code wrote it and it loads."""
