"""Waiting in tests for something another party does: poll a predicate until it holds,
within a generous deadline on the real clock, and fail saying what never happened.

The deadline is a backstop for a hung test, never a measure of speed: it is far beyond
what the awaited thing takes on a busy 2-core machine, and a test passes as soon as the
predicate holds. `poll_until` blocks the calling thread (tests that drive processes);
`poll_until_async` lets the Twisted reactor run between tries (pytest-twisted tests).
Both return the predicate's first truthy value.
"""

import time
from collections.abc import Callable
from typing import TypeVar

from twisted.internet import reactor, task

T = TypeVar("T")

BACKSTOP = 30.0
"""Seconds to wait for what takes well under one on an idle machine: a reply, a close,
a thread's store work, a timer's run."""

Explain = str | Callable[[], str]
"""What is awaited, for the failure's message: a text, or a function that also says how
things stand at the deadline (called only then)."""


def _check_deadline(started: float, timeout: float, what: Explain) -> None:
    """Fail, saying what was awaited, once `timeout` seconds have passed since `started`."""
    if time.monotonic() - started >= timeout:
        said = what() if callable(what) else what
        raise AssertionError(f"waited {timeout:g} s in vain for {said}")


def poll_until(predicate: Callable[[], T | None], timeout: float, what: Explain,
               interval: float = 0.02) -> T:
    """`predicate()`'s first truthy value, tried every `interval` seconds, in this thread."""
    started = time.monotonic()
    while not (found := predicate()):
        _check_deadline(started, timeout, what)
        time.sleep(interval)
    return found


async def poll_until_async(predicate: Callable[[], T | None], timeout: float, what: Explain,
                           interval: float = 0.01) -> T:
    """`predicate()`'s first truthy value, tried every `interval` seconds while the
    reactor runs (for a test under pytest-twisted)."""
    started = time.monotonic()
    while not (found := predicate()):
        _check_deadline(started, timeout, what)
        await task.deferLater(reactor, interval, lambda: None)
    return found
