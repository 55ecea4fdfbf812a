"""The shapes messages share: cards, moves, options, seats, tables, the engine's view,
events and results, each checked by `validate` and documented once in docs/protocol.md.

The view, event and result shapes mirror what the rules engine emits (docs/architecture.md,
"Engine API"); validating them lets clients rely on every key, and makes any drift
between the engine and this contract fail the server's tests, which validate every frame.
"""

from __future__ import annotations

from . import limits as L
from .types import (
    BoolT,
    FloatT,
    IntT,
    ListT,
    MapT,
    NullableT,
    StrT,
    TaggedT,
    opt,
    req,
)

SEAT_RANGE: dict[str, tuple[int, int]] = {"classic": (2, 6), "cardiva": (2, 4)}
"""Seats a table of each rule set may have (C1: the product seats 2-6; K1: 2-4). The one
definition of the rule sets' names and sizes: server and client import it from here."""
RULE_SETS = tuple(SEAT_RANGE)
MAX_SEATS = max(high for _, high in SEAT_RANGE.values())
MAX_CARDS = 104  # two decks (K1)
BOT_LEVELS = ("easy", "medium", "hard")
"""The server's bot levels, weakest first (docs/bots.md)."""
TABLE_PHASES = ("waiting", "playing", "over")
LOBBY_ROWS = 4096
"""The most rows a `lobby` may hold, as the schema checks it (what a client accepts)."""
LOBBY_PAGE = 200
"""The most rows the reference server puts in one `lobby`: 200 rows of the largest size
are under a tenth of the server frame limit, so a page always fits, however many tables
there are (docs/protocol.md, "Frame sizes")."""
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
                     "muamele (K14): a position in the face-down spread, from 0 at its top "
                     "(see \"Replaying a deal\"); one the spread does not have is "
                     "`illegal_move` with `rule: \"K14\"` and `field: \"move.position\"`, "
                     "its message giving the range"),),
    },
    name="move",
    doc="which move: `play` a card, `draw`, `pass`, or `pick` in muamele",
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
        opt("turn_seconds", IntT(0, 3600), "seconds per decision, 0 = untimed"),
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
        opt("bot", BoolT(), "kind `human` only: true for a bot account; show it as a bot"),
        opt("level", StrT(6, choices=BOT_LEVELS), "a bot's level"),
        req("ready", BoolT(), "ready to start (bots always are)"),
        opt("connected", BoolT(), "human seats only: false while the player's connection "
                                  "is lost"),
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
        req("spectators", ListT(NAME, 4096), "spectators' names"),
        opt("spectator_count", COUNT, "number of spectators"),
        opt("rated", BoolT(), "as in `table_summary`"),
        opt("bot_accounts", BoolT(), "as in `table_summary`"),
        opt("named_for", NAME, "as in `table_summary`"),
        opt("quick", BoolT(), "as in `table_summary`"),
        opt("bots_in", IntT(0, L.MAX_ID), "a waiting quick table: seconds until bots fill it"),
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
        req("bots", IntT(0, MAX_SEATS), "seats held by bots: the server's and bot "
                                         "accounts"),
        req("spectators", COUNT, "number of spectators"),
        req("phase", StrT(7, choices=TABLE_PHASES), "table phase"),
        req("private", BoolT(), "joined only by invite code"),
        opt("host", NAME, "the host's name"),
        opt("rated", BoolT(), "its matches change ratings (absent: casual)"),
        opt("bot_accounts", BoolT(), "false: bot accounts get no seat (absent: they may sit)"),
        opt("named_for", NAME, "opened unnamed: the host's name, to word \"NAME's table\""),
        opt("quick", BoolT(), "opened by `play_now` (see Play now)"),
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

SHEET_ROWS = 200
"""The most rows a score sheet carries: every deal of a `deals:N` match (N is at most
100), the last 200 of a longer `points:N` one (each row's `totals` sums the rest)."""

