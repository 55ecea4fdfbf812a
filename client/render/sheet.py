"""The score sheet (`/score`, and at each deal's end): a row per finished deal with each
seat's points, the deal's multiplier (C14, K13) or its stock-out (C15, K6), then the
match totals (C16, K15).

Rows are the protocol's `sheet_row`s, from the server or derived from a finished
match's results; the columns are cut to the terminal's width, names shortened first,
so the numbers always line up."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from prompt_toolkit.utils import get_cwidth

from ..i18n import _, number
from .text import Dict, Fragments, Look, wrap

NAME_COLUMNS = 12
"""The widest a seat's column grows for its name: numbers need far less."""


def _cut(text: str, cols: int) -> str:
    """`text` in at most `cols` terminal columns, an ellipsis marking a cut."""
    if get_cwidth(text) <= cols:
        return text
    out, used = "", 0
    for ch in text:
        w = get_cwidth(ch)
        if used + w > cols - 1:
            break
        out, used = out + ch, used + w
    return out + "…"


def _pad(text: str, cols: int, right: bool = False) -> str:
    gap = " " * max(0, cols - get_cwidth(text))
    return gap + text if right else text + gap


def _points(value: object) -> str:
    return number(value) if isinstance(value, int) and not isinstance(value, bool) else "?"


def _note(row: Dict, look: Look) -> str:
    """What made a deal's scores: its multiplier, or the stock running out."""
    mult = row.get("multiplier")
    if isinstance(mult, int) and mult > 1:
        return f"×{number(mult)}" if look.unicode else f"x{number(mult)}"
    return _("stock out") if row.get("reason") == "stock_out" else ""


def score_sheet(rows: Sequence[Mapping[str, Any]], names: Mapping[int, str], look: Look,
                width: int = 80) -> list[Fragments]:
    """The sheet as lines: a header of the seats, a line per deal (its winner's points
    marked `*`), and the totals after the last deal shown."""
    if not rows:
        return [[("class:dim", _("No deal of this match has ended yet."))]]
    seats = sorted(names)

    def seat_values(values: object) -> list[str]:
        got = values if isinstance(values, Sequence) else []
        return [_points(got[s]) if s < len(got) else "?" for s in seats]

    deals = [_points(r.get("deal_no")) for r in rows]
    cells = [seat_values(r.get("points")) for r in rows]
    totals = seat_values(rows[-1].get("totals"))
    notes = [_note(r, look) for r in rows]
    first = max(get_cwidth(w) for w in [_("deal"), _("total"), *deals])
    # Each number is followed by one column for the winner's `*`.
    numbers = [max(get_cwidth(c[i]) + 1 for c in [*cells, totals]) for i in range(len(seats))]
    note_cols = max(get_cwidth(n) for n in notes)
    # Every seat's column is as wide: the widest number's, or more for the names, each
    # shown whole up to NAME_COLUMNS if the width leaves room, else cut. Where even the
    # numbers are too wide with two spaces between the columns, one is left, and where
    # a deal's note still does not fit after its numbers it goes on a line of its own.
    col = max(numbers, default=1)
    gap = 2 if first + 2 + len(seats) * (col + 2) + (note_cols + 2 if note_cols else 0) \
        <= width else 1
    inline = first + 2 + len(seats) * (col + gap) + gap + note_cols <= width
    room = (width - 2 - first - (note_cols + gap if note_cols and inline else 0)) \
        // max(len(seats), 1) - gap
    widest = max((get_cwidth(names[s]) for s in seats), default=0)
    col = max(col, min(widest + 1, NAME_COLUMNS + 1, room))
    cols = [col] * len(seats)
    sep = " " * gap
    head: Fragments = [("class:dim", "  " + _pad(_("deal"), first))]
    head += [("class:dim", sep + _pad(_cut(names[s], cols[i] - 1) + " ", cols[i], right=True))
             for i, s in enumerate(seats)]
    title = _("score sheet (/score; * the deal's winner)")
    # Broken at spaces here, for the terminal would mark its rows as one line's.
    lines: list[Fragments] = [*wrap([("class:title", title)], width, indent=0), head]
    for row, deal, cell, note in zip(rows, deals, cells, notes, strict=True):
        line: Fragments = [("", "  " + _pad(deal, first))]
        for i, s in enumerate(seats):
            won = row.get("winner") == s
            line.append(("class:good" if won else "",
                         sep + _pad(cell[i] + ("*" if won else " "), cols[i], right=True)))
        style = "class:dim" if row.get("reason") == "stock_out" else "class:warn"
        if note and inline:
            line.append((style, sep + note))
        lines.append(line)
        if note and not inline:
            lines.append([(style, "  " + " " * first + sep + note)])
    foot: Fragments = [("class:title", "  " + _pad(_("total"), first))]
    foot += [("class:title", sep + _pad(totals[i] + " ", cols[i], right=True))
             for i in range(len(seats))]
    lines.append(foot)
    return lines
