"""The wire's words for rule sets and bot levels, in the player's language both ways:
shown (`classic` → the language's word for it) and typed (`/create klasik 4` as
`/create classic 4`).

A key this client does not know (a newer server's) is shown as it is; the English key
is always understood when typed, so a command learnt in one language works in another.
"""

from __future__ import annotations

from .i18n import N_, _

RULE_SETS = {"classic": N_("classic"), "cardiva": N_("cardiva")}
"""Each rule set's name on screen."""

LEVELS = {"easy": N_("easy"), "medium": N_("medium"), "hard": N_("hard")}
"""Each bot level's name on screen."""


def rules_name(rules: object) -> str:
    """A rule set's name in the current language."""
    return _(RULE_SETS[rules]) if isinstance(rules, str) and rules in RULE_SETS else str(
        rules or "?")


def level_name(level: object) -> str:
    """A bot level's name in the current language."""
    return _(LEVELS[level]) if isinstance(level, str) and level in LEVELS else str(level or "")


def _typed(word: str, names: dict[str, str]) -> str | None:
    folded = word.casefold()
    for key, name in names.items():
        if folded in (key, _(name).casefold()):
            return key
    return None


def typed_rules(word: str) -> str | None:
    """The rule set `word` names, by its key or its name in the current language."""
    return _typed(word, RULE_SETS)


def typed_level(word: str) -> str | None:
    """The bot level `word` names, by its key or its name in the current language."""
    return _typed(word, LEVELS)
