"""Bot policies: choose a move from a seat's view only (docs/bots.md)."""

from .policy import LEVELS, Observer, Policy, UnknownLevel, make_policy

__all__ = ["LEVELS", "Observer", "Policy", "UnknownLevel", "make_policy"]
