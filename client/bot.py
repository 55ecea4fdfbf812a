"""`pisyedili-bot`: a bot that plays on a server as an ordinary protocol client.

    pisyedili-bot HOST[:PORT] --level hard [--table ID | --code CODE] [--name NAME]

It talks through the same `Link` as the terminal client (client/wire.py: framing,
requests and replies, heartbeat, reconnection with its resume token), and decides with
the same policies as the server's bot seats, fed with what the server sends it: the
events and view of each `update`, and the legal `moves` when the decision is its own.
It is the proof that a third-party client can play, and a sparring partner. Without
`--table` or `--code` it joins the first public table with an open seat, waiting for
one; with `--create RULES` it opens a table, fills the other seats with server bots
(`--bots`) and starts the match itself. A dropped connection costs it nothing: it
resumes its session, and the server's snapshot gives back its seat and any pending
decision.
"""

from __future__ import annotations

import argparse
import random
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IReactorTime, IStreamClientEndpoint
from twisted.logger import Logger
from twisted.python.failure import Failure

from pisyedili.protocol.errors import ProtocolError
from pisyedili.protocol.limits import MAX_NAME, MAX_TABLE_NAME
from pisyedili.protocol.messages import make_move
from pisyedili.protocol.shapes import BOT_LEVELS, RULE_SETS, SEAT_RANGE
from pisyedili.server.bots import Policy, make_policy
from pisyedili.server.bots.wire import choose_wire, observe_wire

from .cli import DEFAULT_PORT, check_server, server_endpoint
from .terminal_text import visible_lines
from .wire import Ended, Link, Message, RequestFailed

log = Logger()

CLIENT_NAME = "pisyedili-bot"
EXIT_OK, EXIT_REFUSED, EXIT_LOST = 0, 1, 3
LEAVE_SECONDS = 5.0
"""How long a stopping bot waits for the server to answer its `leave_table`."""
RETRY = frozenset({"illegal_card", "illegal_move", "card_not_in_hand"})
"""Refusals of a move that the first legal move of the same decision may cure."""


@dataclass
class BotConfig:
    level: str = "medium"
    name: str = "bot"
    table: int | None = None
    code: str | None = None
    create: str | None = None  # a rule set: open a table and host it
    private: bool = False  # a created table is joined by invite code only
    seats: int = 2
    bots: str | None = "medium"  # server bots filling a created table; None: wait for people
    options: dict[str, Any] = field(default_factory=dict)
    matches: int = 1  # matches to play before leaving; 0 = keep playing (rematch)
    budget_s: float | None = None
    seed: int | None = None


