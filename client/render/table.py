"""At a table: who sits where, the event log, deal and match results, the status
area under the log, the muamele spread and `/log`'s pages."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import cards
from .cards import card, card_list, hand_lines, legal_items, suit
from .text import DEFAULT_LOOK, Dict, Fragments, Look, counted, flow, plural, sep, wrap


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
                     f"{counted(e.get('spread'), 'face-down card')} (K14)")]
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


def table_summary(table: Dict, my_seat: int | None, look: Look = DEFAULT_LOOK) -> list[Fragments]:
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
        label += f": {counted(n, 'card')}, {counted(sc, 'pt')}"
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
