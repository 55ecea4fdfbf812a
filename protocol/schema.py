"""Every message of the protocol, as data, and `validate` that checks a decoded map.

This table is the source of truth: `docs/protocol.md` documents each message with a
field table (name, type as `describe()` writes it, required or not), and a test fails
when the two disagree. Unknown fields are ignored everywhere, so a newer peer may add
fields freely.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from . import limits as L
from .errors import ProtocolError
from .shapes import (
    BOT_LEVELS,
    COUNT,
    DEAL_RECORD,
    EVENT,
    HISTORY_PAGE,
    ID,
    LABEL,
    LADDER_ROW,
    LOBBY_ROWS,
    MATCH_INFO,
    MATCH_SUMMARY,
    MAX_SEATS,
    MOVE,
    NAME,
    OPTIONS,
    PLAYER_ID,
    RATING,
    RATING_CHANGE_SEAT,
    RECENT_MATCH,
    REPLAY_STEP,
    REPLAY_STEP_MOVES,
    RESULT,
    RULE_SETS,
    SEAT,
    SHAPES,
    SHEET,
    TABLE_ID,
    TABLE_INFO,
    TABLE_SUMMARY,
    VERSION,
    VIEW,
    YOU,
)
from .types import (
    BoolT,
    DictT,
    Field,
    FloatT,
    IntT,
    ListT,
    NullableT,
    StrT,
    check_fields,
    opt,
    req,
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
    `presence`: a request that shows its player is there (client requests only): it
    takes the seat back from a stand-in bot. Heartbeats and reads do not: a client
    left open by an absent player still answers pings.
    """

    type: str
    direction: Direction
    fields: tuple[Field, ...]
    doc: str
    one_of: tuple[str, ...] = ()
    feature: str | None = None
    answer: str = ""
    presence: bool = True

    def to_data(self) -> dict[str, Any]:
        return {"type": self.type, "direction": str(self.direction), "doc": self.doc,
                "fields": [f.to_data() for f in self.fields], "one_of": list(self.one_of),
                "feature": self.feature, "answer": self.answer,
                "presence": self.presence if self.direction is Direction.TO_SERVER else None}


# --- Messages ------------------------------------------------------------------------

