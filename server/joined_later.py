"""A part of the server that another part calls before it exists: the second is made
from the first, so the first is given a `JoinedLater` as it is made, and the second
joins it once made itself (`service/assembly.py`, the one place such a cycle is
broken). Nothing asks it before the join: the server listens, and hears the
cluster, only once the whole graph is made; an ask before, or a second join, is a
wiring mistake and raises at once."""

from __future__ import annotations

from typing import Generic, TypeVar

Part = TypeVar("Part")


class JoinedLater(Generic[Part]):
    """Stands for `what` until it joins, and is its way in from then on (`joined`)."""

    def __init__(self, what: str) -> None:
        self._what = what
        self._part: Part | None = None

    def join(self, part: Part) -> None:
        """The part this stands for, made from the one this was given to."""
        if self._part is not None:
            raise RuntimeError(f"{self._what} joined twice")
        self._part = part

    @property
    def joined(self) -> Part:
        if self._part is None:
            raise RuntimeError(f"asked of {self._what} before {self._what} joined "
                               "(`service/assembly.py` joins it as it makes the server)")
        return self._part
