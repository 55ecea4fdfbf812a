"""One table's whole life as a state machine: commands in, effects out, no I/O.

In the manner of h11's `Connection`: `TableCore.handle(command, now)` changes the table
and returns what should happen because of it (messages to members, the reply to a
request, timers to set or cancel, a bot to ask), and a runner carries that out. The core
reads no clock (`now` is an argument), starts no thread (a bot's decision is asked for
with `AskBot` and comes back as a `BotMoved` command) and draws no randomness (a match's
shuffle seed arrives in the command that starts it; the invite code in the constructor).
So the commands it was given are the table's history: replayed into a fresh core they
give the same effects, which is what lets a table be stored and rebuilt.

Hidden information is kept in here: every recipient gets the engine's `events_for` and
`view` for its own seat (spectators: seat None), never a shared dict that holds more.

Protocol 2's fan-out: each step of a deal (a move, a deal's start, a decision handed to
or back from a stand-in bot) becomes one `update` per member: the step's events, the
member's view after all of them, and the legal moves for the member whose decision it
now is. A request's reply comes before any message it causes.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, cast

from pisyedili.protocol.errors import ProtocolError
from pisyedili.protocol.limits import MAX_CHAT
from pisyedili.protocol.shapes import BOT_LEVELS, SHEET_ROWS
from pisyedili.protocol.types import StrT
from pisyedili.server import rules as engine
from pisyedili.server.table.commands import (
    REQUESTS,
    AddBot,
    BotMoved,
    Chat,
    Command,
    Disconnected,
    Join,
    Leave,
    MemberId,
    Play,
    Ready,
    Reconnected,
    Rematch,
    RemoveBot,
    Restored,
    Resync,
    Seen,
    Sit,
    Stand,
    Start,
    TimerFired,
)
from pisyedili.server.table.default_move import default_move
from pisyedili.server.table.effects import (
    AskBot,
    CancelTimer,
    Changed,
    Closed,
    Effect,
    MatchOver,
    MemberLeft,
    Message,
    Reply,
    Send,
    SetTimer,
    SharedAddress,
)
from pisyedili.server.table.seats import Seat, bot_seat_name, wire_player_id

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: read aloud to friends
CODE_LENGTH = 6
SPECTATOR_NAMES_SHOWN = 50
SNAPSHOT_EVENTS = 256
"""The most of a deal's events a snapshot carries (its last ones): as many as an update may."""

TURN_TIMER = "turn"
BOT_TIMER = "bot"
DEAL_TIMER = "deal"
GRACE_TIMER = "grace:"  # + the member's id
UNKNOWN_ADDRESSES = frozenset({"", "?", "elsewhere"})
"""`Join.address` values that name no address (a session of another process, say)."""


GUEST_REFUSED = "a rated table seats registered players only: log in, or watch"
"""Why a guest gets no seat at a rated table (`account_required`)."""

BOT_REFUSED = "this table's host seats no bot accounts: watch it, or find another table"
"""Why a bot account gets no seat at a table without `bot_accounts`
(`bot_account_refused`)."""


