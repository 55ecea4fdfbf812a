"""The lobby's table list and the finished matches of `/history`."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping

from pisyedili.protocol.shapes import HISTORY_PAGE

from .text import Dict, Fragments, counted, plural


def lobby_table(t: Dict) -> Fragments:
    """One row of the lobby: id, name, rule set, seats taken/free, phase, private."""
    seats = t.get("seats")
    if isinstance(seats, list):
        taken = sum(1 for s in seats if s.get("kind") != "open")
        total = len(seats)
    else:
        taken, total = int(t.get("taken", 0) or 0), int(seats or 0)
    bots = t.get("bots")
    row = f"  #{t.get('id', '?'):<4} {t.get('name', '')!s:<16} {t.get('rules', '?'):<8} "
    row += f"{taken}/{total} seats"
    if bots:
        row += f" ({bots} bot{'s' if bots != 1 else ''})"
    row += f"  {t.get('phase', '')}"
    if t.get("private"):
        row += "  private"
    if t.get("rated"):
        row += "  rated"
    return [("", row)]


LOBBY_PAGE = 200
"""Rows in a lobby page of the reference server, until a full page says otherwise."""


def lobby_span(offset: int, rows: int, total: int | None) -> str:
    """How many tables there are and which of them a page shows: `450 tables,
    showing 1-200`; just `3 tables` when the page is the whole list."""
    if total is None or (offset == 0 and rows >= total):
        return plural(rows if total is None else total, "table")
    if not rows:
        return f"{plural(total, 'table')}, showing none"
    return f"{plural(total, 'table')}, showing {offset + 1}-{offset + rows}"


def lobby_pages(total: int, page: int) -> int:
    """How many pages of `page` rows `total` tables fill (at least one)."""
    return max(1, -(-total // max(page, 1)))


def lobby(tables: Iterable[Dict], offset: int = 0, total: int | None = None,
          page: int = LOBBY_PAGE) -> list[Fragments]:
    """One page of the table list; `total` (None: the page is the whole list) and
    `offset` say where it sits in the whole list."""
    rows = [lobby_table(t) for t in tables]
    paged = total is not None and not (offset == 0 and len(rows) >= total)
    if not rows and not paged:
        return [[("class:dim", "No tables yet. /create classic 4 opens one; /help lists all.")]]
    if not rows:
        return [[("class:dim", f"No tables on this page: the lobby has "
                               f"{plural(total or 0, 'table')}; /lobby 1 shows the first.")]]
    head = "Tables:"
    if paged and total is not None:
        head = (f"Tables {offset + 1}-{offset + len(rows)} of {total} (page "
                f"{offset // max(page, 1) + 1} of {lobby_pages(total, page)}):")
    out = [[("class:title", head)], *rows,
           [("class:dim", "/join ID to sit down, /watch ID to spectate, /create to open one")]]
    if paged:
        out.append([("class:dim", "/lobby next, /lobby prev or /lobby PAGE for other pages")])
    return out


# -------------------------------------------------------------------- finished matches


def match_row(m: Dict) -> Fragments:
    """One finished match: id, when it ended, rule set, deals, each seat's total, winners."""
    players = [p for p in m.get("players") or [] if isinstance(p, Mapping)]
    ended = m.get("finished_at")
    when = (time.strftime("%Y-%m-%d %H:%M", time.localtime(ended))
            if isinstance(ended, int | float) else "?")
    seats = ", ".join(f"{p.get('name', '?')} {p.get('total', '?')}" for p in players)
    won = [str(p.get("name", "?")) for p in players if p.get("seat") in (m.get("winners") or [])]
    row = f"  #{m.get('id', '?'):<5} {when}  {m.get('rules', '?'):<8} "
    row += f"{counted(m.get('deals'), 'deal')}  {seats}"
    out: Fragments = [("", row), ("class:good", f"  won: {' and '.join(won) or 'nobody'}")]
    if m.get("private"):
        out.append(("class:dim", "  private"))
    return out


def history(msg: Dict) -> list[Fragments]:
    """A `history` page: whose matches, which of them, and how to see more."""
    of, name = msg.get("of"), msg.get("name")
    rows = [match_row(m) for m in msg.get("matches") or [] if isinstance(m, Mapping)]
    total, offset = msg.get("total"), msg.get("offset")
    total = total if isinstance(total, int) else len(rows)
    offset = offset if isinstance(offset, int) else 0
    whose = {"mine": "Your matches", "recent": "Recent public matches"}.get(
        str(of), f"Matches of {name}")
    word = "" if of == "mine" else f"{name or of} "
    if not rows:
        if total:
            return [[("class:dim", f"{whose}: none on this page of {total}; /history "
                                   f"{word}1 shows the first.")]]
        return [[("class:dim", f"{whose}: no finished matches yet.")]]
    head = f"{whose} ({offset + 1}-{offset + len(rows)} of {total}, newest first):"
    out = [[("class:title", head)], *rows,
           [("class:dim", "/replay ID to watch one, /export ID FILE to save it")]]
    if offset + len(rows) < total or offset:
        page = -(-offset // HISTORY_PAGE) + 1
        pages = max(1, -(-total // HISTORY_PAGE))
        out.append([("class:dim", f"page {page} of {pages}: /history {word}PAGE for another")])
    return out
