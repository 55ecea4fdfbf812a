"""The protocol version and the optional features a connection may agree on.

The version changes only for incompatible changes (a field removed or its meaning
changed). Additions never bump it: unknown fields are ignored by both ends, and new
optional behaviour arrives as a feature, negotiated in `hello`/`welcome` the way
Freeciv's capability strings and CECP's `feature` command do.
"""

from __future__ import annotations

from collections.abc import Iterable

PROTOCOL_VERSION = 2

# Versions this code can speak; the server answers `unsupported_version` listing these.
SUPPORTED_VERSIONS: tuple[int, ...] = (2,)

# Optional features of version 2 (version 1's `turn_timer` and `resume` became part of
# the base protocol). A feature gates the message types that belong to it
# (see schema.MessageSpec.feature): the server sends them only on connections that agreed
# on the feature, and may refuse such requests elsewhere with `feature_not_negotiated`.
FEATURES: dict[str, str] = {
    "chat": "Lobby and table chat: `chat` in both directions.",
    "rematch": "After a match, seated players agree on a new one: `rematch` in both directions.",
    "history": "Finished matches: `history` lists them, `replay` fetches one deal by deal.",
    "accounts": "Registered names: `register`, `login`, `logout`, `passwd` and their "
                "answer `account`.",
    "ratings": "Ratings of registered players and bot levels: `leaderboard` and `profile` "
               "in both directions, and `rating_change` after a rated match.",
    "invites": "Invitations to a table: `invite`, `answer_invite`, `invited`, "
               "`invite_ended`.",
    "moderation": "Operator requests: `kick`, `mute`, `unmute`, `ban`, `unban`, "
                  "`close_table`, `announce`.",
}


def negotiate_features(
    requested: Iterable[str] | None, offered: Iterable[str] = FEATURES
) -> list[str]:
    """The features both ends agree on: those offered that the client asked for, sorted.

    A client that sends no `features` agrees on none: it speaks the base protocol,
    which is enough to play whole matches.
    """
    if requested is None:
        return []
    wanted = set(requested)
    return sorted(f for f in offered if f in wanted)
