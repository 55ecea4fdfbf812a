"""Typed refusals. Each carries a stable snake_case ``code`` for the wire and the
``rule`` it enforces (``"C6"``, ``"K10"``...), so clients can explain a refusal."""

from __future__ import annotations


class RuleError(Exception):
    code = "rule_error"

    def __init__(self, message: str, rule: str | None = None, code: str | None = None,
                 field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.rule = rule
        self.field = field
        """The move's field at fault, as the wire names it (``move.position``), if one is."""
        if code is not None:
            self.code = code

    def to_wire(self) -> dict[str, str]:
        out = {"code": self.code, "message": self.message}
        if self.rule:
            out["rule"] = self.rule
        if self.field:
            out["field"] = self.field
        return out


class NotYourTurn(RuleError):
    code = "not_your_turn"


class IllegalCard(RuleError):
    """A card the rules do not allow here (``rule`` names which)."""

    code = "illegal_card"


class IllegalMove(RuleError):
    """A move that is malformed or not allowed now (draw, pass, pick, card not held)."""

    code = "illegal_move"


class DealOver(RuleError):
    code = "deal_over"
