"""Masking of events: the one place that decides what each seat may see of a move.

``apply`` returns events as plain wire dicts, each with an ``event`` kind:

- ``play``: ``seat``, ``card``, and ``suit`` when a jack names one (C5, K8)
- ``draw``: ``seat``, ``count``, ``reason`` (``draw``, ``penalty`` C11/K7, ``ace`` K10) and
  ``cards`` — private: only ``seat`` sees them
- ``pass``: ``seat``
- ``penalty``: ``seat`` (who must answer), ``count`` (cards pending) (C11, K7)
- ``skip``: ``seat`` skipped (C9); ``reverse``: new ``direction`` (C10);
  ``bounce``: ``seat`` the turn bounced to (K9); ``pisti``: ``seat`` (K11)
- ``reshuffle``: ``count`` of discards shuffled into a new stock or spread (C15, K14)
- ``stock_out``: ``seat`` who found the stock empty (C15, K6)
- ``muamele``: ``seat`` to pick, ``picks``, ``spread`` size (K14)
- ``pick``: ``seat``, ``position``, ``card`` (public), ``picks`` left (K14)
- ``deal_end``: ``result`` (reason, winner, multiplier, points, every hand)
- ``match_end`` (from ``Match``): ``totals``, ``winners``
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
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


def events_for_seats(events: Sequence[Event], seats: Sequence[int | None]) -> list[list[Event]]:
    """``events_for(events, s)`` for each ``s`` of ``seats``: a server masks a step's
    events for every member. Seats that see the same events (every one that drew
    nothing, spectators) share one list, so the lists must be read, never changed."""
    owners = {ev.get("seat") for ev in events
              if (key := PRIVATE_KEYS.get(ev.get("event", ""))) is not None and key in ev}
    public: list[Event] | None = None
    out: list[list[Event]] = []
    for seat in seats:
        if seat is not None and seat in owners:
            out.append(events_for(events, seat))
        else:
            if public is None:
                public = events_for(events, None)
            out.append(public)
    return out