class BotClient:
    """One session, one seat: join, get ready, answer every decision, leave at the end.

    `done` fires with the exit code once the bot has left and its connection is closed.
    """

    def __init__(self, cfg: BotConfig) -> None:
        self.cfg = cfg
        self.policy: Policy = self._new_policy()
        self.rng = random.Random(cfg.seed)
        self.done: Deferred[int] = Deferred()
        self.link: Link | None = None
        self.view: dict[str, Any] | None = None
        self.table: dict[str, Any] | None = None
        self.seat: int | None = None
        self.player: int | None = None
        self.host = False
        self.joined = False
        self.started = False
        self.matches = 0
        self.moves_sent = 0
        self.refused_moves = 0
        self.resumes = 0
        self._bots_asked: set[int] = set()
        self._leaving = False

    def _new_policy(self) -> Policy:
        return make_policy(self.cfg.level, budget_s=self.cfg.budget_s)

    # -- link -----------------------------------------------------------------------------

    def make_link(self, endpoint: IStreamClientEndpoint, clock: IReactorTime,
                  retry: Callable[[int], float] | None = None) -> Link:
        """The bot's link to the server at `endpoint` (not started)."""
        features = ["rematch"] if self.cfg.matches != 1 else []
        self.link = Link(endpoint, self.cfg.name, self.on_message, clock=clock,
                         on_status=self._status, on_unreadable=self._unreadable,
                         client=CLIENT_NAME, features=features, retry=retry)
        self.link.when_ended().addCallback(self._ended)
        return self.link

    def on_message(self, msg: Message) -> None:
        handler = getattr(self, "on_" + msg["type"], None)
        if handler is not None:
            handler(msg)

    def ask(self, msg: Message, then: Callable[[Message], object] | None = None) -> None:
        """Send a request; `then` gets its reply (an `error` included)."""
        if self.link is None:
            return
        d = self.link.request(msg)
        if then is not None:
            d.addCallback(then)
        d.addErrback(self._no_reply, msg["type"])

    def _no_reply(self, failure: Failure, kind: str) -> None:
        if isinstance(failure.value, RequestFailed):
            # A lost connection is resumed; the snapshot after it asks again if needed.
            log.info("no reply to {kind}: {why}", kind=kind, why=failure.getErrorMessage())
        else:
            log.failure("handling the reply to {kind}", failure, kind=kind)

    def stop(self, clock: IReactorTime | None = None, timeout: float = LEAVE_SECONDS) -> None:
        """Leave without finishing a match (the exit code is EXIT_OK).

        At a table it says `leave_table` first, so a server bot takes the seat at once
        (and an empty table closes) instead of holding it for the grace period. With a
        `clock`, a server silent for `timeout` seconds is left anyway.
        """
        link = self.link
        if self._leaving or link is None or not link.connected or self.table is None:
            self._finish(EXIT_OK, "stopped")
            return
        d = link.request({"type": "leave_table"})
        if clock is not None:
            d.addTimeout(timeout, clock)
        d.addBoth(lambda _: self._finish(EXIT_OK, "stopped"))

    def _status(self, text: str) -> None:
        log.info("{text}", text=text)

    def _unreadable(self, error: ProtocolError) -> None:
        # The message may have been our decision: a fresh snapshot carries it again.
        if self.table is not None:
            self.ask({"type": "resync"})

    def _ended(self, end: Ended) -> None:
        if end.code == "replaced":
            self._finish(EXIT_LOST, "replaced by another connection")
        elif end.code is not None:
            self._finish(EXIT_REFUSED, f"refused: {end.code}")

    def _finish(self, code: int, why: str) -> None:
        if self._leaving:
            return
        self._leaving = True
        log.info("bot leaves: {why}", why=why, exit_code=code)

        def closed(_: object) -> None:
            if not self.done.called:
                self.done.callback(code)

        if self.link is None:
            closed(None)
        else:
            self.link.stop().addBoth(closed)

    # -- lobby and seat ---------------------------------------------------------------------

    def on_welcome(self, msg: Message) -> None:
        log.info("connected as {name} (player {player})", name=msg["name"], player=msg["player"])
        self.player = msg["player"]
        if msg.get("resumed"):
            # The server follows with a table snapshot if we are at one; a lobby
            # subscription belonged to the old connection.
            self.resumes += 1
            if self.table is None and self._from_lobby():
                self.ask({"type": "lobby_subscribe"})
            return
        if self.table is not None:
            self._finish(EXIT_LOST, "the session expired and the seat with it")
            return
        cfg = self.cfg
        if cfg.create is not None:
            self.ask({"type": "create_table", "rules": cfg.create, "seats": cfg.seats,
                      "options": cfg.options, "name": f"{cfg.name}'s table"[:MAX_TABLE_NAME],
                      "private": cfg.private}, self._at_table)
        elif cfg.table is not None:
            self.ask({"type": "join_table", "table": cfg.table}, self._at_table)
        elif cfg.code is not None:
            self.ask({"type": "join_table", "code": cfg.code}, self._at_table)
        else:
            self.ask({"type": "lobby_subscribe"})

    def _from_lobby(self) -> bool:
        cfg = self.cfg
        return cfg.create is None and cfg.table is None and cfg.code is None

    def _at_table(self, reply: Message) -> None:
        """The reply to create or join: without a table there is nothing to do."""
        if reply["type"] == "error":
            self._finish(EXIT_REFUSED, f"refused: {reply['code']}")

    def on_lobby(self, msg: Message) -> None:
        """A page of the table list: join the first open seat on it, else read the
        next page until all `total` rows are seen, then wait for `lobby_update`."""
        if self.joined:
            return
        tables = msg["tables"]
        for summary in tables:
            if self._joinable(summary):
                return self._join(summary["id"])
        seen = msg.get("offset", 0) + len(tables)
        if tables and seen < msg.get("total", seen):
            self.ask({"type": "lobby_subscribe", "offset": seen})
            return
        log.info("no open seat yet; waiting for one")

    def on_lobby_update(self, msg: Message) -> None:
        summary = msg.get("summary")
        if summary is not None and self._joinable(summary):
            self._join(summary["id"])

    def _joinable(self, summary: dict[str, Any]) -> bool:
        free = summary.get("free", summary["seats"] - summary["taken"])
        return (
            not self.joined
            and summary["phase"] == "waiting"
            and free > 0
            and not summary["private"]
        )

    def _join(self, table_id: int) -> None:
        self.joined = True
        self.ask({"type": "lobby_unsubscribe"})
        self.ask({"type": "join_table", "table": table_id}, self._at_table)

    def on_table(self, msg: Message) -> None:
        """A snapshot: the reply to create/join/resync, or the one after a resume."""
        table = msg["table"]
        if self.table is None:
            log.info("at table {table_id} ({rules}), invite code {code}",
                     table_id=table["id"], rules=table["rules"], code=table.get("code"))
        else:
            # Events may have gone by unseen: what the policy inferred from them is stale.
            self.policy = self._new_policy()
        self.joined = True
        self.view = msg["view"]
        self._table_changed(table, msg["you"]["host"])
        moves = msg.get("moves")
        if moves:
            self._decide(moves)

    def on_table_update(self, msg: Message) -> None:
        table = msg["table"]
        host = table["host"] is not None and table["host"] == self.player
        self._table_changed(table, host)

    def _table_changed(self, table: dict[str, Any], host: bool) -> None:
        self.table, self.host = table, host
        seats = table["seats"]
        mine = [s["seat"] for s in seats if s["kind"] == "human" and s.get("player") == self.player]
        self.seat = seat = mine[0] if mine else None
        if table["phase"] != "waiting":
            return
        open_seats = [s["seat"] for s in seats if s["kind"] == "open"]
        if self.seat is None:
            if open_seats:
                self.ask({"type": "sit", "seat": open_seats[0]})
            return
        if not self.host:
            if not seats[self.seat]["ready"]:
                self.ask({"type": "ready", "ready": True})
            return
        # The host of a table it created: fill it with server bots, then start.
        if open_seats and self.cfg.bots is not None:
            for s in open_seats:
                if s not in self._bots_asked:
                    self._bots_asked.add(s)
                    self.ask({"type": "add_bot", "seat": s, "level": self.cfg.bots})
            return
        humans_ready = all(s["ready"] for s in seats if s["kind"] == "human" and s["seat"] != seat)
        if humans_ready and not open_seats and not self.started:
            self.started = True
            self.ask({"type": "start"})

    # -- play -----------------------------------------------------------------------------

    def on_update(self, msg: Message) -> None:
        events: list[dict[str, Any]] = msg["events"]
        observe_wire(self.policy, events)
        self.view = msg["view"]
        for e in events:
            kind = e.get("event")
            if kind == "deal_end":
                result = e["result"]
                log.info("deal {deal_no} over: winner {winner}, points {points}",
                         deal_no=self.view["deal_no"] if self.view else "?",
                         winner=result.get("winner"), points=result.get("points"))
            elif kind == "match_end":
                self._match_over(e)
            elif kind == "timeout" and e.get("seat") == self.seat:
                log.warn("ran out of time; the server moved for this seat")
        moves = msg.get("moves")
        if moves:
            self._decide(moves)

    def _decide(self, moves: list[dict[str, Any]]) -> None:
        move = moves[0]  # the server's list is legal: its first move is a safe fallback
        if self.view is None:
            log.warn("a decision before any view; playing the first legal move")
        else:
            try:
                move = choose_wire(self.policy, self.view, moves, self.rng)
            except Exception:
                log.failure("the policy failed; playing the first legal move")
        self._send_move(move, moves)

    def _send_move(self, move: dict[str, Any], moves: list[dict[str, Any]]) -> None:
        self.moves_sent += 1

        def replied(reply: Message) -> None:
            if reply["type"] != "error":
                return
            self.refused_moves += 1
            if reply["code"] in RETRY and move != moves[0]:
                self._send_move(moves[0], moves)  # once: the fallback is the first legal move
            # Otherwise a stale decision: the next `update` asks again.

        self.ask(make_move(move), replied)

    def _match_over(self, event: dict[str, Any]) -> None:
        self.matches += 1
        log.info("match over: totals {totals}, winners {winners}",
                 totals=event["totals"], winners=event["winners"])
        if self.cfg.matches and self.matches >= self.cfg.matches:
            self.ask({"type": "leave_table"},
                     lambda _: self._finish(EXIT_OK, "matches played"))
        else:
            self.ask({"type": "rematch", "agree": True})

    def on_error(self, msg: Message) -> None:
        # Requesters act on their replies; every refusal is logged here, once.
        log.warn("server refused: {code} {message}", code=msg["code"], message=msg["message"])


