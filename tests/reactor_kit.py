"""The reactor the tests share (pytest-twisted): a deadline on it, and its signals kept.

A deadline: pytest-timeout's alarm cannot end such a test: the alarm's exception is raised inside
the reactor's loop, which logs it and polls on, so a test awaiting a Deferred that never
fires would hang the whole run. Here every Deferred pytest-twisted waits for (a test's,
an async fixture's) is given a timeout on the reactor itself, a little shorter than
pytest-timeout's, so that such a test fails with a `TimeoutError` and the run goes on.

Its signals: the reactor hears of a signal, SIGCHLD among them, through the one wakeup
file descriptor a process has (`signal.set_wakeup_fd`). A test that runs an asyncio loop
in the same process (a prompt_toolkit application, which handles SIGWINCH) takes that
descriptor for its loop and, closing the loop, leaves none: from then on a child process
of the reactor that exits after closing its pipes is never reaped, and a test waiting
for its end waits for ever. `wakeup_kept` gives the descriptor back after each test.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from typing import Any, TypeVar

import pytest_twisted
from twisted.internet.defer import Deferred

T = TypeVar("T")

_PLUGIN: Any = pytest_twisted
"""The plugin's module, whose waiting function is not part of its typed interface."""

SECONDS = 280.0
"""Below the `timeout` of pyproject.toml (300), which is the backstop for the rest."""


def install(seconds: float = SECONDS) -> None:
    """Make pytest-twisted's wait on a Deferred give up after `seconds`."""
    blockon: Any = _PLUGIN.blockon_default
    if getattr(blockon, "deadline", None) is not None:
        return

    def blockon_within(d: Deferred[T]) -> T:
        d.addTimeout(seconds, _PLUGIN._instances.reactor)
        result: T = blockon(d)
        return result

    blockon_within.deadline = seconds  # type: ignore[attr-defined]
    _PLUGIN.blockon_default = blockon_within


def wakeup_kept() -> Iterator[None]:
    """Around one test: the signal wakeup descriptor it found (the reactor's, once it
    runs) is the one it leaves."""
    before = signal.set_wakeup_fd(-1)
    signal.set_wakeup_fd(before)
    yield
    if before != -1:
        signal.set_wakeup_fd(before)
