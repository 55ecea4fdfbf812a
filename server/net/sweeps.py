"""The takeover of the tables nobody holds (`service/takeover.py`), as the relay
reaches it: told of a process gone, and waited on by a resume or a join that needs
a gone process's table.

The takeover is made from the relay, so the relay cannot be given it: it is given a
`Sweeps` as it is made, and the takeover joins it once it is made itself
(`service/assembly.py`, the one place this cycle is broken).
"""

from __future__ import annotations

from typing import Protocol

from twisted.internet.defer import Deferred

from pisyedili.server.joined_later import JoinedLater


class Sweeping(Protocol):
    """What the takeover does for the relay."""

    def gone(self, process: str) -> None:
        """A process is gone (told after the relay let its players go): its tables are
        swept for."""

    def settled(self) -> Deferred[None]:
        """Fires once a sweep that starts after this call is done (whatever it took)."""

    def taking(self) -> bool:
        """Whether tables claimed here have members not placed yet."""


class Sweeps(JoinedLater[Sweeping]):
    """Stands for the takeover until it is made, and passes everything on to it then."""

    def __init__(self) -> None:
        super().__init__("the takeover")

    def gone(self, process: str) -> None:
        self.joined.gone(process)

    def settled(self) -> Deferred[None]:
        return self.joined.settled()

    def taking(self) -> bool:
        return self.joined.taking()