def connect(reactor: Any, endpoint: IStreamClientEndpoint, client: BotClient,
            retry: Callable[[int], float] | None = None) -> Deferred[int]:
    """Start a bot on `endpoint`; fires with its exit code once it has left."""
    client.make_link(endpoint, reactor, retry).start()
    return client.done


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="pisyedili-bot", description="A Pis Yedili bot that joins a server."
    )
    p.add_argument("address", metavar="HOST[:PORT]",
                   help=f"server (default port {DEFAULT_PORT}), or a Twisted client "
                        "endpoint string such as tls:example.org:7707")
    p.add_argument("--level", choices=BOT_LEVELS, default="hard")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--table", type=int, help="join this public table")
    where.add_argument("--code", help="join the table with this invite code")
    where.add_argument(
        "--create",
        choices=RULE_SETS,
        help="open a table with these rules, fill it with server bots, start",
    )
    p.add_argument("--seats", type=int, default=2, help="with --create: seats (default 2)")
    p.add_argument(
        "--bots",
        choices=(*BOT_LEVELS, "none"),
        default="medium",
        help="with --create: the server bots' level; none: wait for others to join",
    )
    p.add_argument("--private", action="store_true", help="with --create: invite code only")
    p.add_argument("--match-end", help="with --create: e.g. deals:1 or points:101")
    p.add_argument("--name", default=None,
                   help=f"player name, up to {MAX_NAME} characters (default: the level's "
                        "bot name)")
    p.add_argument("--matches", type=int, default=1, help="matches to play; 0 = forever")
    p.add_argument("--budget", type=float, default=None, help="hard: seconds per decision")
    p.add_argument("--seed", type=int, default=None)
    return p


