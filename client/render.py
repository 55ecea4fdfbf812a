"""Views, events and results → prompt_toolkit formatted text.

Pure functions of the server's dicts (docs/architecture.md, "view keys"; docs/protocol.md
for the messages) and a `Look` (Unicode suits or ASCII, colour or not).  They return
lists of `(style, text)` fragments; `plain()` flattens them for tests and logs.  Keys
the server may leave out are read with defaults, so an older or newer server degrades
the picture rather than crashing the client.

The screen is laid out for a given width: the status area cannot scroll, so whatever
does not fit one line flows onto the next (`flow`, `wrap`) rather than being cut off.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from prompt_toolkit.styles import Style
from prompt_toolkit.utils import get_cwidth

from pisyedili.protocol.shapes import HISTORY_PAGE, RULE_SETS

from . import cards
from .parse import COMMANDS, REPLAY_COMMANDS, is_pick_phase, move_input

Fragments = list[tuple[str, str]]
Dict = Mapping[str, Any]


@dataclass(frozen=True)
class Look:
    """How cards are drawn: Unicode suit symbols or ASCII letters; colour or not."""

    unicode: bool = True
    color: bool = True


_COLOURS = {
    "suit-red": "#e03030 bold",
    "suit-black": "bold",  # the terminal's own foreground: readable on dark and light
    "warn": "#e03030",
    "dim": "#888888",
    "me": "#30a0e0 bold",
    "turn": "reverse bold",
    "error": "#e03030",
    "good": "#30b030 bold",
    "title": "bold underline",
    "bottom-toolbar": "noreverse",
}
_PLAIN = {"suit-red": "bold", "suit-black": "bold", "warn": "bold", "me": "bold",
          "turn": "reverse bold", "title": "bold underline", "bottom-toolbar": "noreverse",
          "good": "bold"}


def make_style(look: Look) -> Style:
    """The style sheet: hearts and diamonds red; with `NO_COLOR`, no colour at all."""
    return Style.from_dict(_COLOURS if look.color else _PLAIN)


def plain(fragments: Iterable[tuple[str, str]]) -> str:
    """The text a person reads, without styles (tests, logs, dumb terminals)."""
    return "".join(text for _, text in fragments)


# --------------------------------------------------------------------------- layout


def columns(fragments: Iterable[tuple[str, str]]) -> int:
    """Terminal columns the fragments take (a suit symbol is one, a wide glyph two)."""
    return get_cwidth(plain(fragments))


def _regroup(chars: Sequence[tuple[str, str]]) -> Fragments:
    out: Fragments = []
    for style, ch in chars:
        if out and out[-1][0] == style:
            out[-1] = (style, out[-1][1] + ch)
        else:
            out.append((style, ch))
    return out


def wrap(line: Fragments, width: int, indent: int | None = None) -> list[Fragments]:
    """`line` broken at spaces into rows of at most `width` columns.

    Rows after the first start with `indent` spaces (default: the line's own leading
    spaces plus two, so a continuation reads as one).  A word wider than a row is the
    only thing ever cut.
    """
    if columns(line) <= width or width < 8:
        return [line]
    chars = [(style, ch) for style, text in line for ch in text]
    lead = len(plain(line)) - len(plain(line).lstrip(" "))
    hang = min(lead + 2 if indent is None else indent, width // 2)
    words: list[tuple[list[tuple[str, str]], list[tuple[str, str]]]] = []
    spaces: list[tuple[str, str]] = []
    word: list[tuple[str, str]] = []
    for sc in chars:
        if sc[1] == " ":
            if word:
                words.append((spaces, word))
                spaces, word = [], []
            spaces.append(sc)
        else:
            word.append(sc)
    if word:
        words.append((spaces, word))
    rows: list[list[tuple[str, str]]] = []
    row: list[tuple[str, str]] = []
    used, has_word = 0, False
    for spaces, word in words:
        size = sum(get_cwidth(ch) for _, ch in word)
        if has_word and used + len(spaces) + size > width:
            rows.append(row)
            row, used, has_word, spaces = [("", " " * hang)], hang, False, []
        row += spaces
        used += len(spaces)
        for sc in word:
            w = get_cwidth(sc[1])
            if used + w > width and (has_word or used > hang):
                rows.append(row)
                row, used = [("", " " * hang)], hang
            row.append(sc)
            used += w
            has_word = True
    rows.append(row)
    return [_regroup(r) for r in rows]


def flow(head: Fragments, items: Sequence[Fragments], width: int, gap: str = "  ",
         indent: int | None = None) -> list[Fragments]:
    """`head` then `items` separated by `gap`, as many rows as they need: an item is
    never split, and rows after the first are indented (default: under the first item)."""
    hang = min(columns(head) if indent is None else indent, width // 2)
    rows: list[Fragments] = []
    row: Fragments = list(head)
    used, empty = columns(head), True
    for item in items:
        size = columns(item)
        if not empty and used + len(gap) + size > width:
            rows.append(row)
            row, used, empty = [("", " " * hang)], hang, True
        if not empty:
            row.append(("", gap))
            used += len(gap)
        row += item
        used += size
        empty = False
    rows.append(row)
    return [piece for r in rows for piece in wrap(r, width, hang)]


def fit(lines: Iterable[Fragments], width: int) -> list[Fragments]:
    """Every line wrapped to `width`."""
    return [row for line in lines for row in wrap(line, width)]


# ---------------------------------------------------------------------------- cards


def card_text(card: object, look: Look) -> str:
    c = cards.normalise(card)
    if look.unicode and c[-1:] in cards.SUIT_SYMBOLS:
        return c[:-1] + cards.SUIT_SYMBOLS[c[-1]]
    return c


def suit_text(suit: object, look: Look) -> str:
    s = str(suit)
    return cards.SUIT_SYMBOLS.get(s, s) if look.unicode else cards.SUIT_NAMES.get(s, s)


def _suit_class(suit_letter: str) -> str:
    return "class:suit-red" if suit_letter in cards.RED_SUITS else "class:suit-black"


def card(card: object, look: Look) -> Fragments:
    c = cards.normalise(card)
    return [(_suit_class(c[-1:]), card_text(c, look))]


def suit(s: object, look: Look) -> Fragments:
    return [(_suit_class(str(s)), suit_text(s, look))]


def card_list(items: Iterable[object], look: Look, sep: str = " ") -> Fragments:
    out: Fragments = []
    for i, c in enumerate(items):
        if i:
            out.append(("", sep))
        out += card(c, look)
    return out


def hand_items(hand_cards: Sequence[str], look: Look,
               legal: Sequence[Dict] = ()) -> list[Fragments]:
    """Each card of the hand beside the number the player types for it; legal ones lit."""
    playable = {cards.normalise(m.get("card")) for m in legal if m.get("kind") == "play"}
    items: list[Fragments] = []
    for i, c in enumerate(hand_cards, 1):
        frag = card(c, look)
        if c in playable:
            frag = [(style + " underline", text) for style, text in frag]
        items.append([("class:dim", f"{i}:"), *frag])
    return items


def hand(hand_cards: Sequence[str], look: Look, legal: Sequence[Dict] = ()) -> Fragments:
    """The hand in display order on one line, numbered from 1 as the player types it."""
    out: Fragments = []
    for item in hand_items(hand_cards, look, legal):
        if out:
            out.append(("", "  "))
        out += item
    return out or [("class:dim", "(no cards)")]


def hand_lines(hand_cards: Sequence[str], look: Look, legal: Sequence[Dict],
               width: int) -> list[Fragments]:
    """The hand on as many rows as `width` needs: every card held is on screen."""
    items = hand_items(hand_cards, look, legal)
    if not items:
        return [[("", "hand "), ("class:dim", "(no cards)")]]
    return flow([("", "hand ")], items, width)


def move(m: Dict, look: Look) -> Fragments:
    """A wire move as a person reads it: `J♠→♥`, `draw`, `pick 3`."""
    kind = m.get("kind")
    if kind == "play":
        out = card(m.get("card"), look)
        if m.get("suit"):
            out += [("", "→" if look.unicode else ">"), *suit(m["suit"], look)]
        return out
    if kind == "pick":
        return [("", f"pick {int(m.get('position', 0)) + 1}")]
    return [("", str(kind))]


def legal_items(legal: Sequence[Dict], look: Look,
                hand_cards: Sequence[str] = ()) -> list[Fragments]:
    """The moves the server allows, in the words the player would type them: cards in
    hand order, each with its hand number, then draw or pass."""
    if is_pick_phase(legal):
        first = min(int(m.get("position", 0)) for m in legal) + 1
        last = max(int(m.get("position", 0)) for m in legal) + 1
        return [[("", f"pick a face-down card: type a number {first}-{last}")]]
    plays: list[tuple[int, Fragments]] = []
    others: list[Fragments] = []
    seen: set[str] = set()
    for m in legal:
        # A jack offered once per suit reads better as one "J♠+suit" entry.
        key = move_input({**m, "suit": None}) if m.get("kind") == "play" else move_input(m)
        if key in seen:
            continue
        seen.add(key)
        if m.get("kind") != "play":
            others.append(move(m, look))
            continue
        c = cards.normalise(m.get("card"))
        item = card(c, look)
        if m.get("suit"):
            item.append(("class:dim", "+suit"))
        place = hand_cards.index(c) if c in hand_cards else len(hand_cards)
        if c in hand_cards:
            item = [("class:dim", f"{place + 1}:"), *item]
        plays.append((place, item))
    return [item for _, item in sorted(plays, key=lambda p: p[0])] + others


def legal_hint(legal: Sequence[Dict], look: Look, hand_cards: Sequence[str] = ()) -> Fragments:
    """`legal_items` on one line."""
    out: Fragments = []
    for item in legal_items(legal, look, hand_cards):
        if out:
            out.append(("", "  "))
        out += item
    return out


# ---------------------------------------------------------------------------- names


def seat_names(table: Dict | None, my_seat: int | None) -> dict[int, str]:
    """Seat number → what the log calls that seat: "you", a player's name, "bot 3".

    Bots are named by seat (the server may call every bot the same); players who share
    a name get their seat number added, so the log is never ambiguous.
    """
    seats = [s for s in (table or {}).get("seats", []) or [] if isinstance(s, Mapping)]
    humans = [str(s.get("name", "")) for s in seats if s.get("kind") == "human"]
    names: dict[int, str] = {}
    for i, s in enumerate(seats):
        n = int(s.get("seat", i))
        name = str(s.get("name") or "")
        if n == my_seat:
            names[n] = "you"
        elif s.get("kind") == "bot":
            names[n] = f"bot {n + 1}"
        elif s.get("kind") == "human" and name:
            names[n] = name if humans.count(name) == 1 else f"{name} ({n + 1})"
        else:
            names[n] = f"seat {n + 1}"
    return names


def seat_changes(before: Dict | None, after: Dict, my_seat: int | None) -> list[Fragments]:
    """What changed at a table between two `table_update`s, one short line each."""
    old = {int(s.get("seat", 0)): s for s in (before or {}).get("seats", []) or []}
    lines: list[Fragments] = []
    names = seat_names(after, my_seat)
    for s in after.get("seats", []) or []:
        n = int(s.get("seat", 0))
        was = old.get(n, {})
        who = names.get(n, f"seat {n + 1}")
        kind = s.get("kind")
        if kind != was.get("kind") or s.get("name") != was.get("name"):
            if kind == "open":
                lines.append([("", f"seat {n + 1} is open")])
            elif kind == "bot":
                level = f" ({s['level']})" if s.get("level") else ""
                lines.append([("", f"{who}{level} takes seat {n + 1}")])
            else:
                lines.append([("", f"{s.get('name', who)} sits at seat {n + 1}")])
        elif kind == "human":
            if s.get("ready") != was.get("ready"):
                be = _be(who) if s.get("ready") else _be(who) + " not"
                lines.append([("", f"{who} {be} ready")])
            lines += _presence(who, was, s, after.get("phase") == "playing")
    if before is not None and after.get("phase") != before.get("phase"):
        lines.append([("class:title", f"table is now {after.get('phase')}")])
    return lines


def _presence(who: str, was: Dict, now: Dict, playing: bool) -> list[Fragments]:
    """A human seat's connection and stand-in bot, as they changed: only what is true
    now is said (a bot released at the match's end does not mean its player is back)."""
    you = who == "you"
    held, held_before = now.get("held_by_bot"), was.get("held_by_bot")
    back = now.get("connected") and was.get("connected") is False
    lost = now.get("connected") is False and was.get("connected") is not False \
        and "connected" in was
    lines: list[Fragments] = []
    if lost:
        lines.append([("class:dim", f"{who} lost the connection")])
    if held and not held_before:
        if held == "disconnected":
            lines.append([("class:dim", f"{who} {_be(who)} away: a stand-in bot plays for "
                                        f"{'you' if you else 'them'} until "
                                        f"{'you are' if you else 'they are'} back")])
        elif you:
            lines.append([("class:warn", "a stand-in bot plays for you: say anything to "
                                         "take your seat back")])
        else:
            lines.append([("class:dim", f"a stand-in bot plays for {who} until {who} acts")])
    elif held_before and not held and playing and now.get("connected") is not False:
        again = "play again" if you else "plays again"
        lines.append([("class:dim", f"{who} {_be(who)} back and {again}" if back
                       else f"{who} {again}")])
        return lines
    if back:
        lines.append([("class:dim", f"{who} {_be(who)} back")])
    return lines


def _who(seat: object, names: Mapping[int, str]) -> str:
    if isinstance(seat, int) and not isinstance(seat, bool):
        return names.get(seat, f"seat {seat + 1}")
    return "?"


# --------------------------------------------------------------------------- events


def _be(who: str) -> str:
    return "are" if who == "you" else "is"


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _count(n: object, word: str) -> str:
    """`plural` of a field the server may have left out."""
    return plural(n, word) if isinstance(n, int) and not isinstance(n, bool) else f"? {word}s"


def _cite(rules: str | None, classic: str, cardiva: str) -> str:
    """The rule behind an effect, in the table's rule set (both when unknown)."""
    return {"classic": classic, "cardiva": cardiva}.get(rules or "", f"{classic}, {cardiva}")


def event(e: Dict, names: Mapping[int, str], look: Look, rules: str | None = None) -> Fragments:
    """One line of the event log for one engine event (docs/architecture.md, Events)."""
    kind = str(e.get("event", "?"))
    who = _who(e.get("seat"), names)
    if kind == "play":
        out: Fragments = [("", f"{who} played "), *card(e.get("card"), look)]
        if e.get("suit"):
            out += [("", ", naming "), *suit(e["suit"], look)]
        return out
    if kind == "draw":
        count = int(e.get("count", 1) or 1)
        drawn = e.get("cards") or ([e["card"]] if e.get("card") else [])
        out = [("", f"{who} drew {plural(count, 'card')}")]
        if drawn:
            out += [("", ": "), *card_list(drawn, look)]
        reason = e.get("reason")
        if reason == "penalty":
            out.append(("class:warn", " (the 7s' penalty)"))
        elif reason == "ace":
            out.append(("class:dim", " (ace, K10)"))
        return out
    if kind == "pass":
        return [("", f"{who} passed")]
    if kind == "penalty":
        count = e.get("count", "?")
        rule = _cite(rules, "C11", "K7")
        return [("class:warn", f"{who} must draw {count} or answer with a 7 ({rule})")]
    if kind == "skip":
        return [("", f"{who} {_be(who)} skipped (8, C9)")]
    if kind == "reverse":
        return [("", "10: the direction of play is reversed (C10)")]
    if kind == "bounce":
        return [("", f"10: the turn bounces back to {who} (K9)")]
    if kind == "pisti":
        return [("", f"pişti! {who} must play again (K11)" if look.unicode
                 else f"pisti! {who} must play again (K11)")]
    if kind == "reshuffle":
        return [("", f"the discards are shuffled into a new stock of {e.get('count', '?')}")]
    if kind == "stock_out":
        return [("class:warn", f"the stock is empty: the deal ends ({_cite(rules, 'C15', 'K6')})")]
    if kind == "muamele":
        verb = "pick" if who == "you" else "picks"
        return [("class:title", "muamele"),
                ("", f": {who} {verb} {e.get('picks', '?')} of "
                     f"{_count(e.get('spread'), 'face-down card')} (K14)")]
    if kind == "pick":
        out = [("", f"{who} picked card {int(e.get('position', 0)) + 1}")]
        if e.get("card"):
            out += [("", ": "), *card(e["card"], look)]
        if e.get("picks") is not None:
            out.append(("class:dim", f" ({plural(int(e['picks']), 'pick')} left)"))
        return out
    if kind == "deal_start":
        dealer = _who(e.get("dealer"), names)
        return [("class:title", f"— deal {e.get('deal_no', '')} —" if look.unicode
                 else f"-- deal {e.get('deal_no', '')} --"), ("", f" {dealer} dealt")]
    if kind == "timeout":
        them = "you" if who == "you" else "them"
        if e.get("bot") and who == "you":
            return [("class:warn", "you ran out of time again: a stand-in bot plays for you; "
                                   "say anything to take your seat back")]
        if e.get("bot"):
            return [("class:warn", f"{who} ran out of time again: a stand-in bot plays for "
                                   f"them until {who} acts")]
        return [("class:warn", f"{who} ran out of time; the server moves for {them}")]
    # `deal_end` and `match_end` are shown whole by `deal_result` and `match_result`;
    # kinds unknown here are ignored, as the protocol asks of clients.
    return []


def deal_result(result: Dict, totals: Sequence[Any], names: Mapping[int, str],
                look: Look) -> list[Fragments]:
    """End of a deal: every hand revealed, each seat's points, the totals (C13-C15, K12-K14)."""
    winner = result.get("winner")
    who = _who(winner, names)
    if result.get("reason") == "stock_out":  # C15, K6
        head = "deal over: the stock ran out; " + (
            f"{who} {'have' if who == 'you' else 'has'} the lowest hand" if winner is not None
            else "no winner")
    elif winner is not None:
        head = f"deal over: {who} went out"
    else:
        head = "deal over"
    mult = result.get("multiplier", 1)
    if mult and mult != 1:  # C14, K13
        head += f", penalties ×{mult}" if look.unicode else f", penalties x{mult}"
    lines: list[Fragments] = [[("class:title", head)]]
    hands = result.get("hands") or []
    points = result.get("points") or []
    for seat in sorted(names):
        pts = points[seat] if seat < len(points) else "?"
        tot = totals[seat] if seat < len(totals) else "?"
        score = f"+{pts} → {tot}" if look.unicode else f"+{pts} -> {tot}"
        # The score before the hand: a long hand wraps, the scores stay in one column.
        row: Fragments = [("", f"  {names[seat]:<12} {score:<12} ")]
        h = hands[seat] if seat < len(hands) else []
        row += card_list(cards.sort_hand(list(h)), look) if h else [("class:dim", "(out)")]
        lines.append(row)
    return lines


def match_result(totals: Sequence[Any], winners: Sequence[int], names: Mapping[int, str],
                 can_rematch: bool = True) -> list[Fragments]:
    """End of a match: totals, lowest first, and the winner(s) (C16, K15)."""
    who = " and ".join(_who(w, names) for w in winners) or "nobody"
    lines: list[Fragments] = [[("class:good", f"match over: {who} won")]]
    order = sorted(range(len(totals)), key=lambda s: totals[s])
    for s in order:
        lines.append([("", f"  {_who(s, names):<12} {totals[s]}")])
    if can_rematch:
        lines.append([("", "Play again? /rematch (or /rematch no, /leave)")])
    return lines


# ---------------------------------------------------------------------------- lobby


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
    row += f"{_count(m.get('deals'), 'deal')}  {seats}"
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


def sep(look: Look) -> str:
    return " · " if look.unicode else " | "


def table_summary(table: Dict, my_seat: int | None, look: Look = Look()) -> list[Fragments]:
    """Who sits where at a table that is not playing yet."""
    head = f"table #{table.get('id', '?')} {table.get('name', '')}".rstrip()
    head += f"{sep(look)}{table.get('rules', '?')}{sep(look)}{table.get('phase', '')}"
    if table.get("code"):
        head += f"{sep(look)}invite code {table['code']}"
    lines: list[Fragments] = [[("class:title", head)]]
    for s in table.get("seats", []) or []:
        n = int(s.get("seat", 0))
        kind = s.get("kind", "open")
        label = "(open)" if kind == "open" else str(s.get("name", kind))
        if kind == "bot":
            label = f"bot {n + 1}" + (f" ({s['level']})" if s.get("level") else "")
        if s.get("ready") and kind != "open":
            label += " ready"
        if kind == "human" and s.get("connected") is False:
            label += " (disconnected)"
        style = "class:me" if n == my_seat else ""
        lines.append([(style, f"  seat {n + 1}: {label}")])
    if table.get("spectators"):
        lines.append([("class:dim", "  watching: " + ", ".join(map(str, table["spectators"])))])
    return lines


# --------------------------------------------------------------------------- status


def time_left(deadline_at: float | None, now: float) -> str:
    if deadline_at is None:
        return ""
    return f"{max(0, math.ceil(deadline_at - now))}s"


@dataclass(frozen=True)
class Moment:
    """What the status area shows besides the view (`ClientState.moment` fills it in)."""

    legal: Sequence[Dict] = ()
    turn_seat: int | None = None
    clock: str = ""
    """Time left for the seat to act (`12s`); empty when the turn is untimed."""
    next_deal: str = ""
    """When the next deal comes (`in 3s`, `shortly`); empty when none is due."""
    match_over: bool = False
    winners: Sequence[int] = ()
    link: str = ""
    """Empty while connected; else `connecting`, `reconnecting` or `gone`."""
    notes: Mapping[int, str] = field(default_factory=dict)
    """Seat → what is special about whoever holds it (`away`, `bot plays`)."""
    order: str = "suit"
    width: int = 80


def link_note(link: str, look: Look) -> Fragments:
    """The connection, when it is not up: the rest of the screen may be out of date."""
    dash = " — " if look.unicode else " - "
    text = {"connecting": "connecting to the server",
            "reconnecting": f"disconnected{dash}reconnecting",
            "gone": "disconnected"}.get(link)
    return [("class:warn", text)] if text else []


def progress(options: Dict | None, deal_no: object) -> list[str]:
    """How far the match is: `deal 2 of 4` (C16), or `deal 3` and `to 101` (K15)."""
    kind, _, n = str((options or {}).get("match_end") or "").partition(":")
    deal = f"deal {deal_no}" if isinstance(deal_no, int) and deal_no else ""
    if kind == "deals" and n.isdigit() and deal:
        return [f"{deal} of {n}"]
    if kind == "points" and n.isdigit():
        return [d for d in (deal, f"to {n}") if d]
    return [deal] if deal else []


def status(view: Dict | None, names: Mapping[int, str], my_seat: int | None, look: Look,
           at: Moment = Moment()) -> list[Fragments]:
    """The status area under the log, in rows of at most `at.width` columns: the table
    line, every seat, the hand, what to do now."""
    if not view:
        return []
    width = at.width
    rules = view.get("rules", "")
    phase = view.get("phase")
    line1: list[Fragments] = []
    if link_note(at.link, look):
        line1.append(link_note(at.link, look))
    line1.append([("class:title", f"{rules}")])
    line1 += [[("", p)] for p in progress(view.get("options"), view.get("deal_no"))]
    if at.match_over:
        who = " and ".join(_who(w, names) for w in at.winners) or "nobody"
        line1.append([("class:good", f"match over: {who} won")])
        if my_seat is not None:
            line1.append([("class:dim", "/rematch to play again, /leave for the lobby")])
    elif phase == "over":
        line1.append([("", "deal over")])
        if at.next_deal:
            line1.append([("class:dim", f"next deal {at.next_deal}")])
    else:
        line1 += table_items(view, look)
    lines = flow([], line1, width, sep(look), indent=2)

    over = at.match_over or phase == "over"
    turn = None if over else (view.get("turn") if at.turn_seat is None else at.turn_seat)
    lines += flow([], _seat_items(view, names, my_seat, look, at, turn), width, indent=2)

    muamele = view.get("muamele")
    if phase == "muamele" and isinstance(muamele, Mapping):
        lines += wrap(spread(muamele, names, look), width)
    held: list[str] = []
    if my_seat is not None and view.get("hand") is not None:
        held = cards.sort_hand(list(view["hand"]), at.order)
        lines += hand_lines(held, look, at.legal, width)
    if at.legal:
        lines += flow([("class:good", "your move: ")], legal_items(at.legal, look, held), width)
    elif turn is not None and turn != my_seat and not at.link:
        lines.append([("class:dim", f"waiting for {_who(turn, names)}")])
    return lines


def table_items(view: Dict, look: Look) -> list[Fragments]:
    """The deal being played: top card, penalty, stock, what the next card must do."""
    rules = view.get("rules", "")
    top = view.get("top")
    first: Fragments = [("", "top "), *(card(top, look) if top else [("class:dim", "none")])]
    if view.get("named_suit"):
        first += [("", " named "), *suit(view["named_suit"], look)]
    items = [first]
    if view.get("penalty"):
        items.append([("class:warn", f"7s penalty {view['penalty']}")])
    items.append([("", f"stock {view.get('stock', '?')}")])
    if view.get("first_round"):
        items.append([("class:dim", f"opening: clubs ({_cite(rules, 'C2', 'K3')})")])
    follow = view.get("must_follow")
    if follow == "ace":
        items.append([("class:dim", f"ace: one more card ({_cite(rules, 'C12', 'K10')})")])
    elif follow == "pisti":
        items.append([("class:dim", "pisti: play again (K11)")])
    direction = view.get("direction")
    if direction in (1, -1):
        arrow = ("→" if direction == 1 else "←") if look.unicode else (
            "->" if direction == 1 else "<-")
        items.append([("class:dim", f"play goes {arrow}")])
    return items


def _seat_items(view: Dict, names: Mapping[int, str], my_seat: int | None, look: Look,
                at: Moment, turn: object) -> list[Fragments]:
    """One item per seat: its cards and points, the turn marker and clock on the seat
    to act."""
    counts = view.get("hand_counts") or []
    scores = view.get("scores") or []
    items: list[Fragments] = []
    for seat in sorted(set(names) | set(range(len(counts)))):
        n = counts[seat] if seat < len(counts) else None
        sc = scores[seat] if seat < len(scores) else 0
        note = at.notes.get(seat)
        label = _who(seat, names) + (f" ({note})" if note else "")
        label += f": {_count(n, 'card')}, {_count(sc, 'pt')}"
        if seat == turn:
            label = ("▶ " if look.unicode else "> ") + label
            if at.clock and not at.link:
                label += f" ({at.clock})"
        style = "class:turn" if seat == turn else ("class:me" if seat == my_seat else "")
        items.append([(style, label)])
    return items


def spread(muamele: Dict, names: Mapping[int, str], look: Look) -> Fragments:
    """Muamele (K14): the face-down spread, who picks and how many picks are left.

    Every position is as good as another (the cards are face down), so the spread is
    drawn compactly; the picked cards appear in the log as they are turned.
    """
    size = int(muamele.get("spread", 0) or 0)
    who = _who(muamele.get("seat"), names)
    picks = muamele.get("picks_left", muamele.get("picks", "?"))
    back = "▒" if look.unicode else "#"
    shown = back * min(size, 40) + ("…" if look.unicode else "...") * (size > 40)
    return [("class:title", "muamele"),
            ("", f" {who} {'pick' if who == 'you' else 'picks'} {picks} more of "
                 f"{plural(size, 'face-down card')}: "),
            ("class:dim", shown), ("", f" (1-{size})" if size else "")]


# ----------------------------------------------------------------------- help, rules


HELP_TOPICS = ("moves", "table", "lobby", "replay", "account", "operator", "screen")

_MOVES_HELP = (
    ("7h  10s  qd  ts", "play that card (case, and 10 or T, do not matter)"),
    ("3", "play the card numbered 3 on the hand line"),
    ("js h  j h  j", "play a jack naming hearts (a bare j asks which suit)"),
    ("d  draw", "draw a card (C7, K5)"),
    ("p  pass", "end your turn once you have drawn (C7, K5)"),
    ("4 (in muamele)", "pick face-down card number 4 (K14)"),
)

_CREATE_OPTIONS = ("/create options: --name NAME, --ten reverse|bounce, --decks 1|2, "
                   "--turn SECONDS, --empty-stock end_deal|reshuffle, "
                   "--match-end deals:N|points:N, --rated")


def _rows(pairs: Sequence[tuple[str, str]], width: int) -> list[Fragments]:
    """Two columns, the second wrapped under itself."""
    col = min(max(len(a) for a, _ in pairs), 20)
    out: list[Fragments] = []
    for a, b in pairs:
        out += wrap([("", f"  {a:<{col}}  {b}")], width, col + 4)
    return out


def _text(text: str, width: int, style: str = "") -> list[Fragments]:
    return wrap([(style, text)], width, 2)


def help_lines(topic: str = "", width: int = 80, look: Look = Look()) -> list[Fragments]:
    """`/help` and `/help TOPIC`: each page fits an 80×24 terminal beside the status area."""
    topic = topic.strip().lower().lstrip("/")
    specs = {c.name: c for c in COMMANDS}
    if not topic:
        return [[("class:title", "Help")],
                *_text("On your turn: a card (7h, 10s, qd) or its number on the hand line, "
                       "js h for a jack naming hearts, d to draw, p to pass; Tab completes.",
                       width),
                *_rows([(c.usage, c.about) for c in COMMANDS if c.topic == "game"], width)]
    if topic == "moves":
        return [[("class:title", "Moves (on your turn)")], *_rows(_MOVES_HELP, width),
                *_text("Tab completes the legal moves and /moves lists them; off your turn, "
                       "plain text is chat.", width)]
    if topic in ("account", "operator"):
        head = "Accounts and ratings" if topic == "account" else "Operators"
        return [[("class:title", head)],
                *_rows([(c.usage, c.about) for c in COMMANDS if c.topic == topic], width),
                *_text("A registered name is yours alone: others get it suffixed. /login "
                       "remembers a login token for this server, never the password."
                       if topic == "account" else "Only the server's operators may use "
                       "these; every action is logged with your name.", width, "class:dim")]
    if topic in ("table", "lobby"):
        head = "At a table" if topic == "table" else "In the lobby"
        lines = [[("class:title", head)],
                 *_rows([(c.usage, c.about) for c in COMMANDS if c.topic == topic], width)]
        if topic == "table":
            lines += _text("Seats are numbered from 1. The host fills open seats with bots "
                           "and starts the match once every seat is ready.", width)
        else:
            lines += _text(_CREATE_OPTIONS, width, "class:dim")
        return lines
    if topic in ("replay", "history"):
        keys = [(" or ".join(words) + (f" ({key})" if key else ""), what)
                for words, key, what in REPLAY_COMMANDS]
        return [[("class:title", "Finished matches")],
                *_rows([(c.usage, c.about) for c in COMMANDS if c.topic == "replay"], width),
                [("class:title", "In a replay (type a word, or press the key)")],
                *_rows(keys, width),
                *_text("pisyedili replay FILE opens a saved match, no server needed.",
                       width)]
    if topic == "screen":
        turn = "▶" if look.unicode else ">"
        return [[("class:title", "The screen")],
                *_text("Above the prompt: what happened, newest last (/log shows this "
                       "deal again).", width),
                *_text("Below it: the rule set and how far the match is (deal 2 of 4, or "
                       "to 101), the top card and the stock; every seat with its cards and "
                       f"points, {turn} on the seat to act with its time left; your hand, "
                       "each card beside the number you type for it, the ones you may play "
                       "underlined; then your legal moves.", width),
                *_text("/sort rank|suit orders the hand; /bell rings when it is your turn.",
                       width),
                *_text("Ctrl-C, Ctrl-D or /quit leaves; during a match, press it twice.",
                       width)]
    spec = specs.get(topic)
    if spec is None:
        return _text(f"No help on {topic!r}. Topics: {', '.join(HELP_TOPICS)}, or a "
                     "command name (/help create).", width, "class:error")
    lines = [[("class:title", spec.usage)], *_text(f"{spec.about}; e.g. {spec.example}",
                                                   width)]
    if spec.name == "create":
        lines += _text(_CREATE_OPTIONS, width, "class:dim")
    return lines


def log_page(lines: Sequence[Fragments], page: int, rows: int, width: int,
             deal_no: object = None) -> list[Fragments]:
    """Page `page` (1: the newest) of this deal's log, in at most `rows` rows with its
    header; a line is never split across two pages."""
    if not lines:
        return [[("class:dim", "Nothing has happened in this deal yet.")]]
    room = max(rows - 1, 3)
    pages: list[list[Fragments]] = []
    current: list[Fragments] = []
    for line in reversed(lines):
        wrapped = wrap(line, width)
        if current and len(current) + len(wrapped) > room:
            pages.append(current)
            current = []
        current[:0] = wrapped
    pages.append(current)
    page = min(max(page, 1), len(pages))
    deal = f"deal {deal_no}" if isinstance(deal_no, int) else "this deal"
    head = f"{deal}, page {page} of {len(pages)}"
    if page < len(pages):
        head += f" (/log {page + 1} for earlier moves)"
    return [*wrap([("class:title", head)], width), *pages[page - 1]]


# -------------------------------------------------------------------------- refusals

_CARD = re.compile(r"(?<![\w'])(?:10|[2-9JQKA])[cdhs](?![\w'])")
_ASKS_FOR = re.compile(r"(?<=asks for )[cdhs]\b")


def with_cards(text: str, look: Look, style: str = "") -> Fragments:
    """`text` with the cards (and a named suit) it mentions in wire notation drawn as on
    screen, so a message reads like the table it is about."""
    out: Fragments = []
    at = 0
    marks = sorted([(m.start(), m.end(), "card") for m in _CARD.finditer(text)]
                   + [(m.start(), m.end(), "suit") for m in _ASKS_FOR.finditer(text)])
    for begin, end, kind in marks:
        if begin > at:
            out.append((style, text[at:begin]))
        found = text[begin:end]
        out += card(found, look) if kind == "card" else suit(found, look)
        at = end
    if at < len(text):
        out.append((style, text[at:]))
    return out


def refusal(msg: Dict, look: Look) -> Fragments:
    """A refused request as a player reads it: cards as on screen, seats counted from 1
    and the rule cited.  The code is for programs and stays off the screen."""
    text = str(msg.get("message") or "the server refused that")
    seat = msg.get("seat")
    if isinstance(seat, int) and not isinstance(seat, bool):
        text = re.sub(rf"\bseat {seat}\b", f"seat {seat + 1}", text)
    out = with_cards(text[:1].upper() + text[1:], look, "class:error")
    waiting = [s + 1 for s in msg.get("waiting_for") or [] if isinstance(s, int)]
    if waiting:
        out.append(("class:error", f" (waiting for {'seat' if len(waiting) == 1 else 'seats'} "
                                   f"{', '.join(map(str, waiting))})"))
    if msg.get("rule"):
        out.append(("class:dim", f" (rule {msg['rule']})"))
    return out


_RULE_SUMMARY: dict[str, list[str]] = {
    "classic": [
        "C1 7 cards each, one deck, 2-6 players.",
        "C2 the player left of the dealer opens with a club (draws until one comes).",
        "C4 match the top card's rank or suit.",
        "C5/C6 a jack goes on anything but a jack and names the suit to follow.",
        "C7 cannot or will not play: draw one at a time; pass only after drawing.",
        "C9 8 skips the next player.  C10 10 reverses the direction.",
        "C11 7: the next player draws 3 or answers with a 7; sevens stack (3 per 7).",
        "C12 ace: you may play one more card matching it (or a jack).",
        "C13 first out wins; others score J 25, 7 20, A 15, K/Q 10, others face value.",
        "C14 going out on a 7 triples, on a jack doubles the others' points.",
        "C15 empty stock ends the deal; the lowest hand wins it.",
        "C16 a match is 4 deals; the lowest total wins.",
    ],
    "cardiva": [
        "K1/K2 7 cards each; 2 players one deck, 3-4 players two decks.",
        "K3 first round: a club, not J/7/10/A; no effects; draw until you can.",
        "K4 match the top card's rank or suit.  K5 or draw 1, then play or pass.",
        "K7 7: the next player draws 3 or answers with a 7 (3, 6, 9...), then plays on.",
        "K8 a jack goes on anything and names the suit.",
        "K9 10 bounces the turn one seat back (another 10 bounces further).",
        "K10 ace: everyone else draws 1 and you play again; you cannot go out on an ace.",
        "K11 pişti: an ordinary card on its exact twin: play again (or draw).",
        "K12 points: 2-10 face value, Q/K 10, A 11, J 25.  K13 out on J ×2, on 7 ×3.",
        "K14 muamele: each 7 left in hand means 3 face-down picks; a picked 7 gives 3 more.",
        "K15 the match ends when someone reaches 101; the lowest total wins.",
    ],
}


def rules_lines(rules: str | None, options: Dict | None) -> list[Fragments]:
    """A summary of the table's rule set with rule numbers, and its options."""
    if not rules:
        sets = " and ".join(RULE_SETS)
        return [[("", f"Not at a table. The rule sets are {sets}; /create picks one.")]]
    lines: list[Fragments] = [[("class:title", f"Rules: {rules}")]]
    lines += [[("", f"  {line}")] for line in _RULE_SUMMARY.get(rules, [])]
    if options:
        opts = ", ".join(f"{k} {v}" for k, v in sorted(options.items()) if k != "rules")
        lines.append([("class:dim", f"  options: {opts}")])
    return lines


def ladder_lines(msg: Mapping[str, Any]) -> list[Fragments]:
    """`/top`: the rating ladder of one rule set."""
    rows = msg.get("rows") or []
    out: list[Fragments] = [[("class:title", f"Top {len(rows)} ({msg.get('rules')})")]]
    if not rows:
        return [*out, [("class:dim", "  nobody has played a rated match of it yet")]]
    for row in rows:
        out.append([("", f"  {row['rank']:>3}. {row['name']:<24} {row['rating']:>7.2f}  "
                         f"({row['matches']} played, {row['wins']} won)")])
    return out


def profile_lines(msg: Mapping[str, Any]) -> list[Fragments]:
    """`/profile NAME`: ratings, then the latest matches."""
    out: list[Fragments] = [[("class:title", f"{msg.get('name')}: {msg.get('matches', 0)} "
                                             f"matches, {msg.get('wins', 0)} won")]]
    for r in msg.get("ratings") or []:
        out.append([("", f"  {r['rules']}: rating {r['rating']:.2f} (mu {r['mu']:.2f}, "
                         f"sigma {r['sigma']:.2f}), #{r['rank']}, {r['matches']} rated")])
    for m in msg.get("recent") or []:
        when = time.strftime("%Y-%m-%d", time.localtime(m["finished_at"]))
        result = "won" if m["won"] else "lost"
        others = ", ".join(n for i, n in enumerate(m["players"]) if i != m["seat"])
        kind = "rated" if m["rated"] else "casual"
        out.append([("class:dim", f"  {when} {m['rules']} {kind}: {result} with "
                                  f"{m['total']} points vs {others}")])
    return out
