"""Size limits of frames and values, one set per direction.

The server decodes client frames with `CLIENT_FRAME_LIMITS` and sets its
`Int32StringReceiver.MAX_LENGTH` to `MAX_CLIENT_FRAME`; the client does the same with
`SERVER_FRAME_LIMITS`. Server frames may be larger: a table snapshot carries a whole view
and a lobby may list many tables. Per-field limits (names, chat) live in the schema.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class Limits:
    """What a decoder accepts in one frame body; each field's `doc` metadata says what it
    bounds, for the limit table of docs/protocol.md."""

    frame: int = field(metadata={"doc": "bytes of one frame body (prefix excluded)"})
    depth: int = field(metadata={"doc": "nesting of maps and arrays; the top-level map is depth 1"})
    str_len: int = field(metadata={"doc": "bytes in one string"})
    bin_len: int = field(metadata={"doc": "bytes in one binary (no message uses binaries)"})
    array_len: int = field(metadata={"doc": "items in one array"})
    map_len: int = field(metadata={"doc": "pairs in one map"})

    def to_wire(self) -> dict[str, int]:
        return asdict(self)


MAX_CLIENT_FRAME = 64 * 1024
MAX_SERVER_FRAME = 1024 * 1024

CLIENT_FRAME_LIMITS = Limits(
    frame=MAX_CLIENT_FRAME, depth=6, str_len=4096, bin_len=1024, array_len=64, map_len=64
)
"""What a client's frame may hold (the server decodes them with these)."""
SERVER_FRAME_LIMITS = Limits(
    frame=MAX_SERVER_FRAME, depth=16, str_len=16384, bin_len=1024, array_len=4096,
    map_len=1024,
)
"""What a server's frame may hold: the protocol's bound, not the operator's caps on a
running server (`ServerLimits`, server/net/limits.py)."""

# Per-field limits, counted in characters (Unicode code points), used by the schema and
# announced in `welcome.limits`.
MAX_NAME = 24  # player names
MAX_TABLE_NAME = 40
MAX_CHAT = 300
MAX_TOKEN = 128
MAX_CODE = 16  # invite codes
MAX_LABEL = 64  # client name, version strings, feature names
MAX_FEATURES = 32
MAX_PASSWORD = 1024  # argon2 takes any length; this bounds the work a request costs
MAX_REASON = 200  # a moderation action's stated reason
MAX_MINUTES = 10 * 366 * 24 * 60  # the longest timed ban or mute: ten years
MAX_BOTS_AFTER = 600  # the longest wait `play_now` may ask for before bots fill seats
MAX_ID = 2**53 - 1  # request ids: safe integers in every language