REQUEST_ID = opt("id", ID, "request id, echoed in the replies")
STACKED_DECK_CHARS = 1024
"""A stacked deck is one string, not a list: two decks are 104 cards, more than a client
frame's arrays may hold; "10c " times 104 is 416 characters, with room for more spaces."""
HISTORY_OF = StrT(6, choices=("mine", "player", "recent"))
REPLY_ID = opt("id", ID, "the `id` of the request this answers")
DEFAULT_BOTS_AFTER = 60
"""`play_now.bots_after` when absent."""
INVITE_ENDS = ("accepted", "declined", "expired", "withdrawn", "unavailable", "gone")

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
    MessageSpec("ping", _S, (REQUEST_ID,), "Liveness check.", answer="`pong`",
                presence=False),
    MessageSpec("pong", _S, (REPLY_ID,), "Answer to the server's `ping`.", answer="nothing",
                presence=False),
    MessageSpec("lobby_subscribe", _S, (
        opt("offset", COUNT, "index of the first table wanted, from 0 (default 0)"),
        opt("limit", IntT(1, LOBBY_ROWS), "most tables wanted (default and most: the "
                                          "server's page size)"),
        REQUEST_ID,
    ), "Start receiving the table list, or ask for another page of it.",
        answer="`lobby`, then `lobby_update` as tables change", presence=False),
    MessageSpec("lobby_unsubscribe", _S, (REQUEST_ID,), "Stop receiving `lobby_update` messages.",
                answer="`ok`", presence=False),
    MessageSpec("create_table", _S, (
        req("rules", StrT(7, choices=RULE_SETS), "rule set"),
        req("seats", IntT(2, MAX_SEATS), "2-4 seats (2-6 for classic)"),
        opt("options", OPTIONS, "options; absent ones take the rule set's defaults"),
        opt("name", StrT(L.MAX_TABLE_NAME, text=True), "table name"),
        opt("private", BoolT(), "joined only by invite code (default false)"),
        opt("rated", BoolT(), "its matches change ratings; seats registered players and "
                              "bots only (default false); a guest's is `account_required`"),
        opt("deck", StrT(STACKED_DECK_CHARS),
            "a stacked deck: the cards in dealing order, separated by spaces (see Stacked "
            "decks)"),
        opt("bot_accounts", BoolT(), "bot accounts may sit (default true); false: a bot "
                                     "account is refused a seat (`bot_account_refused`)"),
        REQUEST_ID,
    ), "Open a table; you join it as its host and take seat 0.", answer="`table`"),
    MessageSpec("join_table", _S, (
        opt("table", TABLE_ID, "table id (public tables)"),
        opt("code", StrT(L.MAX_CODE), "invite code (any table)"),
        opt("spectate", BoolT(), "watch only (default false)"),
        REQUEST_ID,
    ), "Join a table by exactly one of `table` or `code` (neither: `missing_field` naming "
       "`table`; both: `bad_field` naming `code`). You take the first open seat, unless "
       "you ask to spectate, no seat is open or a match is being played: then you "
       "watch.", one_of=("table", "code"),
       answer="`table`"),
    MessageSpec("play_now", _S, (
        opt("rules", StrT(7, choices=RULE_SETS), "rule set (default classic)"),
        opt("seats", IntT(2, MAX_SEATS), "seats wanted (default: any)"),
        opt("rated", BoolT(), "a rated table (default false)"),
        opt("bots_after", IntT(0, L.MAX_BOTS_AFTER),
            f"a table you open: seconds until bots fill it (default {DEFAULT_BOTS_AFTER}; "
            "0: never)"),
        opt("level", StrT(6, choices=BOT_LEVELS), "their level (default medium)"),
        REQUEST_ID,
    ), "Sit at the best waiting table, or open a quick one (see Play now).",
        answer="`table`"),
    MessageSpec("resync", _S, (REQUEST_ID,), "Ask for a fresh snapshot of your table.",
                answer="`table`", presence=False),
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
    MessageSpec("move", _S, (req("move", MOVE, "one of the `moves` you were offered"),
                             REQUEST_ID),
                "Make a move in the current deal.",
                answer="`ok` (then the `update`), or `error` naming the rule"),
    MessageSpec("chat", _S, (
        req("text", StrT(L.MAX_CHAT, text=True), "the line to say"),
        opt("scope", StrT(5, choices=("lobby", "table")),
            "default: `table` when at a table, else `lobby`"),
        REQUEST_ID,
    ), "Say something in the lobby or at your table.", feature="chat",
        answer="`ok`; the line then comes to everyone in scope as `chat`, you included"),
    MessageSpec("rematch", _S, (req("agree", BoolT(), "agree to play again"), REQUEST_ID),
                "After the match, agree (or not) to a new one with the same seats.",
                feature="rematch", answer="`ok`"),
    MessageSpec("invite", _S, (req("name", NAME, "a connected player"), REQUEST_ID),
                "Invite a player to your table (see Invitations).",
                feature="invites", answer="`ok`"),
    MessageSpec("answer_invite", _S, (
        req("invite", ID, "`invited.invite`"),
        req("accept", BoolT(), "false: decline"),
        REQUEST_ID,
    ), "Accept or decline an invitation.", feature="invites",
        answer="`table` (accepted) or `ok`"),
    MessageSpec("history", _S, (
        req("of", HISTORY_OF, "`mine`: matches you played (this session, or your "
                              "account); `player`: those `name` played; `recent`: every "
                              "public one"),
        opt("name", NAME, "the player, with `of: player` (needed there, ignored otherwise)"),
        opt("offset", COUNT, "index of the first match wanted, from 0 (default 0)"),
        opt("limit", IntT(1, HISTORY_PAGE), "most matches wanted (default and most: "
                                            f"{HISTORY_PAGE})"),
        REQUEST_ID,
    ), "List finished matches, newest first, a page at a time.", feature="history",
        answer="`history`", presence=False),
    MessageSpec("replay", _S, (
        req("match", ID, "a match id from `history`"),
        opt("deal", IntT(1, L.MAX_ID), "the deal wanted, from 1 (default 1)"),
        opt("from", COUNT, "index of the deal's first move wanted, from 0 (default 0)"),
        opt("steps", BoolT(), "also send each position, every hand face up (pages of "
                              "at most 100 moves; default false)"),
        REQUEST_ID,
    ), "Fetch one deal of a finished match, with everything needed to replay it.",
        feature="history", answer="`replay`", presence=False),
    MessageSpec("register", _S, (
        req("password", StrT(L.MAX_PASSWORD), "the password (see the password rules)"),
        opt("bot", BoolT(), "a bot's account, shown as one, for good (default false)"),
        REQUEST_ID,
    ), "Register the name you play under, with a password.", feature="accounts",
        answer="`account`", presence=False),
    MessageSpec("login", _S, (
        req("name", NAME, "the account's name"),
        opt("password", StrT(L.MAX_PASSWORD), "its password"),
        opt("token", StrT(L.MAX_TOKEN), "a login token from an earlier `account`"),
        REQUEST_ID,
    ), "Log in to an account by exactly one of `password` or `token`.",
        one_of=("password", "token"), feature="accounts", answer="`account`",
        presence=False),
    MessageSpec("logout", _S, (
        opt("token", StrT(L.MAX_TOKEN), "this client's login token, to revoke it"),
        opt("everywhere", BoolT(), "revoke every login token of the account "
                                   "(default false)"),
        REQUEST_ID,
    ), "Log out: you play on as a guest.", feature="accounts", answer="`account`",
        presence=False),
    MessageSpec("passwd", _S, (
        req("old", StrT(L.MAX_PASSWORD), "the current password"),
        req("new", StrT(L.MAX_PASSWORD), "the new password (the password rules of "
                                         "`register`)"),
        REQUEST_ID,
    ), "Change your account's password; every other login token is revoked.",
        feature="accounts", answer="`account`", presence=False),
    MessageSpec("leaderboard", _S, (
        opt("rules", StrT(7, choices=RULE_SETS), "rule set (default classic)"),
        opt("limit", IntT(1, 100), "most rows (default 20)"),
        opt("provisional", BoolT(), "true: provisional ratings too, last"),
        REQUEST_ID,
    ), "The top of a rule set's ladder.", feature="ratings", answer="`leaderboard`",
        presence=False),
    MessageSpec("profile", _S, (
        req("name", NAME, "an account's name"),
        REQUEST_ID,
    ), "A registered player's ratings and recent matches.", feature="ratings",
        answer="`profile`", presence=False),
    MessageSpec("kick", _S, (
        req("name", NAME, "a connected player"),
        opt("reason", StrT(L.MAX_REASON, text=True), "why, told to them and logged"),
        REQUEST_ID,
    ), "Operators: disconnect a player and end their session.", feature="moderation",
        answer="`ok`", presence=False),
    MessageSpec("mute", _S, (
        req("name", NAME, "an account, or a connected guest"),
        opt("minutes", IntT(1, L.MAX_MINUTES), "how long (default: until unmuted)"),
        opt("reason", StrT(L.MAX_REASON, text=True), "why, told and logged"),
        REQUEST_ID,
    ), "Operators: stop a player from chatting.", feature="moderation", answer="`ok`",
        presence=False),
    MessageSpec("unmute", _S, (req("name", NAME, "a muted player"), REQUEST_ID),
                "Operators: lift a mute.", feature="moderation", answer="`ok`",
                presence=False),
    MessageSpec("ban", _S, (
        opt("name", NAME, "an account, or a connected guest (their address is banned)"),
        opt("network", StrT(64), "an IP address or range, e.g. `203.0.113.0/24`"),
        opt("minutes", IntT(1, L.MAX_MINUTES), "how long (default: until unbanned)"),
        opt("reason", StrT(L.MAX_REASON, text=True), "why, told to them and logged"),
        REQUEST_ID,
    ), "Operators: ban an account or an address range by exactly one of `name` or "
       "`network`; whoever it covers is disconnected.", one_of=("name", "network"),
        feature="moderation", answer="`ok`", presence=False),
    MessageSpec("unban", _S, (
        opt("name", NAME, "a banned account"),
        opt("network", StrT(64), "a banned range, as it was banned"),
        REQUEST_ID,
    ), "Operators: lift a ban, by exactly one of `name` or `network`.",
        one_of=("name", "network"), feature="moderation", answer="`ok`", presence=False),
    MessageSpec("close_table", _S, (
        req("table", TABLE_ID, "the table's id"),
        opt("reason", StrT(L.MAX_REASON, text=True), "why, told to its members and logged"),
        REQUEST_ID,
    ), "Operators: close a table; its members are told `table_closed`.",
        feature="moderation", answer="`ok`", presence=False),
    MessageSpec("announce", _S, (
        req("text", StrT(L.MAX_CHAT, text=True), "the announcement"),
        REQUEST_ID,
    ), "Operators: send every connected player an `announcement`.", feature="moderation",
        answer="`ok`", presence=False),
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
        opt("table", TABLE_ID, "resumed at a table: its id (its `table` snapshot follows)"),
        opt("registered", BoolT(), "the resumed session is logged in to its name's "
                                   "account (feature `accounts`)"),
        opt("operator", BoolT(), "that account is a server operator (feature `accounts`)"),
        opt("test_decks", BoolT(), "true: `create_table` may stack the deck (see Stacked "
                                   "decks)"),
        REPLY_ID,
    ), "Accepts `hello`."),
    MessageSpec("error", _C, (
        req("code", StrT(64), "stable error code (see Errors)"),
        req("message", StrT(1000), "human-readable explanation"),
        opt("rule", StrT(8), "the rule that refused a move, e.g. `C6`"),
        opt("field", StrT(200), "the offending field, e.g. `move.card`"),
        opt("versions", ListT(VERSION, 64), "versions the server speaks"),
        opt("retry_after", FloatT(0, 60 * L.MAX_MINUTES),
            "seconds to wait"),
        opt("reason", StrT(L.MAX_REASON, text=True), "an operator's reason"),
        opt("limit", IntT(0, L.MAX_ID), "the limit that was exceeded"),
        opt("seat", SEAT, "the seat the refusal is about"),
        opt("waiting_for", ListT(SEAT, MAX_SEATS), "seats open or not ready (`table_not_ready`)"),
        opt("feature", LABEL, "the feature to ask for (`feature_not_negotiated`)"),
        REPLY_ID,
    ), "A refusal; nothing changed."),
    MessageSpec("ok", _C, (
        opt("done", StrT(L.MAX_CHAT + 200, text=True),
            "what was done, worded for the operator (moderation requests)"),
        REPLY_ID,
    ), "A request succeeded."),
    MessageSpec("ping", _C, (opt("id", ID, "echo it in `pong`"),),
                "Heartbeat: answer with `pong` carrying the same `id`."),
    MessageSpec("pong", _C, (REPLY_ID,), "Answer to `ping`."),
    MessageSpec("lobby", _C, (
        req("tables", ListT(TABLE_SUMMARY, LOBBY_ROWS), "one page of the tables, from "
                                                       "`offset` on, oldest first"),
        opt("total", COUNT, "how many tables the whole list holds (absent: `tables` is "
                            "all of them)"),
        opt("offset", COUNT, "the index of `tables[0]` in the whole list (absent: 0)"),
        REPLY_ID,
    ), "One page of the lobby's table list."),
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
        opt("deal_events", ListT(EVENT, 256), "the current deal's events so far (its last "
                                               "256), as you may see them: with `view`"),
        opt("moves", ListT(MOVE, 1024, 1), "your legal moves: present only when your seat "
                                            "must decide now"),
        opt("deadline", FloatT(0, 86400), "seconds the seat to act has left, when its "
                                          "turn is timed"),
        REPLY_ID,
    ), "Full snapshot of your table: the answer to `create_table`, `join_table` and "
       "`resync`, and sent after a resumed `welcome`."),
    MessageSpec("table_update", _C, (req("table", TABLE_INFO, "the table"),),
                "Seats, readiness, host, phase or spectators changed."),
    MessageSpec("update", _C, (
        req("table", TABLE_ID, "the table's id"),
        req("events", ListT(EVENT, 256), "what happened, in order, as you may see it "
                                          "(may be empty)"),
        req("view", VIEW, "your view after all of `events`"),
        opt("moves", ListT(MOVE, 1024, 1), "as in `table`"),
        opt("deadline", FloatT(0, 86400), "as in `table`"),
    ), "One step of the deal (a move, a deal's start, a decision handed back): its "
       "events, your view after them and, if it is your decision, your legal moves."),
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
    MessageSpec("invited", _C, (
        req("invite", ID, "its id"),
        req("from", NAME, "the inviter"),
        req("table", TABLE_SUMMARY, "the table"),
        req("expires_in", IntT(1, 3600), "seconds it stays open"),
    ), "You are invited to a table.", feature="invites"),
    MessageSpec("invite_ended", _C, (
        req("invite", ID, "the invitation"),
        req("reason", StrT(11, choices=INVITE_ENDS), "how (`gone`: the invitee's "
                                                     "connection dropped)"),
        opt("name", NAME, "to the inviter: the invitee"),
    ), "An invitation ended (see Invitations).", feature="invites"),
    MessageSpec("history", _C, (
        req("of", HISTORY_OF, "the list asked for"),
        opt("name", NAME, "whose matches: the `name` asked for, or yours for `mine`"),
        req("matches", ListT(MATCH_SUMMARY, HISTORY_PAGE), "one page of the list, newest "
                                                            "first"),
        req("total", COUNT, "how many matches the whole list holds"),
        req("offset", COUNT, "the index of `matches[0]` in the whole list"),
        REPLY_ID,
    ), "One page of finished matches.", feature="history"),
    MessageSpec("replay", _C, (
        req("match", MATCH_SUMMARY, "the match"),
        req("deal_no", IntT(1, L.MAX_ID), "the deal this is, from 1 (`match.deals` in all)"),
        req("result", RESULT, "the deal's outcome, as it was scored"),
        req("record", DEAL_RECORD, "how the deal went: its deck, dealer, seed and moves"),
        req("from", COUNT, "the index of `record.moves[0]` among the deal's moves"),
        req("move_count", COUNT, "how many moves the deal has in all"),
        opt("steps", ListT(REPLAY_STEP, REPLAY_STEP_MOVES + 1),
            "asked for with `steps`: the position before `record.moves[0]`, then the one "
            "after each of its moves"),
        opt("sheet", SHEET, "with `from` 0: the match's [score sheet](#the-score-sheet)"),
        REPLY_ID,
    ), "One deal of a finished match (or one page of its moves).", feature="history"),
    MessageSpec("account", _C, (
        req("player", PLAYER_ID, "your player id (a login may take over your account's "
                                 "other session, and its id)"),
        req("name", NAME, "your player name now"),
        req("token", StrT(L.MAX_TOKEN), "the resume token of your session now"),
        req("registered", BoolT(), "you are logged in to the account of `name`"),
        req("operator", BoolT(), "the account is a server operator"),
        opt("bot", BoolT(), "true: the account is a bot's (absent: a person's)"),
        opt("login", StrT(L.MAX_TOKEN), "a login token to remember instead of the password"),
        REPLY_ID,
    ), "Who you are after `register`, `login`, `logout` or `passwd`.", feature="accounts"),
    MessageSpec("leaderboard", _C, (
        req("rules", StrT(7, choices=RULE_SETS), "rule set"),
        req("rows", ListT(LADDER_ROW, 100), "best first"),
        REPLY_ID,
    ), "The top of a rule set's ladder.", feature="ratings"),
    MessageSpec("profile", _C, (
        req("name", NAME, "the account's name"),
        opt("bot", BoolT(), "true: a bot's account (absent: a person's)"),
        req("ratings", ListT(RATING, 8), "one per rule set it played rated matches of"),
        req("matches", COUNT, "matches kept that it played, rated or not"),
        req("wins", COUNT, "of those, the ones it won"),
        req("recent", ListT(RECENT_MATCH, 20), "its latest matches, newest first"),
        REPLY_ID,
    ), "A registered player's ratings and recent matches.", feature="ratings"),
    MessageSpec("rating_change", _C, (
        req("table", TABLE_ID, "the table's id"),
        req("match", ID, "the kept match's id"),
        req("rules", StrT(7, choices=RULE_SETS), "rule set"),
        req("seats", ListT(RATING_CHANGE_SEAT, MAX_SEATS), "by seat"),
    ), "How a rated match changed each seat's rating.",
        feature="ratings"),
    MessageSpec("announcement", _C, (
        req("text", StrT(L.MAX_CHAT, text=True), "the announcement"),
        req("by", NAME, "the operator who sent it"),
    ), "A server-wide announcement from an operator."),
    MessageSpec("table_closed", _C, (
        req("table", TABLE_ID, "the table's id"),
        opt("reason", StrT(L.MAX_REASON, text=True), "why"),
    ), "An operator closed your table: you are at no table now."),
    MessageSpec("table_lost", _C, (
        req("table", TABLE_ID, "the table's id"),
        req("cause", StrT(13, choices=("server_gone", "seat_released")),
            "why (see Running in a cluster)"),
    ), "In a cluster: you are at no table now, though you did not leave it."),
    MessageSpec("player_removed", _C, (
        req("table", TABLE_ID, "the table's id"),
        req("name", NAME, "the player removed"),
        opt("seat", NullableT(SEAT), "the seat they held, nil if none"),
        req("action", StrT(4, choices=("kick", "ban")), "how: kicked or banned"),
        opt("reason", StrT(L.MAX_REASON, text=True), "why, as the operator gave it"),
    ), "An operator removed a member of your table from the server."),
    MessageSpec("muted", _C, (
        opt("reason", StrT(L.MAX_REASON, text=True), "why, as the operator gave it"),
        opt("retry_after", IntT(1, 60 * L.MAX_MINUTES), "seconds left (absent: until lifted)"),
    ), "An operator muted you: your chat is refused (`muted`) until the mute ends."),
    MessageSpec("replaced", _C, (
        opt("message", StrT(1000), "human-readable explanation"),
    ), "Another connection resumed this session; the server closes this one."),
)

MESSAGES: dict[tuple[Direction, str], MessageSpec] = {
    (m.direction, m.type): m for m in _MESSAGES
}


_TO_SERVER = {m.type: m for m in _MESSAGES if m.direction is Direction.TO_SERVER}
_TO_CLIENT = {m.type: m for m in _MESSAGES if m.direction is Direction.TO_CLIENT}
"""`MESSAGES` per direction, by plain strings: every message received and validated
looks its spec up, and an `Enum` (in a tuple key, or alone) hashes in Python."""


def spec(type_: str, direction: Direction) -> MessageSpec:
    """The spec of `type_` in `direction`; `unknown_type` if there is none."""
    found = (_TO_SERVER if direction is Direction.TO_SERVER else _TO_CLIENT).get(type_)
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


def schema_data() -> dict[str, Any]:
    """The whole schema as plain data (JSON-serialisable), for tools in any language."""
    return {
        "messages": [m.to_data() for m in _MESSAGES],
        "shapes": {name: t.to_data() for name, t in SHAPES.items()},
    }
