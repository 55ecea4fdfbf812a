"""Waiting in tests for something another party does: poll a predicate until it holds,
within a generous deadline on the real clock, and fail saying what never happened.

The deadline is a backstop for a hung test, never a measure of speed: it is far beyond
what the awaited thing takes on a busy 2-core machine, and a test passes as soon as the
predicate holds. `poll_until` blocks the calling thread (tests that drive processes);
`poll_until_async` lets the Twisted reactor run between tries (pytest-twisted tests).
Both return the predicate's first truthy value.

A test client that keeps the messages it got waits on the next one with `first_or_next`
and `arrived`: an event, with the deadline only as a backstop.
"""

import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from twisted.internet import reactor, task
from twisted.internet.defer import Deferred

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


Waiters = list[tuple[Callable[[T], bool], Deferred[T]]]
"""What a test client is waiting for: each wanted message and whom to tell."""


def first_or_next(seen: Sequence[T], waiters: Waiters[T], wanted: Callable[[T], bool],
                  timeout: float, clock: Any = reactor) -> Deferred[T]:
    """The first of `seen` that is `wanted`, or else the first such to come (once the
    client hands it to `arrived`); after `timeout` seconds, a failure instead."""
    for one in seen:
        if wanted(one):
            found: Deferred[T] = Deferred()
            found.callback(one)
            return found
    coming: Deferred[T] = Deferred()
    waiters.append((wanted, coming))
    coming.addTimeout(timeout, clock)
    return coming


def arrived(waiters: Waiters[T], one: T) -> None:
    """`one` came: each waiter that wants it (and has not timed out) is told."""
    for waiter in list(waiters):
        wanted, told = waiter
        if wanted(one) and not told.called:
            waiters.remove(waiter)
            told.callback(one)
