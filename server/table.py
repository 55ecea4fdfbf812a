"""One table's whole life: seats, readiness, a match played to the end, rematch.

The table is the only place that turns engine state into messages, so it is where
hidden information is kept in (issue 3): every recipient gets the engine's
`events_for` / `view` for *its* seat (spectators: seat None), never a shared dict
that holds more. It never touches a socket (NET calls it with `Participant`s), the
clock (an injected `IReactorTime`) or global randomness (an injected Random), so
tests drive whole matches with `task.Clock` and fake participants.

Issue 4 lives here too: the turn timer and its default move (see `default_move`),
stand-in bots for idle or disconnected players, spectators, table chat, rematch.
Moves chosen by the server (bots, stand-ins, timeouts) always go through the clock,
never a direct recursive call, so a table of bots cannot blow the stack.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IReactorTime
from twisted.internet.threads import deferToThread
from twisted.logger import Logger
from twisted.python.failure import Failure

from pisyedili.protocol.errors import ProtocolError
from pisyedili.protocol.limits import MAX_CHAT
from pisyedili.protocol.types import StrT
from pisyedili.server import rules as engine
from pisyedili.server.bot_seat import BotPlayer, make_bot
from pisyedili.server.clock import Clock, Delayed
from pisyedili.server.default_move import default_move
from pisyedili.server.participant import Message, Participant, TableError
from pisyedili.server.seats import BOT_LEVELS, Seat, wire_player_id

log = Logger()


def cancel(call: Delayed | None) -> None:
    """Cancel `call` if it is still pending; harmless on None or a call that ran."""
    if call is not None and call.active():
        call.cancel()

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: read aloud to friends
CODE_LENGTH = 6
SPECTATOR_NAMES_SHOWN = 50


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
    """Run `hard` bots' searches in the reactor's thread pool (production: True);
    False runs them inline, which tests with `task.Clock` need."""
    hard_budget_s: float | None = None
    """Search time per `hard` decision; None: the bots' own default."""

    def __post_init__(self) -> None:
        if self.turn_seconds < 0 or self.grace_seconds < 0:
            raise ValueError("turn_seconds and grace_seconds must not be negative")
        if self.bot_delay < 0 or self.deal_pause < 0:
            raise ValueError("bot_delay and deal_pause must not be negative")
        if self.max_timeouts_before_bot < 1:
            raise ValueError("max_timeouts_before_bot must be at least 1")
        if self.stand_in_level not in BOT_LEVELS:
            raise ValueError(f"stand_in_level must be one of {BOT_LEVELS}")


