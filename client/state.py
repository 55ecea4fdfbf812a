"""What the client knows, rebuilt from server messages alone.

`ClientState.handle` folds one server message into the state and returns the lines it
adds to the event log.  No I/O and no clock of its own (the caller passes `now`), so
the whole screen logic is testable from recorded messages.  A `table` snapshot
replaces everything about the table, which is what makes reconnection simple: the
server sends a full snapshot after `hello` with the resume token (issue 4).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import cards, render
from .parse import Context
from .render import Fragments, Look

Message = Mapping[str, Any]

_DEADLINE_IS_EPOCH = 1e9  # a `deadline` this large is server wall time, not seconds left


@dataclass
class ClientState:
    look: Look = field(default_factory=Look)
    name: str = ""
    player: str | None = None
    token: str | None = None
    server: str = ""
    lobby: dict[int, dict[str, Any]] = field(default_factory=dict)
    table: dict[str, Any] | None = None
    my_seat: int | None = None
    spectator: bool = False
    view: dict[str, Any] | None = None
    legal: list[dict[str, Any]] = field(default_factory=list)
    turn_seat: int | None = None
    deadline_at: float | None = None
    totals: list[Any] = field(default_factory=list)
    match_over: bool = False

    # ------------------------------------------------------------------ queries

    @property
    def at_table(self) -> bool:
        return self.table is not None

    @property
    def my_turn(self) -> bool:
        return bool(self.legal)

    def hand(self) -> list[str]:
        """Our hand in display order, as the parser and the status line number it."""
        if not self.view or self.view.get("hand") is None:
            return []
        return cards.sort_hand(list(self.view["hand"]))

    def context(self) -> Context:
        return Context(hand=tuple(self.hand()), legal=tuple(self.legal),
                       my_turn=self.my_turn, at_table=self.at_table)

    def names(self) -> dict[int, str]:
        return render.seat_names(self.table, self.my_seat)

    def status(self, now: float) -> list[Fragments]:
        if self.view is None:
            if self.table is not None:
                return render.table_summary(self.table, self.my_seat, self.look)
            return [[("class:dim", f"lobby: {len(self.lobby)} tables; /help for commands")]]
        return render.status(self.view, self.names(), self.my_seat, self.look, self.legal,
                             self.turn_seat, render.time_left(self.deadline_at, now))

    def rules(self) -> tuple[str | None, dict[str, Any] | None]:
        t = self.table or {}
        opts = t.get("options") or (self.view or {}).get("options")
        return t.get("rules") or (self.view or {}).get("rules"), opts

    # ------------------------------------------------------------------ updates

    def handle(self, msg: Message, now: float) -> list[Fragments]:
        """Fold one server message in; return the log lines it produces."""
        kind = msg.get("type")
        handler = getattr(self, f"_on_{kind}", None)
        if handler is None:
            return []
        lines: list[Fragments] = handler(msg, now)
        return lines

    def _on_welcome(self, msg: Message, now: float) -> list[Fragments]:
        self.player = msg.get("player")
        self.token = msg.get("token") or self.token
        self.name = msg.get("name") or self.name
        self.server = f"{msg.get('server', '')} {msg.get('version', '')}".strip()
        if msg.get("resumed"):
            return [[("class:good", "reconnected: your session and seat are back")]]
        if self.at_table:  # a fresh session (the old one expired): the table is gone
            self.left_table()
        return [[("class:good", f"connected to {self.server or 'server'} as {self.name}")]]

    def _on_error(self, msg: Message, now: float) -> list[Fragments]:
        text = str(msg.get("message") or msg.get("code") or "error")
        rule = msg.get("rule")
        line: Fragments = [("class:error", text)]
        if rule:
            line.append(("class:error", f" ({rule})"))
        code = msg.get("code")
        if code:
            line.append(("class:dim", f" [{code}]"))
        return [line]

    def _on_ok(self, msg: Message, now: float) -> list[Fragments]:
        return []

    def _on_pong(self, msg: Message, now: float) -> list[Fragments]:
        return []

    def _on_lobby(self, msg: Message, now: float) -> list[Fragments]:
        self.lobby = {int(t["id"]): dict(t) for t in msg.get("tables", []) if "id" in t}
        return render.lobby(self.lobby.values())

    def _on_lobby_update(self, msg: Message, now: float) -> list[Fragments]:
        op, tid, summary = msg.get("op"), msg.get("table"), msg.get("summary")
        if not isinstance(tid, int):
            return []
        if op == "remove":
            self.lobby.pop(tid, None)
            return []
        if isinstance(summary, Mapping):
            is_new = tid not in self.lobby
            self.lobby[tid] = {**summary, "id": tid}
            if is_new and not self.at_table:
                return [[("class:dim", "new table:"), *render.lobby_table(self.lobby[tid])]]
        return []

    def _set_table(self, table: Mapping[str, Any]) -> None:
        self.table = dict(table)

    def _on_table(self, msg: Message, now: float) -> list[Fragments]:
        """A full snapshot: joining, rejoining after a reconnect, or a new deal."""
        self._set_table(msg.get("table") or {})
        you = msg.get("you") or {}
        self.my_seat = you.get("seat")
        self.spectator = bool(you.get("spectator"))
        self.view = dict(msg["view"]) if msg.get("view") else None
        match = msg.get("match") or {}
        self.totals = list(match.get("totals") or (self.view or {}).get("scores") or [])
        self.legal = []
        self.turn_seat = (self.view or {}).get("turn")
        self.deadline_at = None
        self.match_over = (self.table or {}).get("phase") == "over"
        lines = render.table_summary(self.table or {}, self.my_seat, self.look)
        if isinstance(msg.get("turn"), Mapping):  # the pending prompt rides in the snapshot
            self._on_turn(msg["turn"], now)
        return lines

    def _on_table_update(self, msg: Message, now: float) -> list[Fragments]:
        before = self.table
        self._set_table(msg.get("table") or {})
        # Our seat may have changed (sit, stand, a bot taking over): follow the seat list.
        if self.player is not None and self.table is not None:
            for s in self.table.get("seats", []) or []:
                if s.get("player") == self.player:
                    self.my_seat = s.get("seat")
        return render.seat_changes(before, self.table or {}, self.my_seat)

    def _on_event(self, msg: Message, now: float) -> list[Fragments]:
        if msg.get("view"):
            self.view = dict(msg["view"])
            turn = self.view.get("turn")
            if turn != self.my_seat or turn is None:
                self.legal = []
            if turn != self.turn_seat:
                self.deadline_at = None
            self.turn_seat = turn
        e = msg.get("event")
        if not isinstance(e, Mapping):
            return []
        line = render.event(e, self.names(), self.look, self.rules()[0])
        return [line] if line else []

    def _on_turn(self, msg: Message, now: float) -> list[Fragments]:
        seat = msg.get("seat")
        self.turn_seat = seat if isinstance(seat, int) else self.turn_seat
        deadline = msg.get("deadline")
        if isinstance(deadline, int | float) and not isinstance(deadline, bool):
            self.deadline_at = now + deadline if deadline < _DEADLINE_IS_EPOCH else None
        moves = msg.get("moves")
        if seat == self.my_seat and isinstance(moves, Sequence):
            self.legal = [dict(m) for m in moves if isinstance(m, Mapping)]
        return []

    def _on_clock(self, msg: Message, now: float) -> list[Fragments]:
        """Another seat's timed turn began: count it down too."""
        seat, deadline = msg.get("seat"), msg.get("deadline")
        if isinstance(seat, int) and isinstance(deadline, int | float) \
                and not isinstance(deadline, bool):
            self.turn_seat = seat
            self.deadline_at = now + deadline
        return []

    def _on_deal_end(self, msg: Message, now: float) -> list[Fragments]:
        result = msg.get("result") or {}
        self.totals = list(msg.get("totals") or [])
        self.legal = []
        self.deadline_at = None
        if self.view is not None:
            self.view["result"] = result
            self.view["scores"] = self.totals
            self.view["phase"] = "over"
        return render.deal_result(result, self.totals, self.names(), self.look)

    def _on_match_end(self, msg: Message, now: float) -> list[Fragments]:
        self.totals = list(msg.get("totals") or self.totals)
        self.match_over = True
        self.legal = []
        winners = [w for w in msg.get("winners") or [] if isinstance(w, int)]
        return render.match_result(self.totals, winners, self.names(),
                                   can_rematch=not self.spectator)

    def _on_chat(self, msg: Message, now: float) -> list[Fragments]:
        who = str(msg.get("name", "?"))
        if msg.get("spectator"):
            who += " (watching)"
        scope = "" if msg.get("scope") != "lobby" or self.at_table else "[lobby] "
        return [[("class:dim", scope), ("class:me", f"{who}: "), ("", str(msg.get("text", "")))]]

    def _on_rematch(self, msg: Message, now: float) -> list[Fragments]:
        names = self.names()
        agreed = [names.get(s, f"seat {s + 1}") for s in msg.get("agreed") or []
                  if isinstance(s, int)]
        return [[("", "rematch: " + (", ".join(agreed) + " agreed" if agreed
                                     else "nobody has agreed yet"))]]

    def _on_timeout(self, msg: Message, now: float) -> list[Fragments]:
        who = self.names().get(msg.get("seat", -1), "a seat")
        if msg.get("seat") == self.my_seat:
            self.legal = []
        return [[("class:warn", f"{who} ran out of time; the server moves for "
                               f"{'you' if who == 'you' else 'them'}")]]

    def left_table(self) -> None:
        """After our `leave_table` was accepted."""
        self.table = None
        self.view = None
        self.my_seat = None
        self.spectator = False
        self.legal = []
        self.turn_seat = None
        self.deadline_at = None
