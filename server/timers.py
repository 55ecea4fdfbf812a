"""The slice of Twisted's clock a table uses, typed structurally.

`IReactorTime` is a zope interface, which mypy (without the zope plugin) cannot
call methods on; these Protocols describe the same calls, so table code stays
strictly typed while the reactor and `task.Clock` are passed in unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, cast


class DelayedCall(Protocol):
    def active(self) -> bool: ...

    def cancel(self) -> None: ...


class Scheduler(Protocol):
    def seconds(self) -> float: ...

    def callLater(
        self, delay: float, callable: Callable[..., object], *args: object, **kw: object
    ) -> Any: ...


def as_scheduler(clock: object) -> Scheduler:
    """An `IReactorTime` provider (the reactor, `task.Clock`) seen as a `Scheduler`."""
    return cast(Scheduler, clock)


def cancel(call: DelayedCall | None) -> None:
    """Cancel `call` if it is still pending; harmless on None or a call that ran."""
    if call is not None and call.active():
        call.cancel()