class Table:
    """A table of 2-6 seats and its spectators, playing one match at a time."""

    def __init__(
        self,
        table_id: int,
        name: str,
        options: engine.Options,
        seats: int,
        private: bool,
        host: Participant,
        clock: IReactorTime | Clock,
        rng: random.Random,
        settings: TableSettings,
        on_change: Callable[[Table], None],
        on_close: Callable[[Table], None],
    ) -> None:
        if seats != options.players:
            raise ValueError(f"{seats} seats but options for {options.players} players")
        self.id = table_id
        self.name = name
        self.options = options
        self.private = private
        self.code: str | None = (
            "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            if private else None
        )
        self.phase = "waiting"  # "waiting" | "playing" | "over" (the match ended)
        self.closed = False
        self.settings = settings
        self._host_id = host.player_id
        # The reactor and task.Clock both fit `Clock`; zope interfaces do not type-check.
        self._clock = cast(Clock, clock)
        self._rng = rng
        self._bot_rng = random.Random(rng.getrandbits(64))
        self._on_change = on_change
        self._on_close = on_close
        self._seats = [Seat(i) for i in range(seats)]
        self._members: dict[str, Participant] = {}  # player id -> participant
        self._spectators: list[str] = []  # player ids, in arrival order
        self._bots: dict[int, BotPlayer] = {}
        self._thinking: BotPlayer | None = None  # a bot searching in a thread
        self._match: engine.Match | None = None
        self._turn_serial = 0  # bumps on every prompt: stale timers/bot calls are ignored
        self._deadline: float | None = None
        self._turn_call: Delayed | None = None
        self._bot_call: Delayed | None = None
        self._deal_call: Delayed | None = None
        self._grace_calls: dict[str, Delayed] = {}

    # -- reading -------------------------------------------------------------------

    @property
    def match(self) -> engine.Match | None:
        """The engine `Match` in play (None before the first start). Read-only use."""
        return self._match

    def _live(self) -> engine.Match:
        """The match, where the table's phase guarantees there is one."""
        if self._match is None:
            raise RuntimeError(f"table {self.id} has no match")
        return self._match

    def _to_act(self) -> int:
        """The seat that must decide now, where a deal is known to be running."""
        seat = self._live().deal.to_act
        if seat is None:
            raise RuntimeError(f"table {self.id}: the deal is over")
        return seat

    @property
    def host(self) -> Participant | None:
        return self._members.get(self._host_id)

    def members(self) -> list[Participant]:
        return list(self._members.values())

    def seat_of(self, p: Participant) -> int | None:
        for seat in self._seats:
            if seat.kind == "human" and seat.player is not None \
                    and seat.player.player_id == p.player_id:
                return seat.index
        return None

    def summary(self) -> dict[str, Any]:
        """The lobby row (never the invite code)."""
        taken = sum(1 for s in self._seats if s.kind != "open")
        row: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "rules": self.options.rules,
            "options": self._options_wire(),
            "seats": len(self._seats),
            "taken": taken,
            "free": len(self._seats) - taken,
            "bots": sum(1 for s in self._seats if s.kind == "bot"),
            "phase": self.phase,
            "private": self.private,
            "spectators": len(self._spectators),
        }
        if self.host is not None:
            row["host"] = self.host.name
        return row

    def _options_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = dict(self.options.to_wire())
        wire["turn_seconds"] = round(self.settings.turn_seconds)
        return wire

    def _info(self) -> dict[str, Any]:
        """The `table` field of `table` / `table_update`: what every member may know."""
        host = self.host
        info: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "rules": self.options.rules,
            "options": self._options_wire(),
            "host": wire_player_id(host.player_id) if host is not None else None,
            "host_name": host.name if host is not None else None,
            "phase": self.phase,
            "private": self.private,
            "seats": [s.to_wire() for s in self._seats],
            # Names of the first spectators only: the message goes to every member on
            # every change, so its size must not grow with a crowd.
            "spectators": [self._members[pid].name
                           for pid in self._spectators[:SPECTATOR_NAMES_SHOWN]],
            "spectator_count": len(self._spectators),
        }
        if self.code is not None:
            info["code"] = self.code  # members only: the lobby row never has it
        return info

    def snapshot_for(self, p: Participant) -> Message:
        """The full `table` message for `p` (lichess's gameFull): all it may know now."""
        seat = self.seat_of(p)
        msg: Message = {
            "type": "table",
            "table": self._info(),
            "you": {"seat": seat, "spectator": seat is None,
                    "host": p.player_id == self._host_id},
            "view": None,
            "match": None,
        }
        if self._match is not None:
            msg["view"] = engine.view(self._match, seat)
            msg["match"] = {"deal_no": self._match.deal_no, "totals": self._totals()}
            prompt = self._prompt_for(seat)
            if prompt is not None:
                msg["turn"] = {k: v for k, v in prompt.items() if k != "type"}
        return msg

    def _totals(self) -> list[int]:
        return [int(t) for t in self._live().totals]

    # -- membership ------------------------------------------------------------------

    def join(self, p: Participant, spectate: bool = False) -> None:
        """Make `p` a member and send it the snapshot.

        Joining as a player takes the first open seat while no match is running;
        otherwise (or with `spectate`) `p` watches — `you.spectator` says which.
        A member joining again just gets a fresh snapshot.
        """
        self._check_open()
        if p.player_id in self._members:
            self._members[p.player_id] = p
            self._send_snapshot(p)
            return
        self._members[p.player_id] = p
        free = self._first_open()
        if not spectate and self.phase != "playing" and free is not None:
            free.seat_human(p)
        else:
            self._spectators.append(p.player_id)
        log.info("table {table}: {player} joined ({how})", table=self.id,
                 player=p.player_id, how="spectator" if self.seat_of(p) is None else "seat")
        self._changed(exclude=p)
        self._send_snapshot(p)

    def leave(self, p: Participant) -> None:
        """`p` leaves; mid-match its seat passes to a bot for good (the match goes on)."""
        if p.player_id not in self._members:
            return
        index = self.seat_of(p)
        del self._members[p.player_id]
        self._cancel_grace(p)
        if p.player_id in self._spectators:
            self._spectators.remove(p.player_id)
        if index is not None:
            seat = self._seats[index]
            if self.phase == "playing":
                seat.seat_bot(self.settings.stand_in_level)
                self._bots.pop(index, None)
            else:
                seat.clear()
        if p.player_id == self._host_id:
            self._pass_host()
        log.info("table {table}: {player} left", table=self.id, player=p.player_id)
        if not any(s.kind == "human" for s in self._seats) and not self._spectators:
            self.close()
            return
        self._changed()
        if index is not None and self.phase == "playing":
            self._prompt_current()  # the new bot may be the one to act

    def close(self) -> None:
        """Stop every timer and tell the lobby; members are not messaged."""
        if self.closed:
            return
        self.closed = True
        for call in (self._turn_call, self._bot_call, self._deal_call,
                     *self._grace_calls.values()):
            cancel(call)
        self._grace_calls.clear()
        log.info("table {table} closed", table=self.id)
        self._on_close(self)

    def _pass_host(self) -> None:
        """The host role passes to a seated human, else to a spectator."""
        seated = [s.player.player_id for s in self._seats
                  if s.kind == "human" and s.player is not None]
        candidates = seated + self._spectators
        if candidates:
            self._host_id = candidates[0]

    # -- seats -------------------------------------------------------------------------

    def sit(self, p: Participant, seat: int) -> None:
        self._present(p)
        self._check_changeable()
        self._require_member(p)
        target = self._seat(seat)
        if target.kind != "open":
            raise TableError("seat_taken", f"seat {seat} is not open", seat=seat)
        current = self.seat_of(p)
        if current is not None:
            self._seats[current].clear()
        else:
            self._spectators.remove(p.player_id)
        target.seat_human(p)
        self._changed()

    def stand(self, p: Participant) -> None:
        """A seated player becomes a spectator of the same table."""
        self._present(p)
        self._check_changeable()
        index = self._require_seat(p)
        self._seats[index].clear()
        self._spectators.append(p.player_id)
        self._changed()

    def add_bot(self, p: Participant, seat: int, level: str = "medium") -> None:
        self._present(p)
        self._require_host(p)
        self._check_changeable()
        if level not in BOT_LEVELS:
            raise TableError("bad_field", f"bot level must be one of {', '.join(BOT_LEVELS)}",
                             field="level")
        target = self._seat(seat)
        if target.kind != "open":
            raise TableError("seat_taken", f"seat {seat} is not open", seat=seat)
        target.seat_bot(level)
        self._bots.pop(seat, None)
        if self.phase == "over":
            target.rematch = True  # bots always agree
        if not self._maybe_rematch():
            self._changed()

    def remove_bot(self, p: Participant, seat: int) -> None:
        self._present(p)
        self._require_host(p)
        self._check_changeable()
        target = self._seat(seat)
        if target.kind != "bot":
            raise TableError("not_a_bot", f"seat {seat} does not hold a bot", seat=seat)
        target.clear()
        self._bots.pop(seat, None)
        self._changed()

    def set_ready(self, p: Participant, ready: bool) -> None:
        self._present(p)
        self._check_changeable()
        index = self._require_seat(p)
        if self._seats[index].ready != ready:
            self._seats[index].ready = ready
            self._changed()

    def start(self, p: Participant) -> None:
        """Start a match: host only; every seat filled, every human but the host ready.

        The host's own `start` counts as its ready.
        """
        self._present(p)
        self._require_host(p)
        self._check_changeable()
        unready = [s.index for s in self._seats
                   if s.kind == "open"
                   or (s.kind == "human" and not s.ready
                       and (s.player is None or s.player.player_id != self._host_id))]
        if unready:
            raise TableError("table_not_ready", "every seat must be filled and ready",
                             waiting_for=unready)
        self._start_match()

    def _start_match(self) -> None:
        for seat in self._seats:
            seat.rematch = None
            seat.timeouts = 0
            seat.held = None
            if seat.kind == "human":
                seat.ready = True
        self._bots.clear()  # fresh policies: nothing carried over from the last match
        self._match = engine.Match(self.options, self._rng)
        self.phase = "playing"
        log.info("table {table}: match started ({rules}, {n} seats)", table=self.id,
                 rules=self.options.rules, n=len(self._seats))
        self._changed()
        self._begin_deal()

    # -- helpers for refusals ------------------------------------------------------------

    def _check_open(self) -> None:
        if self.closed:
            raise TableError("no_such_table", "this table is closed")

    def _check_changeable(self) -> None:
        self._check_open()
        if self.phase == "playing":
            raise TableError("game_in_progress", "seats cannot change during a match")

    def _seat(self, seat: object) -> Seat:
        if not isinstance(seat, int) or isinstance(seat, bool) \
                or not 0 <= seat < len(self._seats):
            raise TableError("no_such_seat", f"there is no seat {seat!r}",
                             limit=len(self._seats))
        return self._seats[seat]

    def _require_member(self, p: Participant) -> None:
        if p.player_id not in self._members:
            raise TableError("not_at_table", "you are not at this table")

    def _require_seat(self, p: Participant) -> int:
        self._require_member(p)
        index = self.seat_of(p)
        if index is None:
            raise TableError("not_seated", "you do not hold a seat at this table")
        return index

    def _require_host(self, p: Participant) -> None:
        self._require_member(p)
        if p.player_id != self._host_id:
            raise TableError("not_host", "only the host may do this")

    def _first_open(self) -> Seat | None:
        return next((s for s in self._seats if s.kind == "open"), None)

    # -- fan-out -------------------------------------------------------------------------

    def _send_all(self, msg: Message) -> None:
        for member in list(self._members.values()):
            member.send(msg)

    def _send_snapshot(self, p: Participant) -> None:
        """The snapshot, then (if `p` must act) the `turn` it holds, for clients that
        only act on `turn` messages."""
        snapshot = self.snapshot_for(p)
        p.send(snapshot)
        if "turn" in snapshot:
            p.send({"type": "turn", **snapshot["turn"]})

    def _changed(self, exclude: Participant | None = None) -> None:
        """Seats, members or phase changed: members get `table_update`, the lobby a call."""
        msg: Message = {"type": "table_update", "table": self._info()}
        for member in list(self._members.values()):
            if exclude is None or member.player_id != exclude.player_id:
                member.send(msg)
        self._on_change(self)

    def _fan_out(self, events: list[dict[str, Any]]) -> None:
        """Each member gets the events as its seat may see them, with its new view."""
        for member in list(self._members.values()):
            seat = self.seat_of(member)
            seen = engine.events_for(events, seat)
            if not seen:
                continue
            view = engine.view(self._live(), seat)
            for event in seen:
                member.send({"type": "event", "table": self.id, "event": event, "view": view})

    def _announce(self, event: dict[str, Any]) -> None:
        """A table event that holds nothing private (timeouts, stand-ins, deal start)."""
        for member in list(self._members.values()):
            view = engine.view(self._live(), self.seat_of(member))
            member.send({"type": "event", "table": self.id, "event": event, "view": view})

    # -- playing -------------------------------------------------------------------------

    def move(self, p: Participant, wire_move: dict[str, Any]) -> None:
        """A human's move in wire form; refused with nothing changed if not legal."""
        self._present(p)
        self._check_open()
        index = self._require_seat(p)
        deal = self._current_deal()
        if deal.over:
            raise TableError("deal_over", "the deal is over; the next one starts shortly")
        if deal.to_act != index:
            raise TableError("not_your_turn", "it is not your seat's decision", rule="C3")
        try:
            move = engine.move_from_wire(wire_move)
        except (ValueError, TypeError, KeyError) as e:
            raise TableError("bad_field", f"malformed move: {e}", field="move") from None
        self._seats[index].timeouts = 0
        self._apply(index, move)

    def _current_deal(self) -> engine.Deal:
        if self.phase != "playing" or self._match is None:
            raise TableError("no_game", "the table is not playing a deal")
        return self._match.deal

    def _apply(self, seat: int, move: Any) -> None:
        """Apply `move` for `seat` (the seat to act), fan out, then move the game on."""
        try:
            events = self._live().apply(move)
        except engine.RuleError as e:
            raise TableError(e.code, str(e), rule=e.rule) from None
        self._cancel_turn()
        self._observe(events)
        self._fan_out(list(events))
        self._after_move()

    def _after_move(self) -> None:
        if self._live().deal.over:
            self._end_deal()
        else:
            self._prompt_current()

    def _begin_deal(self) -> None:
        """Announce a fresh deal (every seat its own view) and prompt the first seat."""
        match = self._live()
        self._announce({"event": "deal_start", "deal_no": match.deal_no,
                        "dealer": match.deal.dealer})
        self._prompt_current()

    def _end_deal(self) -> None:
        self._cancel_turn()
        match = self._live()
        public = engine.view(match, None)
        self._send_all({"type": "deal_end", "table": self.id, "deal_no": match.deal_no,
                        "result": public["result"], "totals": self._totals()})
        log.info("table {table}: deal {deal} over", table=self.id, deal=match.deal_no)
        if match.over:
            self._end_match()
        else:
            self._deal_call = self._clock.callLater(self.settings.deal_pause, self._next_deal)

    def _next_deal(self) -> None:
        self._deal_call = None
        if self.closed or self.phase != "playing":
            return
        self._live().next_deal()
        self._begin_deal()

    def _end_match(self) -> None:
        winners = [int(w) for w in self._live().winners]
        self.phase = "over"
        for seat in self._seats:
            seat.ready = seat.kind == "bot"
            seat.held = None
            seat.timeouts = 0
            seat.rematch = True if seat.kind == "bot" else None
        self._send_all({"type": "match_end", "table": self.id, "totals": self._totals(),
                        "winners": winners})
        log.info("table {table}: match over, winners {winners}", table=self.id,
                 winners=winners)
        self._changed()

    # -- turns, timers and bots ----------------------------------------------------------

    def _prompt_for(self, seat: int | None) -> Message | None:
        """The pending `turn` message for `seat`, if a human must decide there now."""
        if seat is None or self._match is None or self.phase != "playing":
            return None
        deal = self._match.deal
        if deal.over or deal.to_act != seat or self._seats[seat].bot_decides:
            return None
        moves = [engine.move_to_wire(m) for m in engine.legal_moves(deal, seat)]
        prompt: Message = {"type": "turn", "table": self.id, "seat": seat, "moves": moves}
        if self._deadline is not None:
            prompt["deadline"] = round(max(0.0, self._deadline - self._clock.seconds()), 3)
        return prompt

    def _prompt_current(self, send: bool = True) -> None:
        """Whoever must decide now is asked: a human by `turn`, a bot via the clock.

        With `send` False the timers start but the caller delivers the prompt (in a
        snapshot)."""
        self._cancel_turn()
        if self.closed or self._match is None or self._match.deal.over:
            return
        self._turn_serial += 1
        serial = self._turn_serial
        seat = self._seats[self._to_act()]
        if seat.bot_decides:
            self._bot_call = self._clock.callLater(self.settings.bot_delay, self._bot_turn,
                                                   serial)
            return
        if self.settings.turn_seconds > 0:
            self._deadline = self._clock.seconds() + self.settings.turn_seconds
            self._turn_call = self._clock.callLater(self.settings.turn_seconds,
                                                    self._expire, serial)
        prompt = self._prompt_for(seat.index)
        if send and prompt is not None and seat.player is not None:
            seat.player.send(prompt)
        if send and self._deadline is not None:
            # Everyone else counts down the same turn (issue 5: the time left).
            clock: Message = {"type": "clock", "table": self.id, "seat": seat.index,
                              "deadline": float(self.settings.turn_seconds)}
            for member in list(self._members.values()):
                if member is not seat.player:
                    member.send(clock)

    def _cancel_turn(self) -> None:
        self._deadline = None
        cancel(self._turn_call)
        cancel(self._bot_call)
        self._turn_call = self._bot_call = None

    def _expire(self, serial: int) -> None:
        """The turn timer ran out: play the default move; after N in a row, a bot sits in."""
        self._turn_call = None
        if serial != self._turn_serial or self.closed or self._match is None:
            return
        deal = self._match.deal
        index = self._to_act()
        seat = self._seats[index]
        move = default_move(engine.legal_moves(deal, index), engine.move_to_wire)
        seat.timeouts += 1
        takeover = seat.timeouts >= self.settings.max_timeouts_before_bot
        log.info("table {table}: seat {seat} timed out ({n} in a row)", table=self.id,
                 seat=index, n=seat.timeouts)
        # The move itself is told by the events that follow: naming it here, before
        # it is played, would show a card still in the hand.
        self._send_all({"type": "timeout", "table": self.id, "seat": index,
                        "count": seat.timeouts, "bot": takeover})
        if takeover:
            seat.held = "idle"
            self._changed()
        self._apply(index, move)

    def _bot_turn(self, serial: int) -> None:
        self._bot_call = None
        if serial != self._turn_serial or self.closed or self._match is None:
            return
        deal = self._match.deal
        index = self._to_act()
        legal = engine.legal_moves(deal, index)
        bot = self._bot_for(index)
        seat_view = engine.view(self._match, index)
        if self.settings.bot_thread and bot.level == "hard":
            # A search spends its whole budget; in a thread it does not stall the
            # reactor (other tables, heartbeats). The answer counts only if nothing
            # moved meanwhile (`serial`): a reclaiming player wins over a late bot.
            self._thinking = bot
            d: Deferred[Any] = deferToThread(bot.choose, seat_view, legal)
            d.addCallback(self._bot_chose, serial, index, bot)
            d.addErrback(self._bot_failed, serial, index, bot)
            return
        self._apply(index, bot.choose(seat_view, legal))

    def _bot_chose(self, move: Any, serial: int, index: int, bot: BotPlayer) -> None:
        if self._thinking is bot:
            self._thinking = None
        if serial != self._turn_serial or self.closed or self._match is None:
            return
        self._apply(index, move)

    def _bot_failed(self, failure: Failure, serial: int, index: int, bot: BotPlayer) -> None:
        log.failure("table {table}: bot thread failed", failure, table=self.id)
        if self._thinking is bot:
            self._thinking = None
        if serial != self._turn_serial or self.closed or self._match is None:
            return
        self._apply(index, default_move(engine.legal_moves(self._match.deal, index),
                                        engine.move_to_wire))

    def _bot_for(self, index: int) -> BotPlayer:
        bot = self._bots.get(index)
        seat = self._seats[index]
        level = seat.level if seat.kind == "bot" and seat.level else self.settings.stand_in_level
        if bot is None or bot.level != level:
            bot = make_bot(level, self._bot_rng,
                           self.settings.hard_budget_s if level == "hard" else None)
            self._bots[index] = bot
        return bot

    def _observe(self, events: list[dict[str, Any]]) -> None:
        for index, bot in list(self._bots.items()):
            if bot is self._thinking:
                # Still searching in its thread (its answer is stale now): never
                # touch it concurrently; the seat gets a fresh bot when next needed.
                del self._bots[index]
                continue
            bot.observe(engine.events_for(events, index))

    # -- presence: idle and disconnected players (issue 4) ----------------------------

    def present(self, p: Participant) -> None:
        """`p` acted (NET calls this on each request from it): reclaim its seat.

        Heartbeats (`ping`/`pong`) must not count: a client left open by an absent
        player answers them, and would take the seat back from its stand-in bot.
        """
        self._present(p)

    def _present(self, p: Participant) -> None:
        if p.player_id in self._members:
            self._members[p.player_id] = p
        index = self.seat_of(p)
        if index is None:
            return
        seat = self._seats[index]
        seat.timeouts = 0
        if seat.held is None or not p.connected:
            return
        seat.held = None
        log.info("table {table}: seat {seat} reclaimed", table=self.id, seat=index)
        self._changed()
        if self._acting(index):
            self._prompt_current()

    def _acting(self, index: int | None) -> bool:
        """True if seat `index` must decide now in a running deal."""
        return (index is not None and self.phase == "playing" and self._match is not None
                and self._match.deal.to_act == index)

    def disconnected(self, p: Participant) -> None:
        """The table goes on under the turn timer; after the grace period a bot sits in."""
        if p.player_id not in self._members:
            return
        index = self.seat_of(p)
        if index is not None and self.phase != "playing":
            self._seats[index].ready = False
        self._cancel_grace(p)
        self._grace_calls[p.player_id] = self._clock.callLater(
            self.settings.grace_seconds, self._grace_over, p.player_id)
        self._changed(exclude=p)

    def _grace_over(self, player_id: str) -> None:
        self._grace_calls.pop(player_id, None)
        p = self._members.get(player_id)
        if p is None or p.connected or self.closed:
            return
        index = self.seat_of(p)
        if index is None:
            return
        seat = self._seats[index]
        if self.phase == "playing":
            seat.held = "disconnected"
            log.info("table {table}: a bot holds seat {seat} for {player}", table=self.id,
                     seat=index, player=player_id)
            self._changed()
            if self._acting(index):
                self._prompt_current()
        else:
            seat.clear()  # no match to hold the seat for: free it, keep them watching
            self._spectators.append(player_id)
            self._changed()

    def _cancel_grace(self, p: Participant) -> None:
        cancel(self._grace_calls.pop(p.player_id, None))

    def reconnected(self, p: Participant) -> None:
        """`p` is back: a fresh full snapshot; a stand-in bot hands its seat back."""
        if p.player_id not in self._members:
            return
        self._members[p.player_id] = p
        self._cancel_grace(p)
        index = self.seat_of(p)
        reclaim = index is not None and self._seats[index].held is not None
        if index is not None:
            self._seats[index].held = None
            self._seats[index].timeouts = 0
        self._changed(exclude=p)
        if reclaim and self._acting(index):
            self._prompt_current(send=False)  # a fresh deadline, told in the snapshot
        self._send_snapshot(p)

    # -- chat and rematch ---------------------------------------------------------------

    def chat(self, p: Participant, text: str) -> None:
        self._present(p)
        self._check_open()
        self._require_member(p)
        try:  # the schema's rule for text shown to others: one line, no controls
            StrT(self.settings.chat_max_chars, text=True).check(text, "text")
        except ProtocolError as e:
            raise TableError("bad_field", f"chat {e.message}", field="text",
                             limit=self.settings.chat_max_chars) from None
        seat = self.seat_of(p)
        self._send_all({"type": "chat", "scope": "table", "table": self.id, "name": p.name,
                        "seat": seat, "spectator": seat is None, "text": text.strip()})

    def rematch(self, p: Participant, agree: bool) -> None:
        """Once the match is over: a new match on the same seats when every human agrees."""
        self._present(p)
        self._check_open()
        index = self._require_seat(p)
        if self.phase != "over":
            raise TableError("match_not_over", "a rematch is agreed once the match is over")
        self._seats[index].rematch = bool(agree)
        self._send_all({
            "type": "rematch", "table": self.id,
            "agreed": [s.index for s in self._seats if s.rematch],
            "declined": [s.index for s in self._seats if s.rematch is False],
        })
        if not self._maybe_rematch():
            self._changed()

    def _maybe_rematch(self) -> bool:
        """Start the rematch once every seat is filled and every human in one agreed."""
        if self.phase != "over":
            return False
        humans = [s for s in self._seats if s.kind == "human"]
        if not humans or any(s.kind == "open" for s in self._seats) \
                or not all(s.rematch for s in humans):
            return False
        log.info("table {table}: rematch agreed", table=self.id)
        self._start_match()
        return True