def invite_code(rng: random.Random) -> str:
    """A fresh invite code (drawn by the caller's rng: the core draws nothing)."""
    return "".join(rng.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


class TableError(ProtocolError):
    """A refused table command: a registered protocol error code; nothing changed."""


@dataclass(frozen=True)
class TableSettings:
    """Server-wide table timings; `turn_seconds` may be overridden per table.

    `turn_seconds` 0 disables the turn timer (a human may think forever; a
    disconnected one is still replaced after `grace_seconds`).
    """

    turn_seconds: float = 60.0
    grace_seconds: float = 60.0
    bot_delay: float = 0.8
    """Pause before a bot (or stand-in) moves, so people can follow; 0 in tests."""
    deal_pause: float = 4.0
    """Pause between a deal's end and the next deal, to read the scores."""
    max_timeouts_before_bot: int = 2
    """Turn-timer expiries in a row after which a stand-in bot holds the seat."""
    stand_in_level: str = "medium"
    """Level of the bots that hold seats for idle, disconnected or departed players."""
    chat_max_chars: int = MAX_CHAT
    bot_thread: bool = False
    """For the runner: search `hard` bots' moves in the reactor's thread pool
    (production: True); False searches inline, which tests with `task.Clock` need."""
    hard_budget_s: float | None = None
    """For the runner: search time per `hard` decision; None: the bots' own default."""

    def __post_init__(self) -> None:
        if self.turn_seconds < 0 or self.grace_seconds < 0:
            raise ValueError("turn_seconds and grace_seconds must not be negative")
        if self.bot_delay < 0 or self.deal_pause < 0:
            raise ValueError("bot_delay and deal_pause must not be negative")
        if self.max_timeouts_before_bot < 1:
            raise ValueError("max_timeouts_before_bot must be at least 1")
        if self.stand_in_level not in BOT_LEVELS:
            raise ValueError(f"stand_in_level must be one of {BOT_LEVELS}")

    def __reduce__(self) -> tuple[Any, ...]:
        return engine.by_constructor(self)


@dataclass(slots=True)
class Member:
    name: str
    connected: bool = True
    gone: bool = False
    """The grace period ran out while away: the member leaves once no match holds it."""
    address: str = ""
    """The address key its session was opened from (`Join.address`)."""
    bot: bool = False
    """Logged in to a bot's account (`Join.bot`): its seat is shown as a bot's."""

    def __reduce__(self) -> tuple[Any, ...]:
        return engine.by_constructor(self)


@dataclass
class _Step:
    """What one `handle` call produces; the reply is put first when done."""

    now: float
    reply: Message | None = None
    out: list[Effect] = field(default_factory=list)


class TablePhase(StrEnum):
    """Where a table is between matches: its values are the wire's `table.phase`."""

    WAITING = "waiting"
    """No match yet: seats fill until the host starts one."""
    PLAYING = "playing"
    OVER = "over"
    """The match ended: a rematch starts when every seated player agrees."""


class TableCore:
    """A table of 2-6 seats and its members, playing one match at a time."""

    def __init__(self, table_id: int, name: str, options: engine.Options, *, private: bool,
                 host: MemberId, settings: TableSettings, code: str | None = None,
                 rated: bool = False, deck: tuple[int, ...] | None = None,
                 bot_accounts: bool = True) -> None:
        if private and code is None:
            raise ValueError("a private table needs an invite code")
        if deck is not None and (rated or not private):
            raise ValueError("a stacked deck's table is private and never rated")
        self.id = table_id
        self.name = name
        self.options = options
        self.private = private
        self.rated = rated
        """Its matches change ratings (`ratings.py`), so it seats registered members only."""
        self.bot_accounts = bot_accounts
        """Bot accounts may sit (`create_table.bot_accounts`); False: they only watch."""
        self.named_for: str | None = None
        """The host's name a table opened without a name was named after (its `name` is
        then that name's English "…'s table"): each client words it in its language."""
        self.quick = False
        """Opened by `play_now` (`server/table/pairing.py`): its match starts by itself
        once every seat is filled and ready."""
        self.bots_at: float | None = None
        """A quick table's: when bots take the seats still open (the pairing arms the
        timer that seats them; the core only shows the time left)."""
        self.bot_level = "medium"
        """The level of those bots."""
        self.deck = deck
        """A stacked deck (a test server's, docs/protocol.md "Stacked decks"): every deal
        of its matches is dealt from this order; None: shuffled."""
        self.code = code if private else None
        self.settings = settings
        self.phase = TablePhase.WAITING
        self.closed = False
        self.deals_begun = 0
        """Deals dealt at this table, rematches included: a restart's snapshot of the
        core is taken whenever it grows (a deal's start is where the history is long)."""
        self._host: MemberId | None = host
        self._seats = [Seat(i) for i in range(options.players)]
        self._members: dict[MemberId, Member] = {}
        self._spectators: list[MemberId] = []  # in arrival order
        self._match: engine.Match | None = None
        self._match_start: tuple[float, list[dict[str, Any]]] = (0.0, [])  # for MatchOver
        self._left: dict[int, float] = {}
        """Seats whose player left during the match in play, and when: by leaving, or
        by staying away past the grace period (until they come back)."""
        self._deal_events: list[engine.Event] = []  # this deal's events, unmasked
        self._serial = 0  # bumps on every prompt: a late bot answer is recognised
        self._deadline: float | None = None  # when the seat to act runs out of time
        self._timers: dict[str, float] = {}  # key -> when it fires
        self._last_at: float | None = None
        """The time of the last command handled: nobody serves the table from then until
        a restart's `Restored`, and its clock stands still meanwhile."""
        self._step = _Step(0.0)
        self._handlers: dict[type, Callable[[Any], None]] = {
            Join: self._join, Leave: self._leave, Sit: self._sit, Stand: self._stand,
            AddBot: self._add_bot, RemoveBot: self._remove_bot, Ready: self._ready,
            Start: self._start, Play: self._play, Chat: self._chat, Rematch: self._rematch,
            Resync: self._resync, Seen: self._seen, Disconnected: self._disconnected,
            Reconnected: self._reconnected, TimerFired: self._timer, BotMoved: self._bot_moved,
            Restored: self._restored,
        }

    def __reduce__(self) -> tuple[Any, ...]:
        """A snapshot (the journal's pickle): the constructor's call, then the state.
        Compiled by mypyc, the class makes an instance only through `__init__`; the
        handlers and the step are what the constructor makes anew."""
        state = cast(dict[str, Any], self.__getstate__())
        return (_unpickled, (
            (self.id, self.name, self.options, self.private, self.settings, self.code),
            {k: v for k, v in state.items() if k not in _MADE_BY_INIT}))

    # -- the one entry point -------------------------------------------------------------

    def handle(self, command: Command, now: float) -> list[Effect]:
        """Apply `command` at time `now`; the effects to carry out, the reply first.

        A refused request changes nothing but the requester's presence and answers
        with an `error`; it never raises. Commands about a closed table change nothing,
        and a request about one is answered `no_such_table`.
        """
        self._step = step = _Step(now)
        if self.closed:
            if isinstance(command, REQUESTS):  # every request still gets its one reply
                step.reply = TableError("no_such_table", "this table is closed").to_message()
        else:
            try:
                self._handlers[type(command)](command)
            except TableError as e:
                step.reply = e.to_message()
        self._last_at = now
        out = step.out
        if step.reply is not None:
            out.insert(0, Reply(step.reply))
        # The step keeps only its time: its messages are the caller's now, and go when
        # it is done with them, while they are still in the cache (kept here until the
        # table's next command, they would be freed cold, out of the cache).
        step.reply, step.out = None, []
        return out

    # -- reading ---------------------------------------------------------------------------

    @property
    def match(self) -> engine.Match | None:
        """The engine `Match` in play (None before the first start). Read-only use."""
        return self._match

    @property
    def host(self) -> MemberId | None:
        return self._host

    @property
    def timers(self) -> dict[str, float]:
        """The timers armed now: key -> the time it fires (a restart re-arms these)."""
        return dict(self._timers)

    def members(self) -> list[MemberId]:
        return list(self._members)

    def is_member(self, member: MemberId) -> bool:
        return member in self._members

    def seat_of(self, member: MemberId) -> int | None:
        for seat in self._seats:
            if seat.kind == "human" and seat.member == member:
                return seat.index
        return None

    def summary(self) -> dict[str, Any]:
        """The lobby row (never the invite code)."""
        taken = sum(1 for s in self._seats if s.kind != "open")
        row: dict[str, Any] = {
            "id": self.id, "name": self.name, "rules": self.options.rules,
            "options": self._options_wire(), "seats": len(self._seats), "taken": taken,
            "free": len(self._seats) - taken,
            "bots": sum(1 for s in self._seats if s.kind == "bot" or self._bot_account(s)),
            "phase": self.phase.value, "private": self.private,
            "spectators": len(self._spectators),
        }
        if not self.bot_accounts:
            row["bot_accounts"] = False
        if self.named_for is not None:
            row["named_for"] = self.named_for
        if self.quick:
            row["quick"] = True
        host = self._members.get(self._host) if self._host is not None else None
        if host is not None:
            row["host"] = host.name
        return row

    def info(self, for_member: bool = True) -> dict[str, Any]:
        """The `table_info` every member sees (the invite code: members only)."""
        host = self._members.get(self._host) if self._host is not None else None
        info: dict[str, Any] = {
            "id": self.id, "name": self.name, "rules": self.options.rules,
            "options": self._options_wire(),
            "host": wire_player_id(self._host) if host is not None and self._host else None,
            "host_name": host.name if host is not None else None,
            "phase": self.phase.value, "private": self.private,
            "seats": [self._seat_wire(s) for s in self._seats],
            # Names of the first spectators only: the message goes to every member on
            # every change, so its size must not grow with a crowd.
            "spectators": [self._members[m].name
                           for m in self._spectators[:SPECTATOR_NAMES_SHOWN]],
            "spectator_count": len(self._spectators),
        }
        if self.code is not None and for_member:
            info["code"] = self.code
        if self.rated:
            info["rated"] = True
        if not self.bot_accounts:
            info["bot_accounts"] = False
        if self.named_for is not None:
            info["named_for"] = self.named_for
        if self.quick:
            info["quick"] = True
            if self.bots_at is not None and self.phase == TablePhase.WAITING \
                    and any(s.kind == "open" for s in self._seats):
                info["bots_in"] = max(0, math.ceil(self.bots_at - self._step.now))
        return info

    def open_seats(self) -> list[int]:
        """The seats nobody holds, in seat order."""
        return [s.index for s in self._seats if s.kind == "open"]

    def startable(self) -> bool:
        """Whether the host's `start` would start a match now: waiting, every seat
        filled, every human ready (the host's `start` being its own ready)."""
        return self.phase == TablePhase.WAITING and self._host is not None and all(
            s.kind == "bot" or (s.kind == "human" and (s.ready or s.member == self._host))
            for s in self._seats)

    def snapshot(self, member: MemberId) -> Message:
        """The full `table` message for `member` (lichess's gameFull): all it may know."""
        seat = self.seat_of(member)
        msg: Message = {
            "type": "table", "table": self.info(),
            "you": {"seat": seat, "spectator": seat is None, "host": member == self._host},
            "view": None, "match": None,
        }
        if self._match is not None:
            msg["view"] = engine.view(self._match, seat)
            msg["match"] = {"deal_no": self._match.deal_no, "totals": self._totals(),
                            "sheet": self.sheet()}
            # The deal so far, masked for this seat like its updates were: a client that
            # lost its state (a reload, a resume) can show the log again.
            msg["deal_events"] = engine.events_for(self._deal_events[-SNAPSHOT_EVENTS:], seat)
            deciding = self._deciding()
            self._add_decision(msg, seat, deciding, self._time_left(deciding))
        return msg

    def sheet(self) -> list[dict[str, Any]]:
        """The score sheet of the match in play or just over (`sheet_row`s), derived
        from its deals' results: a table rebuilt from its commands shows the same."""
        if self._match is None:
            return []
        return engine.sheet_rows((r.to_wire() for r in self._match.results), SHEET_ROWS)

    def _seat_wire(self, seat: Seat) -> dict[str, Any]:
        m = self._members.get(seat.member) if seat.member is not None else None
        return seat.to_wire(m.name if m else None, m.connected if m else False,
                            m.bot if m else False)

    def _bot_account(self, seat: Seat) -> bool:
        """Whether a bot account's program holds `seat` (a human seat, to the core)."""
        m = self._members.get(seat.member) if seat.member is not None else None
        return seat.kind == "human" and m is not None and m.bot

    def _options_wire(self) -> dict[str, Any]:
        opts = self.options.to_wire()
        opts["turn_seconds"] = int(self.settings.turn_seconds)
        return opts

    def _totals(self) -> list[int]:
        assert self._match is not None
        return [int(t) for t in self._match.totals]

    def _deciding(self) -> int | None:
        """The human seat whose decision the deal waits for now, if any."""
        if self.phase != TablePhase.PLAYING or self._match is None:
            return None
        to_act = self._match.deal.to_act
        if to_act is None or self._seats[to_act].bot_decides:
            return None
        return to_act

    def _add_decision(self, msg: Message, seat: int | None, deciding: int | None,
                      deadline: float | None) -> None:
        """`moves` for `seat` if it is `deciding`; `deadline` (`_time_left(deciding)`)
        for everyone. A fan-out reads both once for all its members."""
        assert self._match is not None
        if seat is not None and seat == deciding:
            msg["moves"] = [engine.move_to_wire(m)
                            for m in engine.legal_moves(self._match.deal, seat)]
        if deadline is not None:
            msg["deadline"] = deadline

    def _time_left(self, deciding: int | None) -> float | None:
        """The seconds the decision of seat `deciding` has left, if it is timed."""
        if self._deadline is None or deciding is None:
            return None
        return round(max(0.0, self._deadline - self._step.now), 3)

    # -- effects ---------------------------------------------------------------------------

    def _reply_ok(self) -> None:
        self._step.reply = {"type": "ok"}

    def _send(self, member: MemberId, msg: Message) -> None:
        self._step.out.append(Send(member, msg))

    def _send_all(self, msg: Message) -> None:
        for member in self._members:
            self._send(member, msg)

    def _set_timer(self, key: str, delay: float) -> None:
        self._timers[key] = self._step.now + delay
        self._step.out.append(SetTimer(key, delay))

    def _cancel_timer(self, key: str) -> None:
        if self._timers.pop(key, None) is not None:
            self._step.out.append(CancelTimer(key))

    def _changed(self, exclude: MemberId | None = None) -> None:
        """Seats, members or phase changed: members get `table_update`, the lobby a call."""
        msg: Message = {"type": "table_update", "table": self.info()}
        for member in self._members:
            if member != exclude:
                self._send(member, msg)
        self._step.out.append(Changed())

    def _fan_out(self, events: list[engine.Event], skip: MemberId | None = None) -> None:
        """One `update` per member: the step's events as its seat may see them, its view
        after all of them, and its legal moves if the decision is its own."""
        assert self._match is not None
        members = [m for m in self._members if m != skip]
        seats = [self.seat_of(m) for m in members]
        deciding = self._deciding()
        deadline = self._time_left(deciding)
        # What members see alike is built once and shared between their messages.
        for member, seat, seen, view in zip(members, seats,
                                            engine.events_for_seats(events, seats),
                                            engine.views(self._match, seats), strict=True):
            msg: Message = {"type": "update", "table": self.id, "events": seen, "view": view}
            self._add_decision(msg, seat, deciding, deadline)
            self._send(member, msg)

    # -- membership ------------------------------------------------------------------------

    def _join(self, c: Join) -> None:
        if c.member in self._members:
            self._step.reply = self.snapshot(c.member)
            return
        if c.bot and not c.spectate and not self.bot_accounts:
            raise TableError("bot_account_refused", BOT_REFUSED)
        self._members[c.member] = Member(c.name, address=c.address, bot=c.bot)
        free = next((s for s in self._seats if s.kind == "open"), None)
        seated = not c.spectate and (c.registered or not self.rated)  # a guest watches
        if seated and self.phase != TablePhase.PLAYING and free is not None:
            free.seat_human(c.member)
        else:
            self._spectators.append(c.member)
        if self._host is None or self._host not in self._members:
            self._pass_host()
        self._step.reply = self.snapshot(c.member)
        self._changed(exclude=c.member)

    def _leave(self, c: Leave) -> None:
        self._require_member(c.member)
        self._reply_ok()
        self._remove(c.member)

    def _remove(self, member: MemberId) -> None:
        """`member` leaves; mid-match its seat passes to a bot for good (the match goes on)."""
        index = self.seat_of(member)
        del self._members[member]
        self._cancel_timer(GRACE_TIMER + member)
        if member in self._spectators:
            self._spectators.remove(member)
        if index is not None:
            seat = self._seats[index]
            if self.phase == TablePhase.PLAYING:
                self._left.setdefault(index, self._step.now)
                seat.seat_bot(self.settings.stand_in_level)
            else:
                seat.clear()
        if member == self._host:
            self._pass_host()
        self._step.out.append(MemberLeft(member))
        if not any(s.kind == "human" for s in self._seats) and not self._spectators:
            self._close()
            return
        self._changed()
        if index is not None and self._acting(index):
            self._prompt([])  # the new bot is the one to act

    def _pass_host(self) -> None:
        """The host role passes to a seated human, else to nobody until a human sits: a
        spectator never hosts (it could start a match it does not play, or seat bots at
        a table it only watches)."""
        seated = [s.member for s in self._seats if s.kind == "human" and s.member]
        self._host = seated[0] if seated else None

    def _close(self) -> None:
        self.closed = True
        for key in list(self._timers):
            self._cancel_timer(key)
        self._deadline = None
        self._step.out.append(Closed())

    # -- seats -----------------------------------------------------------------------------

    def _sit(self, c: Sit) -> None:
        self._require_member(c.member)
        self._present(c.member)
        if self.rated and not c.registered:
            raise TableError("account_required", GUEST_REFUSED)
        if c.bot and not self.bot_accounts:
            raise TableError("bot_account_refused", BOT_REFUSED)
        self._check_changeable()
        target = self._seat(c.seat)
        if target.kind != "open":
            raise TableError("seat_taken", f"seat {c.seat} is not open", seat=c.seat)
        current = self.seat_of(c.member)
        if current is not None:
            self._seats[current].clear()
        else:
            self._spectators.remove(c.member)
        target.seat_human(c.member)
        if self._host is None or self._host not in self._members:
            self._pass_host()  # a table with no host takes the first human to sit
        self._reply_ok()
        self._changed()

    def _stand(self, c: Stand) -> None:
        """A seated player becomes a spectator of the same table."""
        index = self._require_seat(c.member)
        self._present(c.member)
        self._check_changeable()
        self._seats[index].clear()
        self._spectators.append(c.member)
        self._reply_ok()
        self._changed()

    def _add_bot(self, c: AddBot) -> None:
        self._require_member(c.member)
        self._present(c.member)  # a refusal shows presence too
        self._require_host(c.member)
        self._check_changeable()
        if c.level not in BOT_LEVELS:
            raise TableError("bad_field", f"bot level must be one of {', '.join(BOT_LEVELS)}",
                             field="level")
        target = self._seat(c.seat)
        if target.kind != "open":
            raise TableError("seat_taken", f"seat {c.seat} is not open", seat=c.seat)
        target.seat_bot(c.level)
        if self.phase == TablePhase.OVER:
            target.rematch = True  # bots always agree
        self._reply_ok()
        if not self._maybe_rematch(c.seed):
            self._changed()

    def _remove_bot(self, c: RemoveBot) -> None:
        self._require_member(c.member)
        self._present(c.member)  # a refusal shows presence too
        self._require_host(c.member)
        self._check_changeable()
        target = self._seat(c.seat)
        if target.kind != "bot":
            raise TableError("not_a_bot", f"seat {c.seat} does not hold a bot", seat=c.seat)
        target.clear()
        self._reply_ok()
        self._changed()

    def _ready(self, c: Ready) -> None:
        index = self._require_seat(c.member)
        self._present(c.member)
        self._check_changeable()
        self._reply_ok()
        if self._seats[index].ready != c.ready:
            self._seats[index].ready = c.ready
            self._changed()

    def _start(self, c: Start) -> None:
        """Start a match: host only; every seat filled, every human but the host ready.

        The host's own `start` counts as its ready.
        """
        self._require_member(c.member)
        self._present(c.member)  # a refusal shows presence too
        self._require_host(c.member)
        self._check_changeable()
        unready = [s.index for s in self._seats
                   if s.kind == "open"
                   or (s.kind == "human" and not s.ready and s.member != self._host)]
        if unready:
            raise TableError("table_not_ready", "every seat must be filled and ready",
                             waiting_for=unready)
        self._reply_ok()
        self._start_match(c.seed)

    def _start_match(self, seed: int) -> None:
        for seat in self._seats:
            seat.rematch = None
            seat.timeouts = 0
            seat.held = None
            if seat.kind == "human":
                seat.ready = True
        self._match = engine.Match(self.options, random.Random(seed), deck=self.deck)
        self._match_start = (self._step.now, [self._player(s) for s in self._seats])
        self._left = {}
        if self.rated:
            self._note_shared_addresses()
        self.phase = TablePhase.PLAYING
        self._changed()
        self._begin_deal()

    # -- playing ---------------------------------------------------------------------------

    def _play(self, c: Play) -> None:
        """A human's move in wire form; refused with nothing changed if not legal."""
        index = self._require_seat(c.member)
        # Taking the seat back from a stand-in and moving at once is one step: the
        # decision is handed back by this move's update, unless the move is refused.
        reclaimed = self._present(c.member, prompt=False)
        try:
            if self.phase != TablePhase.PLAYING or self._match is None:
                raise TableError("no_game", "the table is not playing a deal")
            deal = self._match.deal
            if deal.over:
                raise TableError("deal_over", "the deal is over; the next one starts shortly")
            if deal.to_act != index:
                raise TableError("not_your_turn", "it is not your seat's decision",
                                 rule="C3")
            try:
                move = engine.move_from_wire(c.move)
            except (ValueError, TypeError, KeyError) as e:
                raise TableError("bad_field", f"malformed move: {e}", field="move") from None
            events = self._engine_apply(move)  # raises, with nothing changed, if illegal
        except TableError:
            if reclaimed and self._acting(index):
                self._prompt([])
            raise
        self._seats[index].timeouts = 0
        self._reply_ok()
        self._after_move(events)

    def _engine_apply(self, move: int) -> list[engine.Event]:
        assert self._match is not None
        try:
            return list(self._match.apply(move))
        except engine.RuleError as e:
            raise TableError(e.code, str(e), rule=e.rule, field=e.field) from None

    def _after_move(self, events: list[engine.Event]) -> None:
        """Fan a move's events out, then move the game on: next prompt, or the deal's end."""
        assert self._match is not None
        self._deal_events.extend(e for e in events if e["event"] != "timeout")
        if not self._match.deal.over:
            self._prompt(events)
            return
        self._stop_turn()
        self._fan_out(events)  # ends with deal_end (and match_end) from the engine
        if self._match.over:
            self._end_match()
        else:
            self._set_timer(DEAL_TIMER, self.settings.deal_pause)

    def _begin_deal(self) -> None:
        assert self._match is not None
        self.deals_begun += 1
        self._deal_events = []
        self._prompt([{"event": "deal_start", "deal_no": self._match.deal_no,
                       "dealer": self._match.deal.dealer}])

    def _player(self, seat: Seat) -> dict[str, Any]:
        if seat.kind == "bot" and seat.level is not None:
            return {"seat": seat.index, "name": bot_seat_name(seat.index), "kind": "bot",
                    "level": seat.level}
        info = self._members.get(seat.member) if seat.member is not None else None
        # "player": the session that held the seat, which the store keeps so that a
        # private match is shown to it, not to whoever takes the same name later.
        player = int(seat.member) if seat.member is not None and seat.member.isdecimal() \
            else None
        return {"seat": seat.index, "name": info.name if info is not None else "?",
                "kind": "human", "level": None, "player": player,
                **({"bot": True} if info is not None and info.bot else {})}

    def _note_shared_addresses(self) -> None:
        """Accounts seated from one address at a rated match: each such seat's record
        gets the group's number (`shared_address`) and an operator a `SharedAddress`.
        Allowed (a household or a LAN party shares one address), but a second account
        is also how one player would farm a rating, so it is made visible."""
        by_address: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for seat, player in zip(self._seats, self._match_start[1], strict=True):
            info = self._members.get(seat.member) if seat.member is not None else None
            if seat.kind == "human" and info is not None \
                    and info.address not in UNKNOWN_ADDRESSES:
                by_address[info.address].append(player)
        shared = [(address, group) for address, group in by_address.items() if len(group) > 1]
        for number, (address, group) in enumerate(shared, 1):
            for player in group:
                player["shared_address"] = number
            self._step.out.append(SharedAddress(
                table_id=self.id, address=address,
                seats=[(p["seat"], p["name"]) for p in group]))

    def _as_recorded(self, player: dict[str, Any]) -> dict[str, Any]:
        """A seat of `MatchOver.players`: as it started, and whether its player left
        (`left_at`; at a rated table that is a forfeit, `ratings.py`)."""
        left_at = self._left.get(player["seat"])
        if left_at is None:
            return player
        return {**player, "left_at": left_at, **({"forfeit": True} if self.rated else {})}

    def _end_match(self) -> None:
        self.phase = TablePhase.OVER
        assert self._match is not None
        match = self._match
        started_at, players = self._match_start
        players = [self._as_recorded(p) for p in players]
        self._step.out.append(MatchOver(
            table_id=self.id, rules=self.options.rules, options=self._options_wire(),
            players=players, started_at=started_at, finished_at=self._step.now,
            totals=list(match.totals), winners=list(match.winners),
            deals=[{"deal_no": n, "result": result.to_wire(), "record": record.to_wire()}
                   for n, (result, record)
                   in enumerate(zip(match.results, match.records, strict=True), 1)],
            private=self.private, rated=self.rated))
        for seat in self._seats:
            seat.ready = seat.kind == "bot"
            seat.held = None
            seat.timeouts = 0
            seat.rematch = True if seat.kind == "bot" else None
        self._changed()
        # Members whose grace ran out were kept only for the match: they go now.
        for member in [m for m, info in self._members.items() if info.gone]:
            if not self.closed and member in self._members:
                self._remove(member)

    # -- turns, timers and bots ------------------------------------------------------------

    def _stop_turn(self) -> None:
        self._deadline = None
        self._cancel_timer(TURN_TIMER)
        self._cancel_timer(BOT_TIMER)

    def _prompt(self, events: list[engine.Event], skip: MemberId | None = None) -> None:
        """Whoever must decide now is asked (a human by the update's `moves`, a bot via a
        timer), then every member (but `skip`) gets the step as one update."""
        assert self._match is not None
        self._stop_turn()
        self._serial += 1
        to_act = self._match.deal.to_act
        if to_act is not None:
            if self._seats[to_act].bot_decides:
                self._set_timer(BOT_TIMER, self.settings.bot_delay)
            elif self.settings.turn_seconds > 0:
                self._deadline = self._step.now + self.settings.turn_seconds
                self._set_timer(TURN_TIMER, self.settings.turn_seconds)
        self._fan_out(events, skip)

    def _timer(self, c: TimerFired) -> None:
        if self._timers.pop(c.key, None) is None:
            return  # cancelled meanwhile: a stale firing
        if c.key == TURN_TIMER:
            self._expire()
        elif c.key == BOT_TIMER:
            self._ask_bot()
        elif c.key == DEAL_TIMER:
            self._next_deal()
        elif c.key.startswith(GRACE_TIMER):
            self._grace_over(c.key[len(GRACE_TIMER):])

    def _next_deal(self) -> None:
        if self.phase != TablePhase.PLAYING or self._match is None:
            return
        self._match.next_deal()
        self._begin_deal()

    def _expire(self) -> None:
        """The turn timer ran out: play the default move; after N in a row, a bot sits in."""
        index = self._deciding()
        if index is None or self._match is None:
            return
        seat = self._seats[index]
        move = default_move(engine.legal_moves(self._match.deal, index), engine.move_to_wire)
        seat.timeouts += 1
        takeover = seat.timeouts >= self.settings.max_timeouts_before_bot
        # The move itself is told by the events after this one: naming it here, before
        # it is played, would show a card still in the hand.
        notice = {"event": "timeout", "seat": index, "count": seat.timeouts, "bot": takeover}
        if takeover:
            seat.held = "idle"
            self._changed()
        self._after_move([notice, *self._engine_apply(move)])

    def _ask_bot(self) -> None:
        if self.phase != TablePhase.PLAYING or self._match is None:
            return
        deal = self._match.deal
        index = deal.to_act
        if index is None or not self._seats[index].bot_decides:
            return
        seat = self._seats[index]
        level = seat.level if seat.kind == "bot" and seat.level else self.settings.stand_in_level
        self._step.out.append(AskBot(
            serial=self._serial, seat=index, level=level,
            view=engine.view(self._match, index),
            legal=list(engine.legal_moves(deal, index)),
            events=engine.events_for(self._deal_events, index)))

    def _bot_moved(self, c: BotMoved) -> None:
        """A bot's answer counts only if nothing moved meanwhile: a player who took the
        seat back wins over a late bot."""
        if c.serial != self._serial or self.phase != TablePhase.PLAYING or self._match is None:
            return
        deal = self._match.deal
        index = deal.to_act
        if index is None or not self._seats[index].bot_decides:
            return
        legal = engine.legal_moves(deal, index)
        move = c.move if c.move in legal else default_move(legal, engine.move_to_wire)
        self._after_move(self._engine_apply(move))

    # -- presence: idle and disconnected players -------------------------------------------

    def _seen(self, c: Seen) -> None:
        if c.member in self._members:
            self._present(c.member)

    def _present(self, member: MemberId, prompt: bool = True) -> bool:
        """The one path for a sign of life: reset the timeouts, take the seat back from
        a stand-in bot (True if it did). With `prompt`, a decision the seat owes now is
        handed back at once, as an update without events."""
        index = self.seat_of(member)
        if index is None:
            return False
        seat = self._seats[index]
        seat.timeouts = 0
        info = self._members[member]
        if seat.held is None or not info.connected:
            return False
        seat.held = None
        info.gone = False
        self._changed()
        if prompt and self._acting(index):
            self._prompt([])
        return True

    def _acting(self, index: int) -> bool:
        """True if seat `index` must decide now in a running deal."""
        return (self.phase == TablePhase.PLAYING and self._match is not None
                and self._match.deal.to_act == index)

    def _disconnected(self, c: Disconnected) -> None:
        """The table goes on under the turn timer; after the grace period a bot sits in."""
        info = self._members.get(c.member)
        if info is None or not info.connected:
            return
        info.connected = False
        index = self.seat_of(c.member)
        if index is not None and self.phase != TablePhase.PLAYING:
            self._seats[index].ready = False
        self._set_timer(GRACE_TIMER + c.member, self.settings.grace_seconds)
        self._changed(exclude=c.member)

    def _grace_over(self, member: MemberId) -> None:
        info = self._members.get(member)
        if info is None or info.connected:
            return
        index = self.seat_of(member)
        if index is None or self.phase != TablePhase.PLAYING:
            self._remove(member)  # nothing to hold for them: they leave the table
            return
        info.gone = True
        self._left[index] = self._step.now  # a forfeit, unless they are back before the end
        self._seats[index].held = "disconnected"
        self._changed()
        if self._acting(index):
            self._prompt([])  # the stand-in bot decides from now on

    def _reconnected(self, c: Reconnected) -> None:
        """The member is back: a stand-in bot hands its seat back; a fresh snapshot."""
        info = self._members.get(c.member)
        if info is None:
            return
        was_away = not info.connected
        info.connected = True
        info.gone = False
        self._cancel_timer(GRACE_TIMER + c.member)
        index = self.seat_of(c.member)
        reclaim = index is not None and self._seats[index].held is not None
        if index is not None:
            self._left.pop(index, None)
            self._seats[index].held = None
            self._seats[index].timeouts = 0
        if was_away or reclaim:
            self._changed(exclude=c.member)
        if reclaim and index is not None and self._acting(index):
            # A fresh decision for the player (told in its snapshot); everyone else
            # sees who decides now.
            self._prompt([], skip=c.member)
        self._send(c.member, self.snapshot(c.member))

    def _restored(self, c: Restored) -> None:
        """After a restart or a takeover: the outage is taken off the clock, the timers
        armed again, everyone away with a fresh grace period, and a bot asked again for
        the move it was thinking about when the server stopped."""
        self._pause_clock()
        for key, when in sorted(self._timers.items()):
            self._step.out.append(SetTimer(key, max(0.0, when - self._step.now)))
        for member, info in list(self._members.items()):
            if info.connected:
                self._disconnected(Disconnected(member))
        if (self.phase == TablePhase.PLAYING and self._match is not None
                and BOT_TIMER not in self._timers):
            to_act = self._match.deal.to_act
            if to_act is not None and self._seats[to_act].bot_decides:
                self._set_timer(BOT_TIMER, self.settings.bot_delay)

    def _pause_clock(self) -> None:
        """Every deadline moves on by the time since the last command: a player's turn
        does not run while no server holds the table, so it has what it had left then.
        The last command is the latest moment a restart can know the table was served
        (a killed process writes nothing more), and measured from the commands' own
        times the shift is the same when the commands are replayed again."""
        if self._last_at is None:
            return
        outage = max(0.0, self._step.now - self._last_at)
        self._timers = {key: when + outage for key, when in self._timers.items()}
        if self._deadline is not None:
            self._deadline += outage

    # -- chat, rematch, resync -------------------------------------------------------------

    def _chat(self, c: Chat) -> None:
        self._require_member(c.member)
        self._present(c.member)
        try:  # the schema's rule for text shown to others: one line, no controls
            StrT(self.settings.chat_max_chars, text=True).check(c.text, "text")
        except ProtocolError as e:
            raise TableError("bad_field", f"chat {e.message}", field="text",
                             limit=self.settings.chat_max_chars) from None
        seat = self.seat_of(c.member)
        self._reply_ok()
        self._send_all({"type": "chat", "scope": "table", "table": self.id,
                        "name": self._members[c.member].name, "seat": seat,
                        "spectator": seat is None, "text": c.text.strip()})

    def _rematch(self, c: Rematch) -> None:
        """Once the match is over: a new match on the same seats when every human agrees."""
        index = self._require_seat(c.member)
        self._present(c.member)
        if self.phase != TablePhase.OVER:
            raise TableError("match_not_over", "a rematch is agreed once the match is over")
        self._seats[index].rematch = c.agree
        self._reply_ok()
        self._send_all({
            "type": "rematch", "table": self.id,
            "agreed": [s.index for s in self._seats if s.rematch],
            "declined": [s.index for s in self._seats if s.rematch is False],
        })
        if not self._maybe_rematch(c.seed):
            self._changed()

    def _maybe_rematch(self, seed: int) -> bool:
        """Start the rematch once every seat is filled and every human in one agreed."""
        if self.phase != TablePhase.OVER:
            return False
        humans = [s for s in self._seats if s.kind == "human"]
        if not humans or any(s.kind == "open" for s in self._seats) \
                or not all(s.rematch for s in humans):
            return False
        self._start_match(seed)
        return True

    def _resync(self, c: Resync) -> None:
        self._require_member(c.member)
        self._step.reply = self.snapshot(c.member)

    # -- refusals --------------------------------------------------------------------------

    def _check_changeable(self) -> None:
        if self.phase == TablePhase.PLAYING:
            raise TableError("game_in_progress", "seats cannot change during a match")

    def _seat(self, seat: object) -> Seat:
        if not isinstance(seat, int) or isinstance(seat, bool) \
                or not 0 <= seat < len(self._seats):
            raise TableError("no_such_seat", f"there is no seat {seat!r}",
                             limit=len(self._seats))
        return self._seats[seat]

    def _require_member(self, member: MemberId) -> None:
        if member not in self._members:
            raise TableError("not_at_table", "you are not at this table")

    def _require_seat(self, member: MemberId) -> int:
        self._require_member(member)
        index = self.seat_of(member)
        if index is None:
            raise TableError("not_seated", "you do not hold a seat at this table")
        return index

    def _require_host(self, member: MemberId) -> None:
        self._require_member(member)
        if member != self._host:
            raise TableError("not_host", "only the host may do this")


_MADE_BY_INIT = frozenset({"_handlers", "_step"})
"""The attributes of a `TableCore` its pickle leaves out: the constructor makes them."""


def _unpickled(args: tuple[Any, ...], state: dict[str, Any]) -> TableCore:
    """A `TableCore` from its pickle (`TableCore.__reduce__`)."""
    table_id, name, options, private, settings, code = args
    # The host, which may be nobody now, is in the state.
    core = TableCore(table_id, name, options, private=private, host="",
                     settings=settings, code=code)
    for key, value in state.items():
        setattr(core, key, value)
    return core
