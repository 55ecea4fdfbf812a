"""Masking of events: the one place that decides what each seat may see of a move."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Event = dict[str, Any]

PRIVATE_KEYS = {"draw": "cards"}
"""Per event kind, the key only the event's own seat may see (a drawn card)."""


def events_for(events: Iterable[Event], seat: int | None) -> list[Event]:
    """The events as ``seat`` may see them (``None`` = a spectator, who sees no private part)."""
    out: list[Event] = []
    for ev in events:
        key = PRIVATE_KEYS.get(ev.get("event", ""))
        if key is not None and key in ev and (seat is None or ev.get("seat") != seat):
            ev = {k: v for k, v in ev.items() if k != key}
        out.append(ev)
    return out
