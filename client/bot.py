"""`pisyedili-bot`: a bot that plays on a server as an ordinary protocol client.

    pisyedili-bot HOST[:PORT] --level hard [--table ID | --code CODE] [--name NAME]

It speaks the wire protocol through `pisyedili.protocol` only (codec, schema, version)
over Twisted's `Int32StringReceiver`, and decides with the same policies as the
server's bot seats, fed with what the server sends it: its view and the legal moves of
each `turn`. It is the proof that a third-party client can play, and a sparring
partner. Without `--table` or `--code` it joins the first public table with an open
seat, waiting for one; with `--create RULES` it opens a table, fills the other seats
with server bots (`--bots`) and starts the match itself.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from twisted.internet.defer import Deferred
from twisted.internet.endpoints import HostnameEndpoint, connectProtocol
from twisted.logger import Logger
from twisted.protocols.basic import Int32StringReceiver
from twisted.python.failure import Failure

from pisyedili.protocol.codec import decode_message, encode
from pisyedili.protocol.errors import ProtocolError
from pisyedili.protocol.limits import MAX_SERVER_FRAME
from pisyedili.protocol.schema import Direction
from pisyedili.protocol.version import PROTOCOL_VERSION
from pisyedili.server.bots import LEVELS, Policy, make_policy
from pisyedili.server.bots.wire import choose_wire, observe_wire

from .cli import DEFAULT_PORT, parse_address

log = Logger()

CLIENT_NAME = "pisyedili-bot"
EXIT_OK, EXIT_REFUSED, EXIT_LOST = 0, 1, 3
FATAL = frozenset(
    {
        "no_such_table",
        "private_table",
        "bad_options",
        "too_many_tables",
        "unsupported_version",
        "bad_name",
        "server_full",
        "too_many_connections",
    }
)
"""Refusals after which there is nothing a bot can usefully try next."""
RETRY = frozenset({"illegal_card", "illegal_move", "card_not_in_hand"})
"""Refusals of a move that the first legal move of the same turn may cure."""


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


class BotClient(Int32StringReceiver):
    """One connection, one seat: join, get ready, answer every `turn`, leave at the end."""

    MAX_LENGTH = MAX_SERVER_FRAME

    def __init__(self, cfg: BotConfig) -> None:
        self.cfg = cfg
        self.policy: Policy = make_policy(cfg.level, budget_s=cfg.budget_s)
        self.rng = random.Random(cfg.seed)
        self.done: Deferred[int] = Deferred()
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
        self._next_id = 1
        self._move_ids: dict[int, tuple[dict[str, Any], list[dict[str, Any]]]] = {}

    # -- wire -----------------------------------------------------------------------------

    def connectionMade(self) -> None:
        features = ["rematch"] if self.cfg.matches != 1 else []
        self.request(
            "hello",
            protocol=PROTOCOL_VERSION,
            name=self.cfg.name,
            client=CLIENT_NAME,
            features=features,
        )

    def connectionLost(self, reason: Failure | None = None) -> None:
        self._finish(EXIT_LOST, "connection lost")

    def request(self, type_: str, **fields: Any) -> int:
        rid = self._next_id
        self._next_id += 1
        self.sendString(encode({"type": type_, "id": rid, **fields}))  # type: ignore[no-untyped-call]
        return rid

    def stringReceived(self, string: bytes) -> None:
        try:
            msg = decode_message(string, Direction.TO_CLIENT)
        except ProtocolError as e:
            log.warn("ignoring a message the schema refuses: {code}", code=e.code)
            return
        handler = getattr(self, "on_" + msg["type"], None)
        if handler is not None:
            handler(msg)

    def _finish(self, code: int, why: str) -> None:
        if not self.done.called:
            log.info("bot leaves: {why}", why=why, exit_code=code)
            self.done.callback(code)
        transport: Any = self.transport
        if transport is not None:
            transport.loseConnection()

    # -- lobby and seat ---------------------------------------------------------------------

    def on_welcome(self, msg: dict[str, Any]) -> None:
        log.info("connected as {name} (player {player})", name=msg["name"], player=msg["player"])
        self.player = msg["player"]
        cfg = self.cfg
        if cfg.create is not None:
            self.request(
                "create_table",
                rules=cfg.create,
                seats=cfg.seats,
                options=cfg.options,
                name=f"{cfg.name}'s table",
                private=cfg.private,
            )
        elif cfg.table is not None:
            self.request("join_table", table=cfg.table)
        elif cfg.code is not None:
            self.request("join_table", code=cfg.code)
        else:
            self.request("lobby_subscribe")

    def on_lobby(self, msg: dict[str, Any]) -> None:
        for summary in msg["tables"]:
            if self._joinable(summary):
                return self._join(summary["id"])
        log.info("no open seat yet; waiting for one")

    def on_lobby_update(self, msg: dict[str, Any]) -> None:
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
        self.request("lobby_unsubscribe")
        self.request("join_table", table=table_id)

    def on_table(self, msg: dict[str, Any]) -> None:
        if not self.joined or self.table is None:
            table = msg["table"]
            log.info(
                "at table {table_id} ({rules}), invite code {code}",
                table_id=table["id"],
                rules=table["rules"],
                code=table.get("code"),
            )
        self.joined = True
        self.view = msg["view"]
        self._table_changed(msg["table"], msg["you"]["host"])
        if msg.get("turn") is not None:
            self.on_turn(msg["turn"])

    def on_table_update(self, msg: dict[str, Any]) -> None:
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
                self.request("sit", seat=open_seats[0])
            return
        if not self.host:
            me = seats[self.seat]
            if not me["ready"]:
                self.request("ready", ready=True)
            return
        # The host of a table it created: fill it with server bots, then start.
        if open_seats and self.cfg.bots is not None:
            for s in open_seats:
                self.request("add_bot", seat=s, level=self.cfg.bots)
            return
        humans_ready = all(s["ready"] for s in seats if s["kind"] == "human" and s["seat"] != seat)
        if humans_ready and not open_seats and not self.started:
            self.started = True
            self.request("start")

    # -- play -----------------------------------------------------------------------------

    def on_event(self, msg: dict[str, Any]) -> None:
        self.view = msg["view"]
        observe_wire(self.policy, [msg["event"]])

    def on_turn(self, msg: dict[str, Any]) -> None:
        moves: list[dict[str, Any]] = msg["moves"]
        move = moves[0]  # the server's list is legal: its first move is a safe fallback
        if self.view is None:
            log.warn("a turn before any view; playing the first legal move")
        else:
            try:
                move = choose_wire(self.policy, self.view, moves, self.rng)
            except Exception:
                log.failure("the policy failed; playing the first legal move")
        self._send_move(move, moves)

    def _send_move(self, move: dict[str, Any], moves: list[dict[str, Any]]) -> None:
        self.moves_sent += 1
        self._move_ids[self.request("move", move=move)] = (move, moves)

    def on_error(self, msg: dict[str, Any]) -> None:
        rid = msg.get("id")
        log.warn("server refused: {code} {message}", code=msg["code"], message=msg["message"])
        sent = self._move_ids.pop(rid, None) if isinstance(rid, int) else None
        if sent is not None:
            self.refused_moves += 1
            move, moves = sent
            if msg["code"] in RETRY and move != moves[0]:
                self._send_move(moves[0], moves)  # once: the fallback is the first legal move
            return  # otherwise a stale turn: the next `turn` asks again
        if msg["code"] in FATAL:
            self._finish(EXIT_REFUSED, f"refused: {msg['code']}")

    def on_deal_end(self, msg: dict[str, Any]) -> None:
        result = msg["result"]
        log.info(
            "deal {deal_no} over: winner {winner}, points {points}",
            deal_no=msg["deal_no"],
            winner=result.get("winner"),
            points=result.get("points"),
        )

    def on_match_end(self, msg: dict[str, Any]) -> None:
        self.matches += 1
        log.info(
            "match over: totals {totals}, winners {winners}",
            totals=msg["totals"],
            winners=msg["winners"],
        )
        if self.cfg.matches and self.matches >= self.cfg.matches:
            self.request("leave_table")
            self._finish(EXIT_OK, "matches played")
        else:
            self.request("rematch", agree=True)

    def on_ping(self, msg: dict[str, Any]) -> None:
        pong = {"type": "pong", **({"id": msg["id"]} if "id" in msg else {})}
        self.sendString(encode(pong))  # type: ignore[no-untyped-call]

    def on_replaced(self, msg: dict[str, Any]) -> None:
        self._finish(EXIT_LOST, "replaced by another connection")


def connect(reactor: Any, host: str, port: int, client: BotClient) -> Deferred[int]:
    """Connect a bot; fires with its exit code when it leaves."""
    d: Deferred[Any] = connectProtocol(  # type: ignore[no-untyped-call]
        HostnameEndpoint(reactor, host, port), client
    )

    def connected(_: object) -> Deferred[int]:
        return client.done

    result: Deferred[int] = d.addCallback(connected)
    return result


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="pisyedili-bot", description="A Pis Yedili bot that joins a server."
    )
    p.add_argument("address", metavar="HOST[:PORT]", help=f"server (default port {DEFAULT_PORT})")
    p.add_argument("--level", choices=LEVELS, default="hard")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--table", type=int, help="join this public table")
    where.add_argument("--code", help="join the table with this invite code")
    where.add_argument(
        "--create",
        choices=("classic", "cardiva"),
        help="open a table with these rules, fill it with server bots, start",
    )
    p.add_argument("--seats", type=int, default=2, help="with --create: seats (default 2)")
    p.add_argument(
        "--bots",
        choices=(*LEVELS, "none"),
        default="medium",
        help="with --create: the server bots' level; none: wait for others to join",
    )
    p.add_argument("--private", action="store_true", help="with --create: invite code only")
    p.add_argument("--match-end", help="with --create: e.g. deals:1 or points:101")
    p.add_argument("--name", default=None, help="player name (default: the level's bot name)")
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


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        host, port = parse_address(args.address)
    except ValueError as e:
        print(f"pisyedili-bot: {e}", file=sys.stderr)
        return 2
    if args.budget is not None and args.budget <= 0:
        print("pisyedili-bot: --budget must be positive", file=sys.stderr)
        return 2
    from twisted.internet import reactor
    from twisted.logger import ILogObserver, globalLogBeginner, textFileLogObserver

    observer = cast(ILogObserver, textFileLogObserver(sys.stderr))
    globalLogBeginner.beginLoggingTo([observer], redirectStandardIO=False)
    outcome = {"code": EXIT_LOST}
    running: Any = reactor

    def finished(result: int | Failure) -> None:
        if isinstance(result, Failure):
            log.failure("cannot play", result)
        else:
            outcome["code"] = result
        running.stop()

    running.callWhenRunning(
        lambda: connect(running, host, port, BotClient(config_from(args))).addBoth(finished)
    )
    running.run()
    return outcome["code"]


if __name__ == "__main__":
    raise SystemExit(main())