SHEET_ROW = MapT(
    (
        req("deal_no", IntT(1, 100000), "the deal's number in the match, from 1"),
        req("reason", StrT(16), "as in its `result`"),
        req("winner", NullableT(SEAT), "as in its `result`"),
        req("multiplier", IntT(1, 100), "as in its `result` (C14, K13)"),
        req("points", ListT(POINTS, MAX_SEATS), "as in its `result`"),
        req("totals", ListT(POINTS, MAX_SEATS), "match totals per seat after this deal"),
    ),
    name="sheet_row",
)
SHEET = ListT(SHEET_ROW, SHEET_ROWS)

MATCH_INFO = MapT(
    (
        req("deal_no", IntT(0, 100000), "deals started so far (1 = the first deal)"),
        req("totals", ListT(POINTS, MAX_SEATS), "match totals per seat"),
        opt("sheet", SHEET, "a row per finished deal: [The score sheet](#the-score-sheet)"),
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
        req("named_suit", NullableT(SUIT), "the suit the jack on top asks for (C6, K8); nil "
                                           "for an opening jack of clubs, which names none: "
                                           "clubs, its own suit, are followed, and no jack "
                                           "(C2)"),
        req("pile", CARDS, "every card played this deal, bottom to top (all public)"),
        req("stock", CARD_COUNT, "cards left in the stock"),
        req("penalty", IntT(0, 1000), "cards the seat to act must draw unless it answers "
                                      "with a 7 (C11, K7)"),
        req("first_round", IntT(0, MAX_SEATS), "opening turns still to come; 0 once the "
                                               "opening is over (C2, K3)"),
        req("must_follow", NullableT(StrT(5, choices=("ace", "pisti"))),
            "the seat to act must play on after an ace (C12, K10) or a pişti (K11)"),
        req("drew", BoolT(), "the seat to act has drawn this turn (C7, K5); false once the "
                             "deal is over or in muamele, however it ended"),
        opt("drawn", NullableT(CARD), "in your own view only, when you drew owing a "
                                      "follow-up: the card drawn, the only one you may "
                                      "play (K10, K11)"),
        req("scores", ListT(POINTS, MAX_SEATS), "match totals per seat: before this deal "
                                                "while it is played, including it once it "
                                                "is over"),
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
        "reshuffle": (req("count", CARD_COUNT, "cards in the new stock (C15, K6)"),),
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
        "timeout": (_ACTOR, req("count", IntT(1, 10000), "timeouts in a row for this seat"),
                    req("bot", BoolT(), "true: a stand-in bot plays for the seat from now "
                                        "on, until its player acts again"),),
    },
    name="event",
    open=True,
    doc="the event's name",
    variant_docs={
        "deal_start": "a new deal was dealt: 7 cards each (C1, K2); the seat after the dealer "
                      "opens (C2, K3)",
        "play": "`seat` played `card`; `suit` is the suit a jack names (C5, K8)",
        "penalty": "`seat` must now draw `count` cards or answer with a 7 (C11, K7)",
        "skip": "an 8 skips `seat` (C9, C12a)",
        "reverse": "a 10 reversed the direction of play, now `direction` (C10)",
        "bounce": "a 10 sent the turn back to `seat` (K9)",
        "pisti": "a card on its twin: `seat` must play on (K11)",
        "draw": "`seat` drew `count` cards; `reason` is `draw`, `penalty` or `ace` (K10); "
                "`cards` only for the drawing seat",
        "reshuffle": "the discards under the top card became a new stock of `count` cards: "
                     "the table plays `empty_stock: reshuffle` (C15, K6), or a muamele "
                     "spread ran out",
        "stock_out": "`seat` had to draw from an empty stock: the deal ends (C15, K6)",
        "pass": "`seat` ended its turn without playing",
        "muamele": "`seat` must pick `picks` cards from a face-down spread of `spread` (K14)",
        "pick": "`seat` picked `card`; `picks` still to pick (K14)",
        "deal_end": "the deal is over: every hand revealed, the points scored (C13-C15, "
                    "K12-K14)",
        "match_end": "the match is over; `winners` share the lowest total (C16, K15)",
        "timeout": "`seat` ran out of time; the events after it are the move the server "
                   "made for it; `count` timeouts in a row; `bot`: a stand-in bot now plays "
                   "for the seat",
    },
)

