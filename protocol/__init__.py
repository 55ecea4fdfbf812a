"""The Pis Yedili wire protocol: codec, schema, error codes and version, without I/O.

Shared by the server and the client; imports neither, and no Twisted. `docs/protocol.md`
is the spec for client authors; this package is its executable form.
"""

from .codec import decode, decode_message, encode, frame, limits_for
from .errors import ERRORS, ErrorCode, ProtocolError
from .handshake import Hello, parse_hello, unsupported_version
from .limits import (
    CLIENT_FRAME_LIMITS,
    MAX_CLIENT_FRAME,
    MAX_SERVER_FRAME,
    SERVER_FRAME_LIMITS,
    Limits,
)
from .messages import (
    announced_limits,
    build,
    make_error,
    make_hello,
    make_move,
    make_ok,
    make_welcome,
)
from .schema import MESSAGES, Direction, MessageSpec, request_id, schema_data, spec, validate
from .version import FEATURES, PROTOCOL_VERSION, SUPPORTED_VERSIONS, negotiate_features

__all__ = [
    "CLIENT_FRAME_LIMITS",
    "ERRORS",
    "FEATURES",
    "MAX_CLIENT_FRAME",
    "MAX_SERVER_FRAME",
    "MESSAGES",
    "PROTOCOL_VERSION",
    "SERVER_FRAME_LIMITS",
    "SUPPORTED_VERSIONS",
    "Direction",
    "ErrorCode",
    "Hello",
    "Limits",
    "MessageSpec",
    "ProtocolError",
    "announced_limits",
    "build",
    "decode",
    "decode_message",
    "encode",
    "frame",
    "limits_for",
    "make_error",
    "make_hello",
    "make_move",
    "make_ok",
    "make_welcome",
    "negotiate_features",
    "parse_hello",
    "request_id",
    "schema_data",
    "spec",
    "unsupported_version",
    "validate",
]

