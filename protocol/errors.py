"""Every stable error code the protocol can carry, as data.

Clients branch on `code`, never on the human `message`, so a code once published is
never renamed or reused. `docs/protocol.md` has a table of these codes; a test checks
that the table and this registry agree, so add a code here and in the doc together.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ErrorCode:
    """One error code: its meaning, whether the server closes after sending it, and
    whether a client that was closed by it may usefully connect again.

    `reconnect` matters where the connection ends after the error: always for closing
    codes, sometimes for others (a flood is closed with `rate_limited`, a `hello` the
    server failed on with `internal_error`). True means the server went away for a
    reason that passes (full, idle, shutting down, a flood), so a client retries with
    backoff; False means retrying the same `hello` can only fail the same way.
    `reconnect_note` replaces that yes or no in the docs where it needs more words.
    `fields`: the `error` fields besides `code`, `message` and `id` that this code may
    carry, so a client knows what to read (docs/protocol.md's error table lists them).
    """

    code: str
    meaning: str
    closes: bool = False
    reconnect: bool = False
    fields: tuple[str, ...] = ()
    reconnect_note: str = ""


_ERRORS: tuple[ErrorCode, ...] = (
    # Framing and decoding (codec.py). A length prefix over the limit cannot be answered
    # in-stream: the server closes the connection (after sending this code if it can).
    # Over WebSocket a frame is one binary message, with no length prefix.
    ErrorCode("frame_too_large", "The frame's length prefix (over WebSocket: the message's "
              "length) is over the receiver's frame limit.", closes=True, reconnect=True,
              fields=("limit",)),
    ErrorCode("malformed_frame", "The frame body is not exactly one well-formed msgpack value."),
    ErrorCode("not_a_map", "The frame body is valid msgpack but not a map."),
    ErrorCode("missing_type", "The map has no `type` field, or `type` is not a string."),
    ErrorCode("invalid_utf8", "A msgpack string is not valid UTF-8."),
    ErrorCode("bad_key", "A map key is not a string."),
    ErrorCode("text_message", "A WebSocket text message arrived: every message is binary."),
    ErrorCode("ext_not_allowed", "The frame holds a msgpack extension type (timestamps included)."),
    ErrorCode("too_deep", "Maps and arrays are nested deeper than the depth limit."),
    ErrorCode("value_too_large", "A string, binary, array or map is longer than its limit."),
    # Schema validation (schema.py).
    ErrorCode("unknown_type", "No message of this `type` exists in this direction."),
    ErrorCode("missing_field", "A required field is absent (`field` names it).",
              fields=("field",), reconnect_note="— (for a `hello`: no)"),
    ErrorCode("bad_field", "A field has the wrong type, is out of range or too long "
              "(`field` names it).",
              fields=("field", "limit"), reconnect_note="— (for a `hello`: no)"),
    # Handshake and session.
    ErrorCode("unsupported_version", "The server does not speak the `protocol` version of "
              "`hello`; `versions` lists those it does.", closes=True, fields=("versions",)),
    ErrorCode("hello_required", "The first message of a connection must be `hello`.",
              closes=True),
    ErrorCode("already_welcomed", "`hello` was sent again on a connection already welcomed."),
    ErrorCode("bad_token", "The resume token is unknown or has expired; send `hello` "
              "without a token to start afresh.", closes=True, reconnect=True,
              reconnect_note="yes, without `token`"),
    ErrorCode("handshake_timeout", "No `hello` arrived in time after connecting.",
              closes=True, reconnect=True),
    ErrorCode("idle_timeout", "Nothing arrived for too long (not even `pong`).",
              closes=True, reconnect=True),
    ErrorCode("server_full", "The server has reached its connection limit.",
              closes=True, reconnect=True),
    ErrorCode("too_many_connections", "Too many connections from this address.",
              closes=True, reconnect=True),
    ErrorCode("too_many_sessions", "Too many sessions opened from this address (`limit` "
              "says how many); a dropped session ends after the grace period, and resuming "
              "one with its `token` is still allowed.", closes=True, reconnect=True,
              fields=("limit",)),
    ErrorCode("rate_limited", "Too many messages too fast: the message was ignored; wait "
              "`retry_after` seconds ([Limits](#limits)).", reconnect=True,
              fields=("retry_after",)),
    ErrorCode("too_slow", "The client read too slowly: more than `limit` bytes were waiting "
              "to be sent to it.", closes=True, reconnect=True, fields=("limit",)),
    ErrorCode("shutting_down", "The server is shutting down.", closes=True, reconnect=True),
    ErrorCode("feature_not_negotiated", "The request belongs to a feature that `welcome` "
              "did not list.", fields=("feature",)),
    ErrorCode("internal_error", "The server failed to handle the request; nothing "
              "changed.", reconnect=True),
    ErrorCode("cluster_unavailable", "In a cluster, the state the servers share, or the "
              "process holding your table, is out of reach for now. Try again after "
              "`retry_after` seconds ([Running in a cluster](#running-in-a-cluster) says "
              "what changed).", reconnect=True, fields=("retry_after",)),
    # Lobby and tables.
    ErrorCode("no_such_table", "No table with that id or invite code."),
    ErrorCode("private_table", "The table is private: join it with its invite code."),
    ErrorCode("already_at_table", "You are already at a table; leave it first."),
    ErrorCode("not_at_table", "You are at no table, and the request needs one: `resync`, "
              "`leave_table`, `sit`, `stand`, `add_bot`, `remove_bot`, `ready`, `start`, "
              "`move`, `rematch`, `invite`, a `chat` of scope `table`."),
    ErrorCode("too_many_tables", "The server allows no more open tables: from you, from your "
              "address or in all (`limit` says how many).", fields=("limit",)),
    ErrorCode("bad_options", "The table options are refused (`message` says which and why).",
              fields=("field",)),
    ErrorCode("test_decks_off", "`create_table.deck` on a server that deals no stacked "
              "decks (its `welcome` has no `test_decks`).", fields=("field",)),
    ErrorCode("no_such_seat", "The table has no seat with that number.", fields=("limit",)),
    ErrorCode("seat_taken", "The seat is not open.", fields=("seat",)),
    ErrorCode("not_seated", "The request needs you to hold a seat."),
    ErrorCode("not_a_bot", "The seat does not hold a bot.", fields=("seat",)),
    ErrorCode("not_host", "Only the table's host may do this."),
    ErrorCode("table_not_ready", "Not every seat is filled and ready yet.",
              fields=("waiting_for",)),
    ErrorCode("game_in_progress", "The table is playing a match; seats cannot change now."),
    ErrorCode("no_game", "The table is not playing a deal."),
    ErrorCode("match_not_over", "A rematch can only be agreed once the match is over."),
    # Invitations (feature `invites`; see Invitations).
    ErrorCode("invite_self", "You invited yourself."),
    ErrorCode("player_busy", "The invitee is at a table."),
    ErrorCode("not_invitable", "The invitee's client lacks `invites`."),
    ErrorCode("table_full", "Your table has no open seat."),
    ErrorCode("too_many_invites", "Over an invitation limit; wait `retry_after` seconds.",
              fields=("retry_after", "limit")),
    ErrorCode("player_elsewhere", "In a cluster: the invitee, or your table, is on another "
              "process."),
    ErrorCode("no_such_invite", "No open invitation of yours has that id."),
    # Finished matches (feature `history`).
    ErrorCode("no_such_match", "No finished match with that id that you may see (not "
              "finished, forgotten, or at a private table you did not sit at)."),
    ErrorCode("history_unavailable", "This server keeps no finished matches now (no store, "
              "or one that could not be opened)."),
    # Accounts (feature `accounts`).
    ErrorCode("accounts_unavailable", "This server keeps no accounts (it runs without a "
              "store)."),
    ErrorCode("name_registered", "The name, or one that looks like it, is registered to an "
              "account already."),
    ErrorCode("logged_in", "You are logged in to an account already; log out first."),
    ErrorCode("not_logged_in", "The request needs you to be logged in to an account."),
    ErrorCode("bad_login", "Wrong name, password or login token (which of them is not "
              "told)."),
    ErrorCode("too_many_logins", "Too many password attempts from your address, or one on "
              "that account from your address is still under way; wait `retry_after` "
              "seconds.", fields=("retry_after",)),
    ErrorCode("server_busy", "The server is checking as many passwords as it can; wait "
              "`retry_after` seconds.", fields=("retry_after",)),
    ErrorCode("weak_password", "The new password is too short, or blank (`limit`: the "
              "fewest characters).", fields=("limit",)),
    ErrorCode("bad_password", "The new password holds a control character or a "
              "bidirectional control ([Passwords](#passwords))."),
    ErrorCode("tls_required", "This server takes passwords only over TLS (or loopback)."),
    ErrorCode("account_required", "A rated table seats registered players (and bots) only: "
              "log in, or watch."),
    ErrorCode("bot_account_refused", "The table's host refuses bot accounts "
              "(`bot_accounts: false`): a bot account may watch it, not sit or open one."),
    # Moderation (feature `moderation`).
    ErrorCode("not_operator", "Only a server operator may do this."),
    ErrorCode("no_such_player", "Nobody of that name is connected, and (but for "
              "`invite`) no account has it."),
    ErrorCode("bad_network", "`network` is not an IP address or range (CIDR).", fields=("field",)),
    ErrorCode("muted", "An operator muted you: you cannot chat "
              "([`mute`](#mute-client--server)).",
              fields=("reason", "retry_after")),
    ErrorCode("banned", "You, your account or your address are banned "
              "([`ban`](#ban-client--server)).",
              closes=True, fields=("reason", "retry_after")),
    ErrorCode("kicked", "An operator removed you for `retry_after` seconds "
              "([`kick`](#kick-client--server)).", closes=True, reconnect=False,
              fields=("reason", "retry_after"), reconnect_note="after `retry_after`"),
    # Moves, refused by the rules engine; `rule` names the rule (e.g. "C6").
    ErrorCode("not_your_turn", "It is not your seat's decision.", fields=("rule",)),
    ErrorCode("illegal_card", "That card cannot be played now (`rule` says why).",
              fields=("rule",)),
    ErrorCode("illegal_move", "That move is not allowed now (`rule` says why).",
              fields=("rule", "field")),
    ErrorCode("card_not_in_hand", "The card played is not in your hand.", fields=("rule",)),
    ErrorCode("deal_over", "The deal is over; no more moves.", fields=("rule",)),
)

ERRORS: dict[str, ErrorCode] = {e.code: e for e in _ERRORS}

# Keys a ProtocolError's extras may not use: they are the error message's own fields.
_RESERVED = frozenset({"type", "code", "message", "id"})


class ProtocolError(Exception):
    """A refusal with a stable `code`; `extra` becomes extra fields of the `error` message."""

    def __init__(self, code: str, message: str, **extra: Any) -> None:
        if code not in ERRORS:
            raise ValueError(f"unregistered error code {code!r}")
        clash = _RESERVED.intersection(extra)
        if clash:
            raise ValueError(f"error extras may not use {sorted(clash)}")
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.extra = extra

    @property
    def closes(self) -> bool:
        """Whether the server closes the connection after sending this error."""
        return ERRORS[self.code].closes

    def to_message(self, id: int | None = None) -> dict[str, Any]:
        """The `error` message for this refusal, answering request `id` if given.

        Extras that are None (e.g. a move refused without a rule) are left out: the
        schema's optional fields are absent, never nil."""
        msg: dict[str, Any] = {"type": "error", "code": self.code, "message": self.message}
        if id is not None:
            msg["id"] = id
        msg.update((k, v) for k, v in self.extra.items() if v is not None)
        return msg
