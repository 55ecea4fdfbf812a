"""A deadline for the tests that wait on the reactor (pytest-twisted).

pytest-timeout's alarm cannot end such a test: the alarm's exception is raised inside
the reactor's loop, which logs it and polls on, so a test awaiting a Deferred that never
fires would hang the whole run. Here every Deferred pytest-twisted waits for (a test's,
an async fixture's) is given a timeout on the reactor itself, a little shorter than
pytest-timeout's, so that such a test fails with a `TimeoutError` and the run goes on.
"""

from __future__ import annotations

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
