"""The lobby's table list and the finished matches of `/history`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from prompt_toolkit.utils import get_cwidth

from pisyedili.protocol.shapes import HISTORY_PAGE

from ..i18n import N_, _, date, ngettext
from .settings import bot_with_level, rules_name
from .table import and_list, phase_text, shown_name, table_name
from .text import DEFAULT_LOOK, Dict, Fragments, Look

NAME_COLUMN = 20
"""The most terminal columns the lobby gives a table's name (up to `MAX_TABLE_NAME`
characters, some of them two columns wide): a longer one is cut, with an ellipsis."""


def cell(text: str, width: int, look: Look = DEFAULT_LOOK) -> str:
    """`text` in exactly `width` terminal columns: padded, or cut with an ellipsis (a
    wide glyph counts two columns, as the terminal draws it)."""
    if get_cwidth(text) <= width:
        return text + " " * (width - get_cwidth(text))
    mark = "…" if look.unicode else "..."
    room = width - get_cwidth(mark)
    kept = ""
    for ch in text:
        if get_cwidth(kept + ch) > room:
            break
        kept += ch
    return cell(kept.rstrip() + mark, width, look)


def lobby_table(t: Dict, columns: tuple[int, int] | None = None,
                look: Look = DEFAULT_LOOK) -> Fragments:
    """One row of the lobby: id, name, rule set, seats taken/free, phase, private.
    `columns`: the widths of the id and name columns of the page it is on (None: a row
    on its own, its name cut only past `NAME_COLUMN`)."""
    seats = t.get("seats")
    if isinstance(seats, list):
        taken = sum(1 for s in seats if s.get("kind") != "open")
        total = len(seats)
    else:
        taken, total = int(t.get("taken", 0) or 0), int(seats or 0)
    bots = t.get("bots")
    ids, names = columns or _columns([t])
    number = f"#{t.get('id', '?')}"
    row = f"  {cell(number, ids)} {cell(table_name(t), names, look)}  "
    row += f"{rules_name(t.get('rules')):<8} "
    # i18n: a table's seats, taken of all; English says "seats" for any number.
    row += ngettext("{taken}/{n} seats", "{taken}/{n} seats", total, taken=taken)
    if bots:
        row += ngettext(" ({n} bot)", " ({n} bots)", bots)
    row += f"  {phase_text(t.get('phase', ''))}"
    if t.get("private"):
        row += "  " + _("private")
    if t.get("rated"):
        row += "  " + _("rated")
    if t.get("quick"):
        row += "  " + _("quick")
    return [("", row)]


def _columns(tables: Sequence[Dict]) -> tuple[int, int]:
    """The id and name columns a page of tables needs: as wide as its widest, the names
    at most `NAME_COLUMN`."""
    ids = max((len(f"#{t.get('id', '?')}") for t in tables), default=0)
    names = max((get_cwidth(table_name(t)) for t in tables), default=0)
    return max(ids, 5), min(names, NAME_COLUMN)


def quick_note(table: Dict) -> str:
    """What a waiting quick table will do by itself (`play_now`)."""
    left = table.get("bots_in")
    if isinstance(left, int) and not isinstance(left, bool):
        return ngettext("A quick table: it starts once every seat is filled; bots take the "
                        "seats still open in {n} second.",
                        "A quick table: it starts once every seat is filled; bots take the "
                        "seats still open in {n} seconds.", left)
    return _("A quick table: it starts once every seat is filled.")


def invitation(msg: Dict) -> list[Fragments]:
    """An invitation received, and how to answer it."""
    row = msg.get("table") or {}
    head = _("{name} invites you to {table} ({rules}, {taken} of {seats} seats taken).",
             name=msg.get("from", "?"), table=table_name(row),
             rules=row.get("rules", "?"), taken=row.get("taken", "?"),
             seats=row.get("seats", "?"))
    how = ngettext("/accept or /decline (#{id}; open for {n} second).",
                   "/accept or /decline (#{id}; open for {n} seconds).",
                   int(msg.get("expires_in", 0) or 0), id=msg.get("invite", "?"))
    return [[("class:title", head)], [("class:dim", "  " + how)]]


def invite_ended(msg: Dict, held: Dict | None) -> Fragments:
    """How an invitation ended: one we sent (it names the invitee), or one we held."""
    reason, name = str(msg.get("reason")), msg.get("name")
    if name is not None:
        text = _(_SENT_ENDED.get(reason, _SENT_OVER), name=name)
        return [("class:good" if reason == "accepted" else "class:dim", text)]
    text = _(_HELD_ENDED.get(reason, _HELD_OVER), name=(held or {}).get("from", "?"))
    return [("class:dim", text)]


_SENT_ENDED = {
    "accepted": N_("{name} accepted your invitation."),
    "declined": N_("{name} declined your invitation."),
    "expired": N_("{name} did not answer your invitation in time."),
    "gone": N_("{name} left the server: your invitation is over."),
}
"""`invite_ended` to the inviter, by reason."""
_SENT_OVER = N_("Your invitation to {name} is over.")
"""... for a reason this client does not know."""

_HELD_ENDED = {
    "expired": N_("The invitation from {name} expired."),
    "withdrawn": N_("{name} withdrew the invitation: they left the table."),
    "unavailable": N_("The invitation from {name} is over: the table filled or started."),
}
"""`invite_ended` to the invitee, by reason."""
_HELD_OVER = N_("The invitation from {name} is over.")
"""... for a reason this client does not know."""


LOBBY_PAGE = 200
"""Rows in a lobby page of the reference server, until a full page says otherwise."""


def tables_count(n: int) -> str:
    return ngettext("{n} table", "{n} tables", n)


def lobby_span(offset: int, rows: int, total: int | None) -> str:
    """How many tables there are and which of them a page shows: `450 tables,
    showing 1-200`; just `3 tables` when the page is the whole list."""
    if total is None or (offset == 0 and rows >= total):
        return tables_count(rows if total is None else total)
    if not rows:
        return _("{tables}, showing none", tables=tables_count(total))
    return _("{tables}, showing {first}-{last}", tables=tables_count(total), first=offset + 1,
             last=offset + rows)


def lobby_pages(total: int, page: int) -> int:
    """How many pages of `page` rows `total` tables fill (at least one)."""
    return max(1, -(-total // max(page, 1)))


def lobby(tables: Iterable[Dict], offset: int = 0, total: int | None = None,
          page: int = LOBBY_PAGE, look: Look = DEFAULT_LOOK) -> list[Fragments]:
    """One page of the table list; `total` (None: the page is the whole list) and
    `offset` say where it sits in the whole list."""
    # A finished table takes no one: only tables a player can still join or watch a
    # match at are listed (the results are in /history), as the web page does.
    open_ = [t for t in tables if t.get("phase") != "over"]
    widths = _columns(open_)
    rows = [lobby_table(t, widths, look) for t in open_]
    paged = total is not None and not (offset == 0 and len(rows) >= total)
    if not rows and not paged:
        return [[("class:dim", _("No tables yet. /create classic 4 opens one; /help lists "
                                 "all."))]]
    if not rows:
        return [[("class:dim", _("No tables on this page: the lobby has {tables}; /lobby 1 "
                                 "shows the first.", tables=tables_count(total or 0)))]]
    head = _("Tables:")
    if paged and total is not None:
        head = _("Tables {first}-{last} of {total} (page {page} of {pages}):",
                 first=offset + 1, last=offset + len(rows), total=total,
                 page=offset // max(page, 1) + 1, pages=lobby_pages(total, page))
    out = [[("class:title", head)], *rows,
           [("class:dim", _("/join ID to sit down, /watch ID to spectate, /create to open "
                            "one"))]]
    if paged:
        out.append([("class:dim", _("/lobby next, /lobby prev or /lobby PAGE for other "
                                    "pages"))])
    return out


# -------------------------------------------------------------------- finished matches


def _player(p: Mapping[str, object]) -> str:
    """A seat of a finished match: a server bot with its level (`bot 2 (hard)`)."""
    seat = p.get("seat")
    if p.get("kind") == "bot" and isinstance(seat, int) and not isinstance(seat, bool):
        return bot_with_level(seat, p.get("level"))
    return shown_name(p)


def match_row(m: Dict) -> Fragments:
    """One finished match: id, when it ended, rule set, deals, each seat's total, winners."""
    players = [p for p in m.get("players") or [] if isinstance(p, Mapping)]
    ended = m.get("finished_at")
    when = date(ended, with_time=True) if isinstance(ended, int | float) else "?"
    seats = ", ".join(f"{_player(p)} {p.get('total', '?')}" for p in players)
    won = [shown_name(p) for p in players if p.get("seat") in (m.get("winners") or [])]
    deals = m.get("deals")
    row = f"  #{m.get('id', '?'):<5} {when}  {rules_name(m.get('rules')):<8} "
    row += (ngettext("{n} deal", "{n} deals", deals) if isinstance(deals, int)
            and not isinstance(deals, bool) else _("? deals"))
    row += f"  {seats}"
    out: Fragments = [("", row), ("class:good", "  " + _("won: {who}", who=and_list(won)))]
    if m.get("private"):
        out.append(("class:dim", "  " + _("private")))
    return out


