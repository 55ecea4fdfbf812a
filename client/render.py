"""Views, events and results → prompt_toolkit formatted text.

Pure functions of the server's dicts (docs/architecture.md, "view keys"; docs/protocol.md
for the messages) and a `Look` (Unicode suits or ASCII, colour or not).  They return
lists of `(style, text)` fragments; `plain()` flattens them for tests and logs.  Keys
the server may leave out are read with defaults, so an older or newer server degrades
the picture rather than crashing the client.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prompt_toolkit.styles import Style

from . import cards
from .parse import COMMANDS, is_pick_phase, move_input

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


def hand(hand_cards: Sequence[str], look: Look, legal: Sequence[Dict] = ()) -> Fragments:
    """The hand in display order, numbered from 1 as the player types it; legal cards lit."""
    playable = {cards.normalise(m.get("card")) for m in legal if m.get("kind") == "play"}
    out: Fragments = []
    for i, c in enumerate(hand_cards, 1):
        if i > 1:
            out.append(("", "  "))
        out.append(("class:dim", f"{i}:"))
        frag = card(c, look)
        if c in playable:
            frag = [(style + " underline", text) for style, text in frag]
        out += frag
    return out or [("class:dim", "(no cards)")]


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


def legal_hint(legal: Sequence[Dict], look: Look) -> Fragments:
    """The moves the server allows, in the words the player would type them."""
    if is_pick_phase(legal):
        first = min(int(m.get("position", 0)) for m in legal) + 1
        last = max(int(m.get("position", 0)) for m in legal) + 1
        return [("", f"pick a face-down card: type a number {first}-{last}")]
    out: Fragments = []
    seen: set[str] = set()
    for m in legal:
        # A jack offered once per suit reads better as one "J♠ (+suit)" entry.
        key = move_input({**m, "suit": None}) if m.get("kind") == "play" else move_input(m)
        if key in seen:
            continue
        seen.add(key)
        if out:
            out.append(("", "  "))
        if m.get("kind") == "play" and m.get("suit"):
            out += [*card(m.get("card"), look), ("class:dim", "+suit")]
        else:
            out += move(m, look)
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
            if bool(s.get("held_by_bot")) != bool(was.get("held_by_bot")):
                lines.append([("class:dim", f"a bot plays for {who} until {who} " + (
                    "act" if who == "you" else "acts") if s.get("held_by_bot")
                    else f"{who} {'play' if who == 'you' else 'plays'} again")])
            if s.get("connected") != was.get("connected") and "connected" in was:
                lines.append([("class:dim", f"{who} " + (
                    "is back" if s.get("connected") else "lost the connection"))])
    if before is not None and after.get("phase") != before.get("phase"):
        lines.append([("class:title", f"table is now {after.get('phase')}")])
    return lines


def _who(seat: object, names: Mapping[int, str]) -> str:
    if isinstance(seat, int) and not isinstance(seat, bool):
        return names.get(seat, f"seat {seat + 1}")
    return "?"


# --------------------------------------------------------------------------- events


def _be(who: str) -> str:
    return "are" if who == "you" else "is"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


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
        out = [("", f"{who} drew {_plural(count, 'card')}")]
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
                ("", f": {who} {verb} {e.get('picks', '?')} of {e.get('spread', '?')} "
                     "face-down cards (K14)")]
    if kind == "pick":
        out = [("", f"{who} picked card {int(e.get('position', 0)) + 1}")]
        if e.get("card"):
            out += [("", ": "), *card(e["card"], look)]
        if e.get("picks") is not None:
            out.append(("class:dim", f" ({_plural(int(e['picks']), 'pick')} left)"))
        return out
    if kind in ("deal_end", "match_end"):
        return []  # the `deal_end` / `match_end` messages show the whole result
    if kind == "deal_start":
        dealer = _who(e.get("dealer"), names)
        return [("class:title", f"— deal {e.get('deal_no', '')} —" if look.unicode
                 else f"-- deal {e.get('deal_no', '')} --"), ("", f" {dealer} dealt")]
    details = ", ".join(f"{k} {v}" for k, v in e.items() if k not in ("event", "seat"))
    return [("", f"{who}: {kind.replace('_', ' ')}" + (f" ({details})" if details else ""))]


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
        row: Fragments = [("", f"  {names[seat]:<12} ")]
        h = hands[seat] if seat < len(hands) else []
        row += card_list(cards.sort_hand(list(h)), look) if h else [("class:dim", "(out)")]
        pts = points[seat] if seat < len(points) else "?"
        tot = totals[seat] if seat < len(totals) else "?"
        row += [("", f"   +{pts} → {tot}" if look.unicode else f"   +{pts} -> {tot}")]
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
    return [("", row)]


def lobby(tables: Iterable[Dict]) -> list[Fragments]:
    rows = [lobby_table(t) for t in tables]
    if not rows:
        return [[("class:dim", "No tables yet. /create classic 4 opens one; /help lists all.")]]
    return [[("class:title", "Tables:")], *rows,
            [("class:dim", "/join ID to sit down, /watch ID to spectate, /create to open one")]]


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


def status(
    view: Dict | None,
    names: Mapping[int, str],
    my_seat: int | None,
    look: Look,
    legal: Sequence[Dict] = (),
    turn_seat: int | None = None,
    clock: str = "",
) -> list[Fragments]:
    """The status area under the log: table line, players, hand, what to do now."""
    if not view:
        return []
    top = view.get("top")
    rules = view.get("rules", "")
    deal_no = view.get("deal_no")
    line1: Fragments = [("class:title", f"{rules}"), ("", f" deal {deal_no}" if deal_no else "")]
    line1 += [("", f"{sep(look)}top ")] + (card(top, look) if top else [("class:dim", "none")])
    if view.get("named_suit"):
        line1 += [("", " named "), *suit(view["named_suit"], look)]
    if view.get("penalty"):
        line1 += [("class:warn", f"{sep(look)}7s penalty {view['penalty']}")]
    line1 += [("", f"{sep(look)}stock {view.get('stock', '?')}")]
    if view.get("first_round"):
        line1 += [("class:dim", f"{sep(look)}opening: clubs ({_cite(rules, 'C2', 'K3')})")]
    follow = view.get("must_follow")
    if follow == "ace":
        line1 += [("class:dim", f"{sep(look)}ace: one more card ({_cite(rules, 'C12', 'K10')})")]
    elif follow == "pisti":
        line1 += [("class:dim", f"{sep(look)}pisti: play again (K11)")]
    direction = view.get("direction")
    if direction in (1, -1):
        arrow = ("→" if direction == 1 else "←") if look.unicode else (
            "->" if direction == 1 else "<-")
        line1 += [("class:dim", f"{sep(look)}play goes {arrow}")]

    turn = view.get("turn") if turn_seat is None else turn_seat
    counts = view.get("hand_counts") or []
    scores = view.get("scores") or []
    line2: Fragments = []
    for seat in sorted(set(names) | set(range(len(counts)))):
        if line2:
            line2.append(("", "  "))
        n = counts[seat] if seat < len(counts) else "?"
        sc = scores[seat] if seat < len(scores) else 0
        label = f"{_who(seat, names)}: {n} cards, {sc} pts"
        if seat == turn:
            label = "▶ " + label if look.unicode else "> " + label
            if clock:
                label += f" ({clock})"
        style = "class:turn" if seat == turn else ("class:me" if seat == my_seat else "")
        line2.append((style, label))

    lines = [line1, line2]
    phase = view.get("phase")
    muamele = view.get("muamele")
    if phase == "muamele" and isinstance(muamele, Mapping):
        lines.append(spread(muamele, names, look))
    if my_seat is not None and view.get("hand") is not None:
        lines.append([("", "hand "), *hand(cards.sort_hand(list(view["hand"])), look, legal)])
    if legal:
        lines.append([("class:good", "your move: "), *legal_hint(legal, look)])
    elif turn is not None and turn != my_seat and phase not in ("over", "deal_over"):
        lines.append([("class:dim", f"waiting for {_who(turn, names)}")])
    return lines


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
                 f"{size} face-down cards: "),
            ("class:dim", shown), ("", f" (1-{size})" if size else "")]


# ----------------------------------------------------------------------- help, rules


def help_lines() -> list[Fragments]:
    lines: list[Fragments] = [[("class:title", "Commands")]]
    for c in COMMANDS:
        line: Fragments = [("", f"  {c.example:<28} {c.about}")]
        if c.usage != c.example:
            line.append(("class:dim", f"  {c.usage}"))
        lines.append(line)
    lines += [[("class:dim", "  /create options: --name NAME  --ten reverse|bounce  --decks 1|2"
                             "  --turn SECONDS")],
              [("class:dim", "                   --empty-stock end_deal|reshuffle"
                             "  --match-end deals:N|points:N")]]
    lines += [
        [("class:title", "Moves (on your turn)")],
        [("", "  7h  10s  qd  ts             play that card (case and 10/T do not matter)")],
        [("", "  3                           play the 3rd card of your hand as shown")],
        [("", "  js h  j h  j                play a jack naming hearts (bare j asks the suit)")],
        [("", "  d / draw   p / pass         draw a card; pass after drawing (C7, K5)")],
        [("", "  4 (in muamele)              pick face-down card number 4 (K14)")],
        [("", "  Tab completes the legal moves; plain text off-turn is chat.")],
    ]
    return lines


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
        return [[("", "Not at a table. The rule sets are classic and cardiva; /create picks one.")]]
    lines: list[Fragments] = [[("class:title", f"Rules: {rules}")]]
    lines += [[("", f"  {line}")] for line in _RULE_SUMMARY.get(rules, [])]
    if options:
        opts = ", ".join(f"{k} {v}" for k, v in sorted(options.items()) if k != "rules")
        lines.append([("class:dim", f"  options: {opts}")])
    return lines
