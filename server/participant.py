"""The seam between the network layer and the tables.

A table never sees a socket: it talks to participants. The network layer's
session object implements `Participant`; tests use a list-backed fake. This keeps
tables drivable without sockets, and lets reconnection swap the transport under
a participant without the table noticing (issue 4).
"""

from __future__ import annotations

from typing import Any, Protocol

from pisyedili.protocol.errors import ProtocolError

Message = dict[str, Any]


class Participant(Protocol):
    """A person (or remote bot client) known to the server, connected or not."""

    @property
    def player_id(self) -> str:
        """Stable for the life of the session (survives reconnection)."""
        ...

    @property
    def name(self) -> str: ...

    @property
    def connected(self) -> bool:
        """False while the connection is lost and the grace period runs."""
        ...

    def send(self, msg: Message) -> None:
        """Queue one server→client message; dropped silently while disconnected."""
        ...


class TableError(ProtocolError):
    """A refused table command: a registered protocol error code, raised by a table."""