def history(msg: Dict, offline: bool = False) -> list[Fragments]:
    """A `history` page: whose matches, which of them, and how to see more (`offline`:
    from `pisyedili play`'s own store, where every match kept is the player's)."""
    of, name = msg.get("of"), msg.get("name")
    rows = [match_row(m) for m in msg.get("matches") or [] if isinstance(m, Mapping)]
    total, offset = msg.get("total"), msg.get("offset")
    total = total if isinstance(total, int) else len(rows)
    offset = offset if isinstance(offset, int) else 0
    if offline and of in ("mine", "recent"):
        whose = _("Your offline matches")
    elif of == "mine":
        whose = _("Your matches")
    elif of == "recent":
        whose = _("Recent public matches")
    else:
        whose = _("Matches of {name}", name=name)
    word = "" if of == "mine" or (offline and of == "recent") else f"{name or of} "
    if not rows:
        if total:
            return [[("class:dim", _("{whose}: none on this page of {total}; /history "
                                     "{word}1 shows the first.", whose=whose, total=total,
                                     word=word))]]
        return [[("class:dim", _("{whose}: no finished matches yet.", whose=whose))]]
    head = _("{whose} ({first}-{last} of {total}, newest first):", whose=whose,
             first=offset + 1, last=offset + len(rows), total=total)
    out = [[("class:title", head)], *rows,
           [("class:dim", _("/replay ID to watch one, /export ID FILE to save it"))]]
    if offset + len(rows) < total or offset:
        page = -(-offset // HISTORY_PAGE) + 1
        pages = max(1, -(-total // HISTORY_PAGE))
        out.append([("class:dim", _("page {page} of {pages}: /history {word}PAGE for "
                                    "another", page=page, pages=pages, word=word))])
    return out
