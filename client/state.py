"""What the client knows, rebuilt from server messages alone.

`ClientState.handle` folds one server message into the state and returns the lines it
adds to the event log.  No I/O and no clock of its own (the caller passes `now`), so
the whole screen logic is testable from recorded messages.  A `table` snapshot
replaces everything about the table, which is what makes reconnection simple: the
server sends a full snapshot after a resumed `welcome`, and answers `resync` with one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from . import cards, render
from .i18n import N_, _
from .parse import Context
from .render import Fragments, Look

Message = Mapping[str, Any]


@dataclass
class ClientState:
    look: Look = field(default_factory=Look)
    name: str = ""
    player: str | None = None
    token: str | None = None
    server: str = ""
    registered: bool = False
    """Logged in to the account of `name`."""
    operator: bool = False
    lobby: dict[int, dict[str, Any]] = field(default_factory=dict)
    """The lobby page we hold, oldest first."""
    lobby_total: int | None = None
    """How many tables the whole list holds; None from a server that does not page."""
    lobby_offset: int = 0
    """The index of our page's first row in the whole list."""
    lobby_page: int = render.LOBBY_PAGE
    """Rows per page: the reference server's, or what a full page of ours held."""
    table: dict[str, Any] | None = None
    my_seat: int | None = None
    spectator: bool = False
    view: dict[str, Any] | None = None
    legal: list[dict[str, Any]] = field(default_factory=list)
    turn_seat: int | None = None
    deadline_at: float | None = None
    totals: list[Any] = field(default_factory=list)
    match_over: bool = False
    winners: list[int] = field(default_factory=list)
    hand_order: str = "suit"
    """`suit` or `rank`: how the hand is ordered, hence what its numbers mean."""
    log_entries: list[Callable[[], list[Fragments]]] = field(default_factory=list)
    """This deal's events, each drawing its lines when asked (see `deal_log`)."""
    told: int = 0
    """This deal's events counted as a snapshot's `deal_events` counts them (no
    `deal_start`, no `timeout`): what a snapshot holds past them was missed."""
    local_history: bool = False
    """The server is `pisyedili play`'s own, keeping the player's offline matches: every
    match it lists is the player's."""
    deal_pause: float | None = None
    """Seconds between a deal's end and the next: known offline, else learnt once seen."""
    offline: bool = False
    """Playing against bots on this machine: a table's invite code means nothing here."""
    next_deal_at: float | None = None
    deal_ended_at: float | None = None
    width: int = 80
    """The terminal's columns, as the app last measured them: a deal's end lays its
    score sheet out for them, as `/score` does."""
    sheet: list[dict[str, Any]] = field(default_factory=list)
    """The match's score sheet, a `sheet_row` per finished deal (docs/protocol.md, "The
    score sheet"): from the snapshot, then a row at each deal's end."""
    invites: dict[int, dict[str, Any]] = field(default_factory=dict)
    """The invitations we hold and have not answered, by id, oldest first."""

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
        return cards.sort_hand(list(self.view["hand"]), self.hand_order)

    def context(self) -> Context:
        return Context(hand=tuple(self.hand()), legal=tuple(self.legal),
                       my_turn=self.my_turn, at_table=self.at_table,
                       lobby_offset=self.lobby_offset, lobby_total=self.lobby_total,
                       lobby_page=self.lobby_page,
                       invite=max(self.invites) if self.invites else None)

    @property
    def deal_log(self) -> list[Fragments]:
        """This deal's event lines, for `/log`: drawn when asked, so a `/lang` since
        shows them in the new language, and the seats named as they were then."""
        return [line for entry in self.log_entries for line in entry()]

    def names(self) -> dict[int, str]:
        return render.seat_names(self.table, self.my_seat)

    def status(self, now: float, width: int = 80, link: str = "",
               rows: int = 0) -> list[Fragments]:
        """The status area at `now`, `width` columns wide and at most `rows` rows where
        it can be (0: no bound); `link` is the connection's state when it is not up
        (see `render.Moment.link`)."""
        if self.view is None:
            note = render.link_note(link, self.look)
            if self.table is not None:
                lines = render.table_summary(self.table, self.my_seat, self.look,
                                             show_code=not self.offline)
            else:
                shown = render.lobby_span(self.lobby_offset, len(self.lobby),
                                          self.lobby_total)
                lines = [[("class:dim", _("lobby: {tables}; /help for commands",
                                          tables=shown))]]
            if note:
                lines[0] = [*note, ("", render.sep(self.look)), *lines[0]]
            return render.fit(lines, width)
        return render.status(self.view, self.names(), self.my_seat, self.look,
                             self.moment(now, width, link, rows))

    def moment(self, now: float, width: int = 80, link: str = "",
               rows: int = 0) -> render.Moment:
        """Everything the status area needs besides the view, as of `now`."""
        next_deal = ""
        if (self.view or {}).get("phase") == "over" and not self.match_over:
            next_deal = (_("in {time}", time=render.time_left(self.next_deal_at, now))
                         if self.next_deal_at is not None else _("shortly"))
        return render.Moment(
            legal=self.legal, turn_seat=self.turn_seat,
            clock=render.time_left(self.deadline_at, now), next_deal=next_deal,
            match_over=self.match_over, winners=self.winners, link=link,
            notes=self.notes(), order=self.hand_order, width=width, rows=rows)

    def notes(self) -> dict[int, str]:
        """Seat → `away` (connection lost) and/or `bot plays` (a stand-in holds it)."""
        out: dict[int, str] = {}
        for s in (self.table or {}).get("seats", []) or []:
            if s.get("kind") != "human" or not isinstance(s.get("seat"), int):
                continue
            words = [_(w) for w, on in ((N_("away"), s.get("connected") is False),
                                        (N_("bot plays"), bool(s.get("held_by_bot")))) if on]
            if words:
                out[s["seat"]] = ", ".join(words)
        return out

    def held_by_bot(self) -> bool:
        """A stand-in bot plays for us (we timed out, or were gone too long)."""
        seats = (self.table or {}).get("seats", []) or []
        return any(s.get("seat") == self.my_seat and s.get("held_by_bot") for s in seats)

    def in_match(self) -> bool:
        """We hold a seat in a match being played: leaving hands it to a bot for good."""
        return (self.my_seat is not None and not self.spectator and not self.match_over
                and (self.table or {}).get("phase") == "playing")

    def place(self) -> str:
        """Where the player stands, for `/help` alone (`render.help_lines`): the lobby,
        watching a table, at one before or after its match, or playing in it."""
        if not self.at_table:
            return "lobby"
        if self.spectator or self.my_seat is None:
            return "watching"
        if self.in_match() and self.view is not None:
            return "playing"
        return "table"

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
        self.registered = bool(msg.get("registered"))
        self.operator = self.registered and bool(msg.get("operator"))
        self.player = msg.get("player")
        self.token = msg.get("token") or self.token
        self.name = msg.get("name") or self.name
        self.server = f"{msg.get('server', '')} {msg.get('version', '')}".strip()
        if msg.get("resumed"):
            return [[("class:good", _("reconnected: your session and seat are back"))]]
        if self.at_table:  # a fresh session (the old one expired): the table is gone
            self.left_table()
        return [[("class:good", _("connected to {server} as {name}",
                                  server=self.server or _("server"), name=self.name))]]

    def _on_account(self, msg: Message, now: float) -> list[Fragments]:
        self.player = msg.get("player", self.player)
        self.token = msg.get("token") or self.token
        self.name = msg.get("name") or self.name
        self.registered = bool(msg.get("registered"))
        self.operator = bool(msg.get("operator"))
        if not self.registered:
            return [[("class:good", _("logged out: you play on as the guest {name}",
                                      name=self.name))]]
        if self.operator:
            return [[("class:good", _("logged in as {name} (an operator)", name=self.name))]]
        return [[("class:good", _("logged in as {name}", name=self.name))]]

    def _on_leaderboard(self, msg: Message, now: float) -> list[Fragments]:
        return render.ladder_lines(msg)

    def _on_profile(self, msg: Message, now: float) -> list[Fragments]:
        return render.profile_lines(msg, self.look)

    def _on_rating_change(self, msg: Message, now: float) -> list[Fragments]:
        if (self.table or {}).get("id") == msg.get("table"):  # its seats as the log names them
            return render.rating_change_lines(msg, self.names(), self.my_seat,
                                              look=self.look)
        return render.rating_change_lines(msg, {}, None, self.name, self.look)

    def _on_announcement(self, msg: Message, now: float) -> list[Fragments]:
        return [[("class:title", _("announcement from {name}: {text}", name=msg.get("by"),
                                   text=msg.get("text")))]]

    def _on_table_closed(self, msg: Message, now: float) -> list[Fragments]:
        reason = msg.get("reason")
        if self.at_table:
            self.left_table()
        return [[("class:error", _("an operator closed your table: {reason}", reason=reason)
                  if reason else _("an operator closed your table"))]]

    def _on_table_lost(self, msg: Message, now: float) -> list[Fragments]:
        """A cluster's server let us go from our table without our asking."""
        if self.table is not None and self.table.get("id") == msg.get("table"):
            self.left_table()
        text = (_("your table was lost: the server that held it went away")
                if msg.get("cause") == "server_gone" else
                _("the server that holds your table lost touch with yours and gave your "
                  "seat up; join the table again to play on"))
        return [[("class:error", text)]]

    def _on_error(self, msg: Message, now: float) -> list[Fragments]:
        return [render.refusal(msg, self.look)]

    def _on_ok(self, msg: Message, now: float) -> list[Fragments]:
        done = msg.get("done")  # an operator's request: what the server did
        return [[("class:good", str(done))]] if done else []

    def _on_player_removed(self, msg: Message, now: float) -> list[Fragments]:
        banned = msg.get("action") == "ban"
        fields = {"name": msg.get("name"), "reason": msg.get("reason")}
        if msg.get("reason"):
            text = (_("{name} was removed by an operator (banned: {reason})", **fields)
                    if banned else
                    _("{name} was removed by an operator (kicked: {reason})", **fields))
        else:
            text = (_("{name} was removed by an operator (banned)", **fields) if banned
                    else _("{name} was removed by an operator (kicked)", **fields))
        return [[("class:error", text)]]

    def _on_muted(self, msg: Message, now: float) -> list[Fragments]:
        return [render.sanction(msg)]

    def _on_pong(self, msg: Message, now: float) -> list[Fragments]:
        return []

    def _on_lobby(self, msg: Message, now: float) -> list[Fragments]:
        self.lobby = {int(t["id"]): dict(t) for t in msg.get("tables", []) if "id" in t}
        total, offset = msg.get("total"), msg.get("offset")
        self.lobby_total = total if isinstance(total, int) else None
        self.lobby_offset = offset if isinstance(offset, int) else 0
        if self.lobby_total is not None and self.lobby and (
                self.lobby_offset + len(self.lobby) < self.lobby_total):
            self.lobby_page = len(self.lobby)  # a full page: the server's page size
        return render.lobby(self.lobby.values(), self.lobby_offset, self.lobby_total,
                            self.lobby_page, self.look)

    def _lobby_reaches_end(self) -> bool:
        return self.lobby_total is None or self.lobby_offset + len(self.lobby) >= self.lobby_total

    def _add_belongs(self, tid: int) -> bool:
        """Whether an added table belongs on the page we hold: the list is in the order
        of the tables' ids, and a new table is the newest, so it joins only a page that
        reaches the end; a table listed again (a cluster's process was out of reach for
        a while) joins the page its id falls in."""
        if not self.lobby:
            return self._lobby_reaches_end()
        if tid < min(self.lobby):
            return self.lobby_offset == 0
        if tid > max(self.lobby):
            return self._lobby_reaches_end()
        return True

    def _on_lobby_update(self, msg: Message, now: float) -> list[Fragments]:
        """A delta about any table: rows we hold change, `total` counts adds and
        removes, and an `add` joins our page where it belongs (`_add_belongs`)."""
        op, tid, summary = msg.get("op"), msg.get("table"), msg.get("summary")
        if not isinstance(tid, int):
            return []
        if op == "remove":
            self.lobby.pop(tid, None)
            if self.lobby_total is not None:
                self.lobby_total = max(self.lobby_total - 1, 0)
            return []
        if not isinstance(summary, Mapping):
            return []
        row = {**summary, "id": tid}
        if op == "add" and tid not in self.lobby:
            if self._add_belongs(tid):
                self.lobby = dict(sorted({**self.lobby, tid: row}.items()))
            if self.lobby_total is not None:
                self.lobby_total += 1
            if not self.at_table:
                return [[("class:dim", _("new table:")), *render.lobby_table(row, None, self.look)]]
        elif tid in self.lobby or self.lobby_total is None:
            is_new = tid not in self.lobby
            self.lobby[tid] = row
            if is_new and not self.at_table:
                return [[("class:dim", _("new table:")), *render.lobby_table(row, None, self.look)]]
        return []

    def _set_table(self, table: Mapping[str, Any]) -> None:
        self.table = dict(table)

    def _on_table(self, msg: Message, now: float) -> list[Fragments]:
        """A full snapshot: joining, a `resync`, or rejoining after a reconnect."""
        before = (self.table or {}).get("id"), (self.view or {}).get("deal_no")
        self._set_table(msg.get("table") or {})
        you = msg.get("you") or {}
        self.my_seat = you.get("seat")
        self.spectator = bool(you.get("spectator"))
        self.view = dict(msg["view"]) if msg.get("view") else None
        same = before == ((self.table or {}).get("id"), (self.view or {}).get("deal_no"))
        if not same:
            self.log_entries = []  # another table or deal; a resync keeps what we saw
            self.told = 0
            self.next_deal_at = self.deal_ended_at = None
        match = msg.get("match") or {}
        if isinstance(match.get("sheet"), list):
            self.sheet = [dict(r) for r in match["sheet"] if isinstance(r, Mapping)]
        elif before[0] != (self.table or {}).get("id"):
            self.sheet = []  # a server without sheets: only what this table shows from now
        self.totals = list(match.get("totals") or (self.view or {}).get("scores") or [])
        self.match_over = (self.table or {}).get("phase") == "over"
        if self.match_over and self.totals:
            low = min(self.totals)
            self.winners = [s for s, t in enumerate(self.totals) if t == low]
        self._decision(msg, now)
        accepted = _invite_to(self.invites, (self.table or {}).get("id"))
        if accepted is not None:
            self.invites.pop(accepted)
        lines = render.table_summary(self.table or {}, self.my_seat, self.look,
                                     show_code=not self.offline)
        if (self.table or {}).get("phase") == "waiting" and (self.table or {}).get("quick"):
            lines.append([("class:dim", "  " + render.quick_note(self.table or {}))])
        return lines + self._catch_up(msg.get("deal_events"), same)

    def _catch_up(self, events: object, same: bool) -> list[Fragments]:
        """A snapshot's deal so far (`deal_events`): what the log has not told yet, all
        of it after `play --continue` or a fresh start, what happened while the link was
        down after a resume. Kept for `/log` as if told by updates."""
        if not isinstance(events, Sequence) or self.view is None:
            return []
        missed = [e for e in events[self.told if same else 0:] if isinstance(e, Mapping)]
        self.told = len(events)
        if not missed:
            return []
        seen = self.table, self.my_seat
        rules = self.rules()[0]
        lines: list[Fragments] = []
        if same:
            lines.append([("class:title", _("while you were away:"))])
        elif isinstance(self.view.get("deal_no"), int):
            start = {"event": "deal_start", "deal_no": self.view["deal_no"],
                     "dealer": self.view.get("dealer")}
            lines += _event_lines(start, seen, self.look, rules)
            self.log_entries.append(partial(_event_lines, start, seen, self.look, rules))
        for e in missed:
            entry = (partial(_result_lines, e, list(self.totals), seen, self.look)
                     if e.get("event") == "deal_end"
                     else partial(_event_lines, e, seen, self.look, rules))
            shown = [line for line in entry() if line]
            if shown:  # (a kind this client does not draw has no line)
                lines += shown
                self.log_entries.append(entry)
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

    def _on_update(self, msg: Message, now: float) -> list[Fragments]:
        """One step of the deal: its events as log lines, in order, then the view after."""
        if isinstance(msg.get("view"), Mapping):
            self.view = dict(msg["view"])
            if self.view.get("phase") == "over":
                self.totals = list(self.view.get("scores") or self.totals)
        self._decision(msg, now)
        names, rules = self.names(), self.rules()[0]
        seen = self.table, self.my_seat  # who sat where, for the log to name them later
        lines: list[Fragments] = []
        for e in msg.get("events") or []:
            if not isinstance(e, Mapping):
                continue
            kind = e.get("event")
            if kind not in ("deal_start", "timeout"):
                self.told += 1
            if kind == "deal_end":
                self._add_row(e)
                result = partial(_result_lines, e, list(self.totals), seen, self.look,
                                 list(self.sheet), lambda: self.width)
                lines += result()
                self.log_entries.append(result)
                self.deal_ended_at = now
                if self.deal_pause is not None:
                    self.next_deal_at = now + self.deal_pause
            elif kind == "match_end":
                self.totals = list(e.get("totals") or self.totals)
                self.match_over = True
                self.next_deal_at = None
                self.winners = [w for w in e.get("winners") or [] if isinstance(w, int)]
                lines += render.match_result(self.totals, self.winners, names,
                                             can_rematch=not self.spectator)
            else:
                if kind == "deal_start":
                    self._deal_started(now, e.get("deal_no"))
                line = render.event(e, names, self.look, rules)
                if line:
                    lines.append(line)
                    self.log_entries.append(partial(_event_lines, e, seen, self.look, rules))
        return lines

    def _add_row(self, e: Mapping[str, Any]) -> None:
        """A deal's end adds its row to the sheet: its result, with the deal's number and
        the totals after it from the update's view (docs/protocol.md)."""
        result, view = e.get("result"), self.view or {}
        if not isinstance(result, Mapping):
            return
        self.sheet.append({"deal_no": view.get("deal_no"), "reason": result.get("reason"),
                           "winner": result.get("winner"),
                           "multiplier": result.get("multiplier"),
                           "points": list(result.get("points") or []),
                           "totals": list(view.get("scores") or self.totals)})

    def _deal_started(self, now: float, deal_no: object = None) -> None:
        if deal_no == 1:
            self.sheet = []  # a rematch: a new match, a new sheet
        if self.deal_ended_at is not None and not self.match_over:
            if self.deal_pause is None:
                self.deal_pause = round(now - self.deal_ended_at)
        self.match_over = False  # a rematch's first deal
        self.winners = []
        self.log_entries = []
        self.told = 0
        self.deal_ended_at = self.next_deal_at = None

    def _decision(self, msg: Message, now: float) -> None:
        """Who acts now, our moves if it is us, and the time left: an `update` and a
        `table` snapshot carry them the same way."""
        self.turn_seat = (self.view or {}).get("turn")
        moves = msg.get("moves")
        self.legal = ([dict(m) for m in moves if isinstance(m, Mapping)]
                      if isinstance(moves, Sequence) else [])
        deadline = msg.get("deadline")
        self.deadline_at = None
        if isinstance(deadline, int | float) and not isinstance(deadline, bool) \
                and self.turn_seat is not None:
            self.deadline_at = now + deadline

    def _on_chat(self, msg: Message, now: float) -> list[Fragments]:
        who = str(msg.get("name", "?"))
        if msg.get("spectator"):
            who += _(" (watching)")
        scope = "" if msg.get("scope") != "lobby" or self.at_table else _("[lobby] ")
        return [[("class:dim", scope), ("class:me", f"{who}: "), ("", str(msg.get("text", "")))]]

    def _on_invited(self, msg: Message, now: float) -> list[Fragments]:
        """An invitation: kept until answered or ended, and said with how to answer."""
        invite = msg.get("invite")
        if not isinstance(invite, int):
            return []
        self.invites[invite] = dict(msg)
        return render.invitation(msg)

    def _on_invite_ended(self, msg: Message, now: float) -> list[Fragments]:
        """One we hold ended (no `name`), or one we sent was answered or ended."""
        invite = msg.get("invite")
        held = self.invites.pop(invite, None) if isinstance(invite, int) \
            and "name" not in msg else None
        return [render.invite_ended(msg, held)]

    def _on_history(self, msg: Message, now: float) -> list[Fragments]:
        return render.history(msg, self.local_history)

    def _on_rematch(self, msg: Message, now: float) -> list[Fragments]:
        names = self.names()
        agreed = [names.get(s, render.seat_label(s)) for s in msg.get("agreed") or []
                  if isinstance(s, int)]
        return [[("", _("rematch: {names} agreed", names=", ".join(agreed)) if agreed
                  else _("rematch: nobody has agreed yet"))]]

    def left_table(self) -> None:
        """After our `leave_table` was accepted."""
        self.table = None
        self.view = None
        self.my_seat = None
        self.spectator = False
        self.legal = []
        self.turn_seat = None
        self.deadline_at = None
        self.log_entries = []
        self.told = 0
        self.match_over = False
        self.next_deal_at = self.deal_ended_at = None
        self.sheet = []

    def sheet_lines(self, width: int = 80) -> list[Fragments]:
        """`/score`: the score sheet of our table's match."""
        if not self.at_table:
            return [[("class:dim", _("You are at no table: /score shows the score sheet of "
                                     "the match at yours."))]]
        return render.score_sheet(self.sheet, self.names(), self.look, width)


def _invite_to(invites: Mapping[int, Mapping[str, Any]], table: Any) -> int | None:
    """The invitation we hold to `table`, which joining it (an accept) answers."""
    return next((i for i, m in invites.items() if (m.get("table") or {}).get("id") == table),
                None)


Seen = tuple[Mapping[str, Any] | None, int | None]
"""The table and our seat when an event came: who the log names, drawn later."""


def _event_lines(e: Mapping[str, Any], seen: Seen, look: Look,
                 rules: str | None) -> list[Fragments]:
    return [render.event(e, render.seat_names(*seen), look, rules)]


def _result_lines(e: Mapping[str, Any], totals: list[Any], seen: Seen, look: Look,
                  sheet: list[dict[str, Any]], width: Callable[[], int]) -> list[Fragments]:
    """A deal's end: its result, then the sheet as it stood then, laid out for the
    terminal's width when drawn (`/log` draws it again, perhaps in another width)."""
    names = render.seat_names(*seen)
    return [*render.deal_result(e.get("result") or {}, totals, names, look),
            *render.score_sheet(sheet, names, look, width())]
