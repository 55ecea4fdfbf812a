"""Player names, as the server applies them: the rules live in `pisyedili.protocol.names`,
shared with clients, which check a name before they connect."""

from __future__ import annotations

from pisyedili.protocol.names import (
    UNICODE_VERSION,
    BadName,
    accept,
    bot_name,
    keys,
    normalise,
    reserved,
    skeleton,
)

__all__ = ["UNICODE_VERSION", "BadName", "accept", "bot_name", "keys", "normalise",
           "reserved", "skeleton"]
