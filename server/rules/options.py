"""Table options (docs/rules.md, "Table options"), validated once at the table."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .rulesets import RULESETS, RuleSet

TEN_CHOICES = ("reverse", "bounce")
EMPTY_STOCK_CHOICES = ("end_deal", "reshuffle")
MATCH_END_KINDS = ("deals", "points")
MAX_MATCH_DEALS = 100
MAX_MATCH_POINTS = 10_000

_KEYS = ("ten", "empty_stock", "match_end", "decks")


def parse_match_end(text: str) -> tuple[str, int]:
    """``deals:4`` -> ``("deals", 4)``; raises ``ValueError`` (C16, K15)."""
    if not isinstance(text, str) or ":" not in text:
        raise ValueError(f"match_end must be 'deals:N' or 'points:N', not {text!r}")
    kind, _, num = text.partition(":")
    limit = MAX_MATCH_DEALS if kind == "deals" else MAX_MATCH_POINTS
    if kind not in MATCH_END_KINDS or not num.isdigit() or not 1 <= int(num) <= limit:
        raise ValueError(
            f"match_end must be 'deals:N' (1-{MAX_MATCH_DEALS}) or "
            f"'points:N' (1-{MAX_MATCH_POINTS}), not {text!r}"
        )
    return kind, int(num)


@dataclass(frozen=True)
class Options:
    rules: str
    players: int
    ten: str
    empty_stock: str
    match_end: str
    decks: int

    @classmethod
    def make(cls, rules: str, players: int, **overrides: Any) -> Options:
        """Fill the defaults of docs/rules.md for ``rules`` and ``players``, apply
        overrides, validate."""
        rs = RULESETS.get(rules) if isinstance(rules, str) else None
        if rs is None:
            raise ValueError(f"unknown rules {rules!r} (expected one of {', '.join(RULESETS)})")
        if type(players) is not int or not rs.min_players <= players <= rs.max_players:
            raise ValueError(
                f"{rs.name} seats {rs.min_players}-{rs.max_players} players, not {players!r}"
            )
        unknown = sorted(set(overrides) - set(_KEYS))
        if unknown:
            raise ValueError(f"unknown option(s): {', '.join(map(str, unknown))}")
        values: dict[str, Any] = {
            "ten": rs.default_ten,
            "empty_stock": "end_deal",
            "match_end": rs.default_match_end,
            "decks": rs.default_decks(players),
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        if values["ten"] not in TEN_CHOICES:
            raise ValueError(f"ten must be one of {TEN_CHOICES}, not {values['ten']!r}")
        if values["empty_stock"] not in EMPTY_STOCK_CHOICES:
            raise ValueError(
                f"empty_stock must be one of {EMPTY_STOCK_CHOICES}, not {values['empty_stock']!r}"
            )
        kind, limit = parse_match_end(values["match_end"])
        values["match_end"] = f"{kind}:{limit}"  # one spelling, so equal options compare equal
        if type(values["decks"]) is not int or values["decks"] not in (1, 2):
            raise ValueError(f"decks must be 1 or 2, not {values['decks']!r}")
        return cls(rules=rs.name, players=players, **values)

    @property
    def ruleset(self) -> RuleSet:
        return RULESETS[self.rules]

    def to_wire(self) -> dict[str, Any]:
        return {
            "rules": self.rules,
            "players": self.players,
            "ten": self.ten,
            "empty_stock": self.empty_stock,
            "match_end": self.match_end,
            "decks": self.decks,
        }

    @classmethod
    def from_wire(cls, data: object) -> Options:
        """Validate a wire map; ``rules`` and ``players`` are required, the rest default."""
        if not isinstance(data, dict):
            raise ValueError("options must be a map")
        if "rules" not in data or "players" not in data:
            raise ValueError("options need 'rules' and 'players'")
        extra = {k: data[k] for k in _KEYS if k in data}
        return cls.make(data["rules"], data["players"], **extra)
