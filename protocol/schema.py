"""Every message of the protocol, as data, and `validate` that checks a decoded map.

This table is the source of truth: `docs/protocol.md` documents each message with the
field table `render_fields` produces, and a test fails when the two disagree. Unknown
fields are ignored everywhere, so a newer peer may add fields freely.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from . import limits as L
from .errors import ProtocolError
from .types import (
    BoolT,
    DictT,
    Field,
    FieldType,
    FloatT,
    IntT,
    ListT,
    MapT,
    NullableT,
    StrT,
    TaggedT,
    check_fields,
)


class Direction(StrEnum):
    TO_SERVER = "to_server"
    TO_CLIENT = "to_client"


@dataclass(frozen=True)
class MessageSpec:
    """One message type in one direction.

    `feature`: the optional feature (version.FEATURES) this message belongs to; it is
    only exchanged on connections whose `welcome.features` lists it.
    `answer`: what the server sends back (client requests only), for the docs.
    """

    type: str
    direction: Direction
    fields: tuple[Field, ...]
    doc: str
    one_of: tuple[str, ...] = ()
    feature: str | None = None
    answer: str = ""

    def to_data(self) -> dict[str, Any]:
        return {"type": self.type, "direction": str(self.direction), "doc": self.doc,
                "fields": [f.to_data() for f in self.fields], "one_of": list(self.one_of),
                "feature": self.feature, "answer": self.answer}


def req(name: str, type_: FieldType, doc: str) -> Field:
    return Field(name, type_, True, doc)


def opt(name: str, type_: FieldType, doc: str) -> Field:
    return Field(name, type_, False, doc)


# --- Shared shapes -------------------------------------------------------------------

MAX_SEATS = 6
MAX_CARDS = 104  # two decks (K1)
RULE_SETS = ("classic", "cardiva")
BOT_LEVELS = ("easy", "medium", "hard")
TABLE_PHASES = ("waiting", "playing", "over")
SEAT_KINDS = ("open", "human", "bot")

SEAT = IntT(0, MAX_SEATS - 1, name="seat")
ID = IntT(0, L.MAX_ID, name="id")
TABLE_ID = ID
PLAYER_ID = ID
POINTS = IntT(-(2**31), 2**31 - 1, name="points")
VERSION = IntT(0, 2**31 - 1, name="version")
COUNT = IntT(0, L.MAX_ID, name="count")
NAME = StrT(L.MAX_NAME, text=True)
LABEL = StrT(L.MAX_LABEL)

CARD = StrT(3, pattern=r"(?i)(?:10|[2-9tjqka])[cdhs]", name="card")
SUIT = StrT(1, choices=("c", "d", "h", "s"), name="suit")

MOVE = TaggedT(
    "kind",
    {
        "play": (req("card", CARD, "the card played"),
                 opt("suit", SUIT, "the suit a jack names (C5, K8); only with a jack")),
        "draw": (),
        "pass": (),
        "pick": (req("position", IntT(0, MAX_CARDS - 1),
                     "muamele (K14): a position in the face-down spread, from 0"),),
    },
    name="move",
)

OPTIONS = MapT(
    (
        opt("ten", StrT(8, choices=("reverse", "bounce")), "what a 10 does (C10, K9)"),
        opt("empty_stock", StrT(10, choices=("end_deal", "reshuffle")),
            "what happens when the stock runs out (C15, K6)"),
        opt("match_end", StrT(12, pattern=r"deals:(?:[1-9][0-9]?|100)"
                                          r"|points:(?:[1-9][0-9]{0,3}|10000)",
                              name="match_end"),
            "`deals:N`, N 1-100 (C16), or `points:N`, N 1-10000 (K15)"),
        opt("decks", IntT(1, 2), "number of 52-card decks (K1)"),
        opt("turn_seconds", IntT(0, 3600), "seconds per decision, 0 = untimed (turn_timer)"),
        opt("rules", StrT(7, choices=RULE_SETS), "rule set (sent by the server only)"),
        opt("players", IntT(2, MAX_SEATS), "number of seats (sent by the server only)"),
    ),
    name="options",
    max_len=32,
)

SEAT_INFO = MapT(
    (
        req("seat", SEAT, "seat number, 0-based; play goes up the numbers (C3)"),
        req("kind", StrT(5, choices=SEAT_KINDS), "who holds the seat"),
        opt("name", NAME, "player or bot name (not for open seats)"),
        opt("player", PLAYER_ID, "the player id of a human"),
        opt("level", StrT(6, choices=BOT_LEVELS), "a bot's level"),
        req("ready", BoolT(), "ready to start (bots always are)"),
        req("connected", BoolT(), "false while a human's connection is lost"),
        opt("held_by_bot", StrT(12, choices=("disconnected", "idle")),
            "a stand-in bot plays for this human, and why"),
        opt("rematch", BoolT(), "after the match: agreed to a rematch (false: declined)"),
    ),
    name="seat_info",
)

TABLE_INFO = MapT(
    (
        req("id", TABLE_ID, "table id"),
        req("name", StrT(L.MAX_TABLE_NAME), "table name"),
        req("rules", StrT(7, choices=RULE_SETS), "rule set"),
        req("options", OPTIONS, "the table's options, every one filled in"),
        req("host", NullableT(PLAYER_ID), "player id of the host, nil if none"),
        opt("host_name", NullableT(NAME), "the host's name, nil if none"),
        req("phase", StrT(7, choices=TABLE_PHASES), "table phase"),
        req("private", BoolT(), "joined only by invite code"),
        opt("code", StrT(L.MAX_CODE), "invite code (sent to the table's members only)"),
        req("seats", ListT(SEAT_INFO, MAX_SEATS, 2), "every seat, in seat order"),
        req("spectators", ListT(NAME, 4096), "names of the spectators (a server may list "
                                              "only the first ones)"),
        opt("spectator_count", COUNT, "number of spectators"),
    ),
    name="table_info",
)

TABLE_SUMMARY = MapT(
    (
        req("id", TABLE_ID, "table id"),
        req("name", StrT(L.MAX_TABLE_NAME), "table name"),
        req("rules", StrT(7, choices=RULE_SETS), "rule set"),
        req("options", OPTIONS, "the table's options"),
        req("seats", IntT(2, MAX_SEATS), "number of seats"),
        req("taken", IntT(0, MAX_SEATS), "seats held by players or bots"),
        opt("free", IntT(0, MAX_SEATS), "open seats"),
        req("bots", IntT(0, MAX_SEATS), "seats held by bots"),
        req("spectators", COUNT, "number of spectators"),
        req("phase", StrT(7, choices=TABLE_PHASES), "table phase"),
        req("private", BoolT(), "joined only by invite code"),
        opt("host", NAME, "the host's name"),
    ),
    name="table_summary",
)

YOU = MapT(
    (
        req("seat", NullableT(SEAT), "your seat, nil if you hold none"),
        req("spectator", BoolT(), "you watch without a seat"),
        req("host", BoolT(), "you are the host"),
    ),
    name="you",
)

MATCH_INFO = MapT(
    (
        req("deal_no", IntT(0, 100000), "deals started so far (1 = the first deal)"),
        req("totals", ListT(POINTS, MAX_SEATS), "match totals per seat"),
    ),
    name="match_info",
)

CARDS = ListT(CARD, MAX_CARDS)
CARD_COUNT = IntT(0, MAX_CARDS)

RESULT = MapT(
    (
        req("reason", StrT(16), "`out`: `winner` shed every card (C13, K12); `stock_out`: "
                                "the stock ran out (C15, K6)"),
        req("winner", NullableT(SEAT), "the deal's winner; nil if nobody wins (K6, or a tie "
                                       "for lowest in C15)"),
        req("multiplier", IntT(1, 100), "1, 2 (out on a jack) or 3 (out on a 7) (C14, K13)"),
        req("points", ListT(POINTS, MAX_SEATS), "points each seat scores this deal, "
                                                "multiplier applied"),
        req("hands", ListT(CARDS, MAX_SEATS), "every seat's final hand, sorted"),
    ),
    name="result",
)

MUAMELE = MapT(
    (
        req("seat", SEAT, "the seat picking now"),
        req("picks", IntT(0, MAX_CARDS), "picks it has left"),
        req("spread", CARD_COUNT, "face-down cards to pick from"),
        req("queue", ListT(ListT(IntT(0, 1000), 2, 2), MAX_SEATS),
            "[seat, picks] of the seats still to pick"),
        req("winner", NullableT(SEAT), "the seat that went out"),
        req("multiplier", IntT(1, 100), "the deal's multiplier (K13)"),
    ),
    name="muamele",
)

VIEW = MapT(
    (
        req("rules", StrT(7, choices=RULE_SETS), "rule set"),
        req("options", OPTIONS, "the deal's options, with `rules` and `players`"),
        req("players", IntT(2, MAX_SEATS), "number of seats"),
        req("seat", NullableT(SEAT), "the seat this view is for; nil for spectators"),
        req("dealer", SEAT, "this deal's dealer; the next seat opens (C2)"),
        req("phase", StrT(7, choices=("play", "muamele", "over")), "deal phase"),
        req("turn", NullableT(SEAT), "the seat that must decide now; nil when over"),
        req("direction", IntT(-1, 1), "1: play goes up the seat numbers (C3); -1: down (C10)"),
        req("hand", NullableT(CARDS), "your hand, sorted; nil for spectators"),
        req("hand_counts", ListT(CARD_COUNT, MAX_SEATS), "cards in each seat's hand"),
        req("top", NullableT(CARD), "top of the discard pile; nil before the first play"),
        req("named_suit", NullableT(SUIT), "the suit the jack on top asks for (C6, K8)"),
        req("pile", CARDS, "every card played this deal, bottom to top (all public)"),
        req("stock", CARD_COUNT, "cards left in the stock"),
        req("penalty", IntT(0, 1000), "cards the seat to act must draw unless it answers "
                                      "with a 7 (C11, K7)"),
        req("first_round", IntT(0, MAX_SEATS), "opening turns still to come; 0 once the "
                                               "opening is over (C2, K3)"),
        req("must_follow", NullableT(StrT(5, choices=("ace", "pisti"))),
            "the seat to act must play on after an ace (C12, K10) or a pişti (K11)"),
        req("drew", BoolT(), "the seat to act has drawn this turn (C7, K5)"),
        req("scores", ListT(POINTS, MAX_SEATS), "match totals per seat before this deal"),
        req("deal_no", IntT(1, 100000), "this deal's number in the match, from 1"),
        req("muamele", NullableT(MUAMELE), "the muamele state (K14); nil outside it"),
        req("result", NullableT(RESULT), "the outcome, once the deal is over"),
    ),
    name="view",
)

_ACTOR = req("seat", SEAT, "the seat concerned")
EVENT = TaggedT(
    "event",
    {
        "deal_start": (req("deal_no", IntT(1, 100000), "the deal's number in the match"),
                       req("dealer", SEAT, "its dealer; the next seat opens (C2)")),
        "play": (_ACTOR, req("card", CARD, "the card played"),
                 opt("suit", SUIT, "the suit a jack names (C5, K8)")),
        "penalty": (_ACTOR, req("count", IntT(1, 1000),
                                "cards to draw unless it answers with a 7 (C11, K7)")),
        "skip": (_ACTOR,),
        "reverse": (req("direction", IntT(-1, 1), "the new direction of play (C10)"),),
        "bounce": (_ACTOR,),
        "pisti": (_ACTOR,),
        "draw": (_ACTOR, req("count", IntT(1, MAX_CARDS), "cards drawn"),
                 req("reason", StrT(16), "`draw`, `penalty` or `ace` (K10)"),
                 opt("cards", CARDS, "the cards drawn: for the drawing seat only")),
        "reshuffle": (req("count", CARD_COUNT, "cards in the new stock"),),
        "stock_out": (_ACTOR,),
        "pass": (_ACTOR,),
        "muamele": (_ACTOR, req("picks", IntT(0, MAX_CARDS), "cards it must pick"),
                    req("spread", CARD_COUNT, "face-down cards to pick from")),
        "pick": (_ACTOR, req("position", IntT(0, MAX_CARDS - 1), "the position picked"),
                 req("card", CARD, "the card picked (shown to all)"),
                 req("picks", IntT(0, MAX_CARDS), "picks left")),
        "deal_end": (req("result", RESULT, "the deal's outcome"),),
        "match_end": (req("totals", ListT(POINTS, MAX_SEATS), "final totals per seat"),
                      req("winners", ListT(SEAT, MAX_SEATS, 1), "the winning seats")),
    },
    name="event",
    open=True,
)

TOTALS = ListT(POINTS, MAX_SEATS)
TURN_FIELDS = (
    req("table", TABLE_ID, "the table's id"),
    req("seat", SEAT, "your seat, which must decide now"),
    req("moves", ListT(MOVE, 1024, 1), "the legal moves"),
    opt("deadline", FloatT(0, 86400), "seconds left to decide (turn_timer)"),
)
TURN = MapT(TURN_FIELDS, name="turn")
REQUEST_ID = opt("id", ID, "request id, echoed in the replies")
REPLY_ID = opt("id", ID, "the `id` of the request this answers")


# --- Messages ------------------------------------------------------------------------

_S = Direction.TO_SERVER
_C = Direction.TO_CLIENT

_MESSAGES: tuple[MessageSpec, ...] = (
    # Client to server.
    MessageSpec("hello", _S, (
        req("protocol", VERSION, "protocol version the client speaks"),
        req("name", NAME, "player name"),
        opt("token", StrT(L.MAX_TOKEN), "resume token from an earlier `welcome`"),
        opt("client", LABEL, "client program name"),
        opt("version", LABEL, "client program version"),
        opt("features", ListT(LABEL, L.MAX_FEATURES), "optional features the client wants"),
        REQUEST_ID,
    ), "First message of every connection.", answer="`welcome`, or `error` and close"),
    MessageSpec("ping", _S, (REQUEST_ID,), "Liveness check.", answer="`pong`"),
    MessageSpec("pong", _S, (REPLY_ID,), "Answer to the server's `ping`.", answer="nothing"),
    MessageSpec("lobby_subscribe", _S, (REQUEST_ID,), "Start receiving the table list.",
                answer="`lobby`, then `lobby_update` as tables change"),
    MessageSpec("lobby_unsubscribe", _S, (REQUEST_ID,), "Stop receiving lobby updates.",
                answer="`ok`"),
    MessageSpec("create_table", _S, (
        req("rules", StrT(7, choices=RULE_SETS), "rule set"),
        req("seats", IntT(2, MAX_SEATS), "2-4 seats (2-6 for classic)"),
        opt("options", OPTIONS, "options; absent ones take the rule set's defaults"),
        opt("name", StrT(L.MAX_TABLE_NAME, text=True), "table name"),
        opt("private", BoolT(), "joined only by invite code (default false)"),
        REQUEST_ID,
    ), "Open a table; you join it as its host and take seat 0.", answer="`table`"),
    MessageSpec("join_table", _S, (
        opt("table", TABLE_ID, "table id (public tables)"),
        opt("code", StrT(L.MAX_CODE), "invite code (any table)"),
        opt("spectate", BoolT(), "watch only (default false)"),
        REQUEST_ID,
    ), "Join a table by exactly one of `table` or `code`. You take the first open seat, "
       "unless you ask to spectate, no seat is open or a match is being played: then you "
       "watch.", one_of=("table", "code"), answer="`table`"),
    MessageSpec("leave_table", _S, (REQUEST_ID,), "Leave your table (and your seat).",
                answer="`ok`"),
    MessageSpec("sit", _S, (req("seat", SEAT, "an open seat"), REQUEST_ID),
                "Take an open seat (or move to another).", answer="`ok`"),
    MessageSpec("stand", _S, (REQUEST_ID,), "Give up your seat, staying at the table.",
                answer="`ok`"),
    MessageSpec("add_bot", _S, (
        req("seat", SEAT, "an open seat"),
        opt("level", StrT(6, choices=BOT_LEVELS), "bot level (default medium)"),
        REQUEST_ID,
    ), "Host only: put a bot on an open seat.", answer="`ok`"),
    MessageSpec("remove_bot", _S, (req("seat", SEAT, "a bot's seat"), REQUEST_ID),
                "Host only: remove a bot.", answer="`ok`"),
    MessageSpec("ready", _S, (req("ready", BoolT(), "ready or not"), REQUEST_ID),
                "Seated players: say whether you are ready to start.", answer="`ok`"),
    MessageSpec("start", _S, (REQUEST_ID,),
                "Host only: start the match. Every seat must be filled and every human but "
                "the host ready (the host's `start` is its ready).", answer="`ok`"),
    MessageSpec("move", _S, (req("move", MOVE, "one of the legal moves of `turn`"),
                             REQUEST_ID),
                "Make a move in the current deal.", answer="`ok`, or `error` naming the rule"),
    MessageSpec("chat", _S, (
        req("text", StrT(L.MAX_CHAT, text=True), "the line to say"),
        opt("scope", StrT(5, choices=("lobby", "table")),
            "default: `table` when at a table, else `lobby`"),
        REQUEST_ID,
    ), "Say something in the lobby or at your table.", feature="chat",
        answer="no `ok`: the line comes back as `chat` to everyone in scope, you included"),
    MessageSpec("rematch", _S, (req("agree", BoolT(), "agree to play again"), REQUEST_ID),
                "After the match, agree (or not) to a new one with the same seats.",
                feature="rematch", answer="`ok`"),
    # Server to client.
    MessageSpec("welcome", _C, (
        req("protocol", VERSION, "the protocol version of this connection"),
        req("server", LABEL, "server name"),
        req("version", LABEL, "server program version"),
        req("player", PLAYER_ID, "your player id"),
        req("name", NAME, "your player name"),
        req("token", StrT(L.MAX_TOKEN), "secret token to resume this session"),
        req("limits", DictT(IntT(0, L.MAX_ID), 64, name="limits"),
            "the server's limits (see Limits)"),
        req("features", ListT(LABEL, L.MAX_FEATURES), "the features agreed on"),
        opt("resumed", BoolT(), "true when `hello.token` resumed a session"),
        REPLY_ID,
    ), "Accepts `hello`."),
    MessageSpec("error", _C, (
        req("code", StrT(64), "stable error code (see Errors)"),
        req("message", StrT(1000), "human-readable explanation"),
        opt("rule", StrT(8), "the rule that refused a move, e.g. `C6`"),
        opt("field", StrT(200), "the offending field, e.g. `move.card`"),
        opt("versions", ListT(VERSION, 64), "versions the server speaks"),
        opt("retry_after", FloatT(0, 3600), "seconds to wait (`rate_limited`)"),
        opt("limit", IntT(0, L.MAX_ID), "the limit that was exceeded"),
        opt("seat", SEAT, "the seat the refusal is about"),
        opt("feature", LABEL, "the feature to ask for (`feature_not_negotiated`)"),
        REPLY_ID,
    ), "A refusal; nothing changed."),
    MessageSpec("ok", _C, (REPLY_ID,), "A request succeeded."),
    MessageSpec("ping", _C, (opt("id", ID, "echo it in `pong`"),),
                "Heartbeat: answer with `pong` carrying the same `id`."),
    MessageSpec("pong", _C, (REPLY_ID,), "Answer to `ping`."),
    MessageSpec("lobby", _C, (
        req("tables", ListT(TABLE_SUMMARY, 4096), "every table you may see"),
        REPLY_ID,
    ), "The lobby's table list."),
    MessageSpec("lobby_update", _C, (
        req("op", StrT(6, choices=("add", "update", "remove")), "what happened"),
        req("table", TABLE_ID, "the table's id"),
        opt("summary", TABLE_SUMMARY, "the table as it is now (`add` and `update`)"),
    ), "One table of the lobby changed."),
    MessageSpec("table", _C, (
        req("table", TABLE_INFO, "the table"),
        req("you", YOU, "where you are at it"),
        req("view", NullableT(VIEW), "your view of the current deal, nil before the first"),
        req("match", NullableT(MATCH_INFO), "the match so far, nil before it starts"),
        opt("turn", TURN, "your pending decision, as the `turn` message would give it"),
        REPLY_ID,
    ), "Full snapshot of your table, on joining and whenever you need to resync."),
    MessageSpec("table_update", _C, (req("table", TABLE_INFO, "the table"),),
                "Seats, readiness, host, phase or spectators changed."),
    MessageSpec("event", _C, (
        req("table", TABLE_ID, "the table's id"),
        req("event", EVENT, "what happened, with your private part if any"),
        req("view", VIEW, "your view after it"),
    ), "Something happened in the deal."),
    MessageSpec("turn", _C, TURN_FIELDS, "Your seat must decide: pick one of `moves`."),
    MessageSpec("deal_end", _C, (
        req("table", TABLE_ID, "the table's id"),
        req("deal_no", IntT(1, 100000), "which deal ended"),
        req("result", RESULT, "every hand revealed, points, multiplier, winner, reason"),
        req("totals", TOTALS, "match totals per seat after this deal"),
    ), "A deal is over."),
    MessageSpec("match_end", _C, (
        req("table", TABLE_ID, "the table's id"),
        req("totals", TOTALS, "final totals per seat"),
        req("winners", ListT(SEAT, MAX_SEATS, 1), "the winning seats (ties share)"),
    ), "The match is over."),
    MessageSpec("chat", _C, (
        req("scope", StrT(5, choices=("lobby", "table")), "where it was said"),
        req("name", NAME, "who said it"),
        req("text", StrT(L.MAX_CHAT, text=True), "what was said"),
        opt("table", TABLE_ID, "the table (scope `table`)"),
        opt("seat", NullableT(SEAT), "the speaker's seat, nil if none"),
        req("spectator", BoolT(), "the speaker is a spectator"),
    ), "A chat line.", feature="chat"),
    MessageSpec("rematch", _C, (
        req("table", TABLE_ID, "the table's id"),
        req("agreed", ListT(SEAT, MAX_SEATS), "seats that agreed so far"),
        opt("declined", ListT(SEAT, MAX_SEATS), "seats that declined"),
    ), "Rematch agreement changed; when every human seat agrees a new match starts.",
        feature="rematch"),
    MessageSpec("timeout", _C, (
        req("table", TABLE_ID, "the table's id"),
        req("seat", SEAT, "the seat whose time ran out"),
        opt("move", MOVE, "the move the server made for it"),
        opt("count", IntT(1, 10000), "timeouts in a row for this seat"),
        opt("bot", BoolT(), "true: a stand-in bot now plays for the seat"),
    ), "A seat ran out of time; the server moves for it (the events follow).",
        feature="turn_timer"),
    MessageSpec("replaced", _C, (
        opt("message", StrT(1000), "human-readable explanation"),
    ), "Another connection resumed this session; the server closes this one."),
)

MESSAGES: dict[tuple[Direction, str], MessageSpec] = {
    (m.direction, m.type): m for m in _MESSAGES
}


def spec(type_: str, direction: Direction) -> MessageSpec:
    """The spec of `type_` in `direction`; `unknown_type` if there is none."""
    found = MESSAGES.get((direction, type_))
    if found is None:
        raise ProtocolError("unknown_type", f"unknown message type {type_[:64]!r}")
    return found


def validate(msg: Mapping[str, Any], direction: Direction) -> dict[str, Any]:
    """Checks a decoded message against its spec and returns it (as a dict).

    Raises ProtocolError: `missing_type`, `unknown_type`, `missing_field`, `bad_field`
    (with `field` naming the offending field, dotted: `move.card`).
    """
    type_ = msg.get("type")
    if not isinstance(type_, str):
        raise ProtocolError("missing_type", "the map has no string 'type'")
    s = spec(type_, direction)
    check_fields(msg, s.fields, s.one_of, "")
    return dict(msg)


def request_id(msg: Mapping[str, Any]) -> int | None:
    """The message's `id` if it is a valid one: usable even when validation failed."""
    value = msg.get("id")
    try:
        ID.check(value, "id")
    except ProtocolError:
        return None
    assert isinstance(value, int)
    return value


# The named shapes messages share, each documented once in docs/protocol.md.
SHAPES: dict[str, MapT | TaggedT] = {
    t.name: t
    for t in (MOVE, OPTIONS, SEAT_INFO, TABLE_INFO, TABLE_SUMMARY, YOU, MATCH_INFO, TURN,
              VIEW, MUAMELE, RESULT, EVENT)
}


def schema_data() -> dict[str, Any]:
    """The whole schema as plain data (JSON-serialisable), for tools in any language."""
    return {
        "messages": [m.to_data() for m in _MESSAGES],
        "shapes": {name: t.to_data() for name, t in SHAPES.items()},
    }
