"""The slice of Twisted's `IReactorTime` the server uses, as typing Protocols.

zope interfaces do not type-check as classes under mypy (methods declared without
`self`), so code that only schedules and reads time depends on these structural
types instead; the reactor and `twisted.internet.task.Clock` both satisfy them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol


class Delayed(Protocol):
    """A scheduled call (`IDelayedCall`): what `Clock.callLater` returns."""

    def getTime(self) -> float: ...

    def active(self) -> bool: ...

    def cancel(self) -> None: ...

    def reset(self, secondsFromNow: float) -> None: ...


class Clock(Protocol):
    """Reads and schedules time (`IReactorTime`)."""

    def seconds(self) -> float: ...

    def callLater(self, delay: float, callable: Callable[..., Any], *args: Any,
                  **kwargs: Any) -> Delayed: ...
