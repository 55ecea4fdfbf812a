"""Ratings as players read them: the ladder of `/top`, a `/profile`, and the change a
rated match made (`rating_change`).

The server sends each rating as `display` (1500 for a new player, never negative) and
`provisional`, which is shown as a mark after the number (`1500?`); docs/protocol.md,
"Accounts, ratings and moderation". An older server sends only mu - 3 sigma (`rating`),
shown as it was then.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..i18n import _, date, ngettext, number
from .settings import level_bot, rules_name, server_bot
from .table import shown_name
from .text import DEFAULT_LOOK, Fragments, Look

START = 1500
"""Where every rating starts (docs/protocol.md): the first point of a whole history."""
SPARKS = "▁▂▃▄▅▆▇█"
"""A sparkline's eight heights, lowest first."""
ASCII_SPARKS = "_.-~=+*#"
"""The same eight heights where the terminal shows ASCII alone (`--ascii`)."""
ASCII = str.maketrans({"→": "->", "−": "-", "±": "+-"})
"""The signs of a rating's lines, in ASCII."""
SPARK_POINTS = 40
"""A profile's sparkline shows at most this many of the latest points (one a column)."""


def rating_text(value: int, provisional: bool) -> str:
    """A rating as players read it: `1523`, or `1500?` while provisional."""
    return _("{rating}?", rating=value) if provisional else number(value)


def shown_rating(row: Mapping[str, Any]) -> str:
    """A ladder row's or profile rating's number, from whichever fields the server sent."""
    if isinstance(row.get("display"), int):
        return rating_text(row["display"], row.get("provisional") is True)
    return number(row.get("rating", 0), 2)


def signed(change: int) -> str:
    """A rating's change with its sign: `+23`, `−7`, `±0`."""
    if change > 0:
        return "+" + number(change)
    return "−" + number(-change) if change < 0 else "±" + number(0)


def sparkline(values: Sequence[int], width: int = SPARK_POINTS,
              look: Look = DEFAULT_LOOK) -> str:
    """The latest `width` of `values` as a line of block heights, lowest to highest."""
    sparks = SPARKS if look.unicode else ASCII_SPARKS
    shown = list(values)[-width:]
    if not shown:
        return ""
    low, high = min(shown), max(shown)
    if low == high:
        return sparks[len(sparks) // 2 - 1] * len(shown)
    top = len(sparks) - 1
    return "".join(sparks[round((v - low) * top / (high - low))] for v in shown)


def _in(look: Look, lines: list[Fragments]) -> list[Fragments]:
    """`lines` with their arrows and signs in ASCII where the look asks for it."""
    if look.unicode:
        return lines
    return [[(style, text.translate(ASCII)) for style, text in line] for line in lines]


def ladder_lines(msg: Mapping[str, Any]) -> list[Fragments]:
    """`/top`: the rating ladder of one rule set, settled ratings first."""
    rows = msg.get("rows") or []
    out: list[Fragments] = [[("class:title", _("Top {count} ({rules})", count=len(rows),
                                               rules=rules_name(msg.get("rules"))))]]
    provisional = any(row.get("provisional") is True for row in rows)
    if not rows:
        out.append([("class:dim", "  " + _("nobody has a settled rating of it yet"))])
    for row in rows:
        rank = f"{number(row['rank']):>3}"
        name = level_bot(row.get("level")) if row.get("kind") == "bot" else shown_name(row)
        out.append([("", f"  {rank}. {name:<24} {shown_rating(row):>7}  " + _(
            "({played} played, {won} won)", played=row["matches"], won=row["wins"]))])
    if not provisional and all("display" in row for row in rows):
        out.append([("class:dim", "  " + _("Provisional ratings are left out; /top all "
                                           "lists them after these."))])
    return out


def profile_lines(msg: Mapping[str, Any], look: Look = DEFAULT_LOOK) -> list[Fragments]:
    """`/profile NAME`: ratings with their history, then the latest matches."""
    out: list[Fragments] = [[("class:title", _("{name}: {matches} matches, {wins} won",
                                               name=shown_name(msg),
                                               matches=msg.get("matches", 0),
                                               wins=msg.get("wins", 0)))]]
    for r in msg.get("ratings") or []:
        if r.get("provisional") is True:  # not on the ladder yet: no place to show
            text = _("{rules}: rating {rating}, {matches} rated", rules=rules_name(r["rules"]),
                     rating=shown_rating(r), matches=r["matches"])
        else:
            text = _("{rules}: rating {rating}, #{rank}, {matches} rated",
                     rules=rules_name(r["rules"]), rating=shown_rating(r), rank=r["rank"],
                     matches=r["matches"])
        out.append([("", "  " + text)])
        history = [p["display"] for p in r.get("history") or []][-SPARK_POINTS:]
        # Every match of it shown: the line starts where every rating does.
        points = [START, *history] if len(history) == r.get("matches") else history
        if history:
            out.append([("", "    "), ("class:good", sparkline(points, look=look)),
                        ("class:dim", "  " + ngettext(
                            "{first} → {last}, the last {n} rated match",
                            "{first} → {last}, the last {n} rated matches", len(history),
                            first=points[0], last=points[-1]))])
    for m in msg.get("recent") or []:
        others = ", ".join(server_bot(n) or n for i, n in enumerate(m["players"])
                           if i != m["seat"])
        fields = {"when": date(m["finished_at"]), "rules": rules_name(m["rules"]),
                  "total": m["total"], "others": others}
        if m["rated"]:
            text = (_("{when} {rules} rated: won with {total} points vs {others}", **fields)
                    if m["won"] else
                    _("{when} {rules} rated: lost with {total} points vs {others}", **fields))
        else:
            text = (_("{when} {rules} casual: won with {total} points vs {others}", **fields)
                    if m["won"] else
                    _("{when} {rules} casual: lost with {total} points vs {others}", **fields))
        out.append([("class:dim", "  " + text)])
    return _in(look, out)


def rating_change_lines(msg: Mapping[str, Any], names: Mapping[int, str],
                        my_seat: int | None, my_name: str = "",
                        look: Look = DEFAULT_LOOK) -> list[Fragments]:
    """The end of a rated match: how each seat's rating moved (`rating_change`), the
    player's own line marked. `names`: the seats as the log calls them, at the match's
    table ("you", "bot 2"); elsewhere the server's names, and `my_name` is the player's."""
    out: list[Fragments] = [[("class:title", _("Ratings after the match ({rules}):",
                                               rules=rules_name(msg.get("rules"))))]]
    for seat in msg.get("seats") or []:
        provisional = seat.get("provisional") is True
        line = _("{name}: {before} → {after}, {change}",
                 name=names.get(seat.get("seat", -1))
                 or server_bot(seat["name"]) or seat["name"],
                 before=rating_text(seat["before"], provisional),
                 after=rating_text(seat["after"], provisional),
                 change=signed(seat["after"] - seat["before"]))
        mine = seat.get("seat") == my_seat if my_seat is not None else seat["name"] == my_name
        out.append([("class:me" if mine else "", "  " + line)])
    return _in(look, out)