TOTALS = ListT(POINTS, MAX_SEATS)

# -- finished matches (feature `history`) ------------------------------------------------

HISTORY_PAGE = 50
"""The most matches one `history` lists: 50 rows of the largest size are about a
twentieth of the server frame limit (docs/protocol.md, "Frame sizes")."""
REPLAY_MOVES = 1000
"""The most moves of a deal one `replay` carries. A deal has no upper bound on its
moves (reshuffles can go on: C15, K6), so a longer one comes in several pages."""
REPLAY_STEP_MOVES = 100
"""The most moves one `replay` with `steps` carries: each brings a position (every hand
face up), so its pages are shorter, to stay far below the frame limit."""
MAX_DECK_TEXT = MAX_CARDS * 4
"""A deck written out: 104 cards of at most 3 characters, each followed by a space."""
TIMESTAMP = FloatT(0, 1e12)
SEED = IntT(0, 2**64 - 1)

MATCH_PLAYER = MapT(
    (
        req("seat", SEAT, "seat number, 0-based"),
        req("name", NAME, "the player's (or bot's) name when the match started"),
        req("kind", StrT(5, choices=("human", "bot")), "who held the seat when the match "
                                                       "started"),
        opt("level", StrT(6, choices=BOT_LEVELS), "a bot's level"),
        opt("bot", BoolT(), "kind `human` only: true when a bot account held the seat"),
        req("total", POINTS, "the seat's match total"),
        opt("left_at", TIMESTAMP, "when its player left mid-match (seconds since 1970, "
                                  "UTC): a server bot finished the seat"),
        opt("forfeit", BoolT(), "true: at a rated table, a forfeit (ranked below every "
                                "seat that played on)"),
    ),
    name="match_player",
)

MATCH_SUMMARY = MapT(
    (
        req("id", ID, "the match's id, for `replay`"),
        req("rules", StrT(7, choices=RULE_SETS), "rule set"),
        req("options", OPTIONS, "the match's options, with `rules` and `players`"),
        req("players", ListT(MATCH_PLAYER, MAX_SEATS, 2), "every seat, in seat order"),
        req("winners", ListT(SEAT, MAX_SEATS, 1), "the winning seats (lowest total: C16, "
                                                   "K15; a tie has several)"),
        req("deals", COUNT, "deals played"),
        req("started_at", TIMESTAMP, "when the match started, seconds since 1970 (UTC)"),
        req("finished_at", TIMESTAMP, "when it ended, seconds since 1970 (UTC)"),
        req("private", BoolT(), "played at a private table: listed and replayed only to "
                                "its players"),
    ),
    name="match_summary",
)

DEAL_RECORD = MapT(
    (
        req("options", OPTIONS, "the deal's options, with `rules` and `players`"),
        req("dealer", SEAT, "the deal's dealer; the next seat opens (C2)"),
        req("deck", StrT(MAX_DECK_TEXT), "the whole pack in dealing order, cards "
                                         "separated by spaces (see Replaying a deal)"),
        req("seed", SEED, "seeds the reshuffles of the discards (C15, K6, K14)"),
        req("moves", ListT(MOVE, REPLAY_MOVES), "the deal's moves in order, from "
                                                "`replay.from` on"),
    ),
    name="deal_record",
)

REPLAY_STEP = MapT(
    (
        req("move", NullableT(MOVE), "the move that led here; nil for the position "
                                     "before `replay.from`"),
        req("seat", NullableT(SEAT), "the seat that made it; nil with `move`"),
        req("events", ListT(EVENT, 256), "what it caused, in order, nothing hidden"),
        req("hands", ListT(CARDS, MAX_SEATS), "every seat's hand, face up, sorted"),
        req("phase", StrT(7, choices=("play", "muamele", "over")), "deal phase"),
        req("turn", NullableT(SEAT), "the seat to decide next; nil when over"),
        # The rest is a spectator's `view` of the position: said once, there.
        req("direction", IntT(-1, 1), "as in `view`"),
        req("top", NullableT(CARD), "as in `view`"),
        req("named_suit", NullableT(SUIT), "as in `view`"),
        req("stock", CARD_COUNT, "as in `view`"),
        req("penalty", IntT(0, 1000), "as in `view`"),
        req("muamele", NullableT(MUAMELE), "as in `view`"),
    ),
    name="replay_step",
)


