"""What a client under test wrote to Twisted's in-memory `StringTransport`."""

import struct
from typing import Any

from twisted.internet.testing import StringTransport

from pisyedili.protocol.codec import decode
from pisyedili.protocol.limits import CLIENT_FRAME_LIMITS


def written(transport: StringTransport) -> list[dict[str, Any]]:
    """Every frame a client wrote to `transport`, decoded; the transport is emptied."""
    data, out = transport.value(), []  # type: ignore[no-untyped-call]
    transport.clear()  # type: ignore[no-untyped-call]
    while data:
        (n,) = struct.unpack(">I", data[:4])
        out.append(decode(data[4:4 + n], CLIENT_FRAME_LIMITS))
        data = data[4 + n:]
    return out
