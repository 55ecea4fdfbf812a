"""What a table core asks for in return: messages, the reply, timers, a bot's decision.

The core does no I/O; a runner (`table_runner.py`) carries each effect out, in order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pisyedili.server.table.commands import MemberId

Message = dict[str, Any]


# `Reply` and `Send` are read, never changed, like every effect here, but not frozen:
# a step makes one per member, and a frozen dataclass's `__init__` (`object.__setattr__`
# per field) costs several times a plain one's.


@dataclass(slots=True)
class Reply:
    """The answer to the request being handled (`ok`, `table` or `error`).

    It always comes first among a request's effects, so a client reads the answer to
    its request before anything the request caused."""

    msg: Message


@dataclass(slots=True)
class Send:
    to: MemberId
    msg: Message


@dataclass(frozen=True, slots=True)
class SetTimer:
    """Fire `TimerFired(key)` after `delay` seconds, replacing any timer of that key."""

    key: str
    delay: float


@dataclass(frozen=True, slots=True)
class CancelTimer:
    key: str


@dataclass(frozen=True, slots=True)
class AskBot:
    """Choose a move for `seat` and answer with `BotMoved(serial, move)`.

    `events` is the seat's share of the deal's events so far, for policies that learn
    from what they saw (`observe`); `view` and `legal` are all a bot may know besides.
    """

    serial: int
    seat: int
    level: str
    view: dict[str, Any]
    legal: list[int]
    events: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Changed:
    """The table's lobby row may have changed."""


@dataclass(frozen=True, slots=True)
class MemberLeft:
    """`member` is no longer at the table (left, or gone past the grace period)."""

    member: MemberId


@dataclass(frozen=True, slots=True)
class Closed:
    """The table closed: every timer is cancelled; nothing more will come from it."""


@dataclass(frozen=True, slots=True)
class MatchOver:
    """A match ended: everything worth keeping of it, as plain data for a store.

    Plain lists and dicts (wire forms), so replayed effects compare equal and the
    store needs nothing from the engine. `players` are the seats at the match's start
    (`{"seat", "name", "kind": "human" | "bot", "level", "player"}`; "player": the
    human's session id), so someone who left midway is still named; `deals` are
    `{"deal_no", "result", "record"}`, the result and `DealRecord` in wire form. Times
    are the core's `now` (the runner's clock).
    `private`: played at a private table, so only its players may list or replay it.
    `rated`: played at a rated table, so it changes its players' ratings.

    A seat whose player left mid-match (a server bot finished it) has `left_at`, when,
    and at a rated table `forfeit` (its player ranks below every seat that played on);
    at a rated table, seats of accounts that joined from one address share a
    `shared_address` number (`SharedAddress`).
    """

    table_id: int
    rules: str
    options: dict[str, Any]
    players: list[dict[str, Any]]
    started_at: float
    finished_at: float
    totals: list[int]
    winners: list[int]
    deals: list[dict[str, Any]]
    private: bool = False
    rated: bool = False


@dataclass(frozen=True, slots=True)
class SharedAddress:
    """A rated match starts with accounts that joined from one address (`seats`: seat
    and name): the runner logs it for operators. Allowed (one household, one LAN
    party), but also how one player would rate-farm with a second account."""

    table_id: int
    address: str
    seats: list[tuple[int, str]]


Effect = (Reply | Send | SetTimer | CancelTimer | AskBot | Changed | MemberLeft | Closed
          | MatchOver | SharedAddress)