# The named shapes messages share, each documented once in docs/protocol.md.
RATING_VALUE = FloatT(-1000, 1000)
SHOWN_RATING = IntT(0, 100_000)
"""The rating players read (`display`, server/people/rating_scale.py): with mu at most
1000 (`RATING_VALUE`) it stays under 41,000."""
SHOWN = req("display", SHOWN_RATING, "the rating to show")
PROVISIONAL = req("provisional", BoolT(), "show it marked provisional: `1500?`")
RATING_POINT = MapT(
    (
        req("at", FloatT(0, 1e11), "when the match ended"),
        SHOWN,
    ),
    name="rating_point",
)
RATING_CHANGE_SEAT = MapT(
    (
        req("seat", SEAT, "the seat"),
        req("name", NAME, "its player, or bot level"),
        req("before", SHOWN_RATING, "`display` before the match"),
        req("after", SHOWN_RATING, "and after"),
        req("provisional", BoolT(), "`after` is provisional"),
    ),
    name="rating_change_seat",
)
LADDER_ROW = MapT(
    (
        req("rank", IntT(1, L.MAX_ID), "place on the ladder, from 1"),
        req("name", NAME, "the account's name, or the bot level's"),
        req("kind", StrT(6, choices=("player", "bot")), "a registered player or a bot level"),
        opt("level", StrT(6, choices=BOT_LEVELS), "the bot level (kind `bot`)"),
        opt("bot", BoolT(), "kind `player` only: true for a bot account"),
        SHOWN,
        PROVISIONAL,
        req("rating", RATING_VALUE, "mu - 3 sigma"),
        req("mu", RATING_VALUE, "OpenSkill mean skill"),
        req("sigma", FloatT(0, 1000), "OpenSkill uncertainty"),
        req("matches", COUNT, "rated matches played"),
        req("wins", COUNT, "rated matches won"),
    ),
    name="ladder_row",
)
RATING = MapT(
    (
        req("rules", StrT(7, choices=RULE_SETS), "rule set"),
        SHOWN,
        PROVISIONAL,
        req("history", ListT(RATING_POINT, 100), "after its last rated matches, oldest "
                                                 "first"),
        req("rating", RATING_VALUE, "mu - 3 sigma"),
        req("mu", RATING_VALUE, "OpenSkill mean skill"),
        req("sigma", FloatT(0, 1000), "OpenSkill uncertainty"),
        req("matches", COUNT, "rated matches played"),
        req("wins", COUNT, "rated matches won"),
        req("rank", IntT(1, L.MAX_ID), "place on the rule set's ladder"),
    ),
    name="rating",
)
RECENT_MATCH = MapT(
    (
        req("id", ID, "the match's id in the server's store"),
        req("rules", StrT(7, choices=RULE_SETS), "rule set"),
        req("finished_at", FloatT(0, 1e11), "when it ended (Unix seconds)"),
        req("rated", BoolT(), "it changed ratings"),
        req("seat", SEAT, "the player's seat"),
        req("total", POINTS, "the player's match total"),
        req("won", BoolT(), "the player won (or shared the win), playing to the end"),
        req("players", ListT(NAME, MAX_SEATS), "every seat's name, by seat"),
    ),
    name="recent_match",
)

SHAPES: dict[str, MapT | TaggedT] = {
    t.name: t
    for t in (MOVE, OPTIONS, SEAT_INFO, TABLE_INFO, TABLE_SUMMARY, YOU, MATCH_INFO,
              SHEET_ROW, VIEW, MUAMELE, RESULT, EVENT, MATCH_PLAYER, MATCH_SUMMARY,
              DEAL_RECORD, REPLAY_STEP, LADDER_ROW, RATING, RATING_POINT, RATING_CHANGE_SEAT,
              RECENT_MATCH)
}
