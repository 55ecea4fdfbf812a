"""A table's settings in the player's words: its rule set, a bot's level and name, and
its options.

On the wire these are keys (`classic`, `hard`, `empty_stock: end_deal`); on screen they
are words of the player's language, like everything else the screen says. A rule set
or level is typed as either (`../terms.py`); an option's values are typed as keys, which
`/help create` lists. A key this client does not know (a newer server's) is shown as it
is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..i18n import _, ngettext
from ..terms import LEVELS, RULE_SETS, level_name, rules_name

__all__ = ["LEVELS", "RULE_SETS", "bot_name", "bot_with_level", "level_bot", "level_name",
           "options_text", "rules_name", "server_bot"]


def bot_name(seat: int) -> str:
    """What a server bot is called: `bot 3`, by its seat counted from 1, at the table as
    in the history, a replay or an export (the server names it the same in English)."""
    return _("bot {seat}", seat=seat + 1)


def bot_with_level(seat: int, level: object) -> str:
    """A bot's name with its level, where the seats are listed: `bot 3 (hard)`."""
    if not level:
        return bot_name(seat)
    return _("bot {seat} ({level})", seat=seat + 1, level=level_name(level))


def level_bot(level: object) -> str:
    """A bot level as one rated player of the ladder: `bot (hard)`."""
    return _("bot ({level})", level=level_name(level))


_SERVER_BOT = re.compile(r"bot (?:(\d+)|\((\w+)\))")


def server_bot(name: object) -> str | None:
    """A name the server gives its bots (`bot 3`; `bot (hard)` in the records an earlier
    version kept) in the player's words, where only the name came (a profile's
    opponents); None for any other name. No person's name has that shape: the server
    refuses them."""
    found = _SERVER_BOT.fullmatch(name) if isinstance(name, str) else None
    if found is None:
        return None
    seat, level = found.groups()
    return bot_name(int(seat) - 1) if seat else level_bot(level)


def _match_end(value: str) -> str:
    kind, __, count = value.partition(":")
    if count.isdigit() and kind == "deals":
        return ngettext("{n} deal", "{n} deals", int(count))
    if count.isdigit() and kind == "points":
        return ngettext("{n} point", "{n} points", int(count))
    return value


def options_text(options: Mapping[str, Any] | None) -> str:
    """A table's options as a player says them, in the web page's words: the match, a
    10, the empty stock, the decks and the turn timer (`4 deals, 10 reverses, ...`);
    the rule set and the number of seats are said elsewhere."""
    opts = options or {}
    parts: list[str] = []
    if opts.get("match_end"):
        parts.append(_match_end(str(opts["match_end"])))
    ten = opts.get("ten")
    if ten:
        parts.append({"reverse": _("10 reverses"), "bounce": _("10 bounces")}.get(
            str(ten), f"10 {ten}"))
    stock = opts.get("empty_stock")
    if stock:
        parts.append({"end_deal": _("stock out ends"), "reshuffle": _("reshuffle")}.get(
            str(stock), str(stock)))
    decks = opts.get("decks")
    if isinstance(decks, int) and not isinstance(decks, bool):
        parts.append(ngettext("{n} deck", "{n} decks", decks))
    turn = opts.get("turn_seconds")
    if isinstance(turn, int) and not isinstance(turn, bool):
        parts.append(_("{n}s turns", n=turn) if turn else _("untimed"))
    # i18n: what separates the items of a list ("4 deals, 10 reverses").
    return _(", ").join(parts)