def config_from(args: argparse.Namespace) -> BotConfig:
    options = {"match_end": args.match_end} if args.match_end else {}
    return BotConfig(
        level=args.level,
        name=args.name or f"{args.level}-bot",
        table=args.table,
        code=args.code,
        create=args.create,
        private=args.private,
        seats=args.seats,
        bots=None if args.bots == "none" else args.bots,
        options=options,
        matches=args.matches,
        budget_s=args.budget,
        seed=args.seed,
    )


def _refusal(args: argparse.Namespace) -> str | None:
    """What is wrong with the arguments, checked before connecting."""
    try:
        check_server(args.address)
    except ValueError as e:
        return str(e)
    if args.budget is not None and args.budget <= 0:
        return "--budget must be positive"
    if args.name is not None and not (args.name.strip() and len(args.name) <= MAX_NAME):
        return f"--name must be 1-{MAX_NAME} characters"
    if args.create is not None:
        low, high = SEAT_RANGE[args.create]
        if not low <= args.seats <= high:
            return f"--seats must be {low}-{high} for {args.create}"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """`pisyedili-bot`. SIGTERM or Ctrl-C (SIGINT) make it leave its table and exit 0,
    as `stop()` does; a second signal stops it without waiting for the server."""
    args = parser().parse_args(argv)
    refusal = _refusal(args)
    if refusal is not None:
        print(f"pisyedili-bot: {refusal}", file=sys.stderr)
        return 2
    from twisted.internet import reactor
    from twisted.logger import (
        FileLogObserver,
        ILogObserver,
        formatEventAsClassicLogText,
        globalLogBeginner,
    )

    def shown(event: Any) -> str | None:
        # The log quotes what the server said (refusals, names): a terminal reads it.
        text = formatEventAsClassicLogText(event)
        return None if text is None else visible_lines(text)

    observer = cast(ILogObserver, FileLogObserver(sys.stderr, shown))
    globalLogBeginner.beginLoggingTo([observer], redirectStandardIO=False)
    running: Any = reactor
    client = BotClient(config_from(args))
    outcome = {"code": EXIT_LOST}
    state = {"stopping": False, "signalled": False}

    def stop_reactor() -> None:
        # The only place that stops the reactor: a second stop raises ReactorNotRunning.
        if not state["stopping"]:
            state["stopping"] = True
            running.stop()

    def finished(result: int | Failure) -> None:
        if isinstance(result, Failure):
            log.failure("cannot play", result)
        else:
            outcome["code"] = result
        stop_reactor()

    def signalled(name: str) -> None:
        if state["signalled"]:
            log.info("{signal} again: stopping without waiting for the server", signal=name)
            stop_reactor()
            return
        state["signalled"] = True
        outcome["code"] = EXIT_OK
        log.info("{signal}: leaving", signal=name)
        client.stop(running)  # `done` fires once it has left: `finished` stops the reactor
        running.callLater(2 * LEAVE_SECONDS, stop_reactor)  # in case closing hangs

    def on_signal(number: int, frame: object) -> None:
        # Python runs this between two bytecodes, maybe inside the reactor's own code:
        # hand the work to the reactor loop.
        running.callFromThread(signalled, signal.Signals(number).name)

    def begin() -> None:
        if not client.done.called:  # a signal may have come first
            connect(running, server_endpoint(running, args.address), client)

    client.done.addBoth(finished)

    # Twisted's handlers would stop the reactor at once, under the bot's feet: the
    # connection is cut before the bot can leave, and the link tries to reconnect.
    previous = {number: signal.signal(number, on_signal)
                for number in (signal.SIGTERM, signal.SIGINT)}
    try:
        running.callWhenRunning(begin)
        running.run(installSignalHandlers=False)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    return outcome["code"]


if __name__ == "__main__":
    raise SystemExit(main())
