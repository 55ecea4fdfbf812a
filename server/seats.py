"""Seats of a table: who sits where, and who actually decides for the seat.

A seat is `open`, `human` or `bot`. A human seat may be *held* by a stand-in bot
(issue 4) while its player is idle or gone; the seat stays the player's, and the
player takes it back by showing life. Kept apart from the table so the table
module holds the flow of a match, not bookkeeping.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pisyedili.server.participant import Participant

SeatKind = Literal["open", "human", "bot"]
BOT_LEVELS = ("easy", "medium", "hard")

# Why a stand-in bot holds a human seat.
HeldFor = Literal["idle", "disconnected"]


def wire_player_id(player_id: str) -> int | str:
    """Player ids are integers on the wire (protocol schema); sessions hold them as text."""
    return int(player_id) if player_id.isdecimal() else player_id


@dataclass
class Seat:
    index: int
    kind: SeatKind = "open"
    player: Participant | None = None
    level: str | None = None  # bot seats only
    ready: bool = False
    held: HeldFor | None = None  # a stand-in bot plays for the absent human
    timeouts: int = 0  # turn-timer expiries in a row (issue 4)
    rematch: bool | None = None  # None: not answered yet

    @property
    def bot_decides(self) -> bool:
        """True when the server chooses this seat's moves."""
        return self.kind == "bot" or self.held is not None

    def clear(self) -> None:
        self.kind = "open"
        self.player = None
        self.level = None
        self.ready = False
        self.held = None
        self.timeouts = 0
        self.rematch = None

    def seat_human(self, p: Participant) -> None:
        self.clear()
        self.kind = "human"
        self.player = p

    def seat_bot(self, level: str) -> None:
        self.clear()
        self.kind = "bot"
        self.level = level
        self.ready = True  # bots are always ready

    def to_wire(self) -> dict[str, Any]:
        """The seat as every member sees it (names only; never a player id or token)."""
        d: dict[str, Any] = {
            "seat": self.index,
            "kind": self.kind,
            "ready": self.ready,
            "connected": True,
        }
        if self.kind == "human" and self.player is not None:
            d["name"] = self.player.name
            d["player"] = wire_player_id(self.player.player_id)
            d["connected"] = self.player.connected
            if self.held is not None:
                d["held_by_bot"] = self.held
        elif self.kind == "bot":
            d["name"] = f"bot ({self.level})"
            d["level"] = self.level
        if self.rematch is not None:
            d["rematch"] = self.rematch
        return d
