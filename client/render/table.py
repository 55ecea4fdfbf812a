"""At a table: who sits where, the event log, deal and match results, the status
area under the log, the muamele spread and `/log`'s pages.

The player's own seat is called "you", and a sentence about them is a message of its
own ("you played", "{who} played"): languages conjugate for the person."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import cards
from ..i18n import N_, _, ngettext, number
from .cards import card, card_list, hand_lines, legal_items, suit
from .settings import bot_name, bot_with_level, level_bot, level_name, rules_name
from .text import DEFAULT_LOOK, Dict, Fragments, Look, continued, flow, sep, wrap

PHASES = {"waiting": N_("waiting"), "playing": N_("playing"), "over": N_("over"),
          "muamele": N_("muamele")}
"""A table's or deal's phase (a wire word) as the screen says it."""


def phase_text(phase: object) -> str:
    return _(PHASES[phase]) if isinstance(phase, str) and phase in PHASES else str(phase or "")


def you() -> str:
    """What the log calls the player's own seat."""
    return _("you")


def is_you(who: str) -> bool:
    return who == you()


def seat_label(n: int) -> str:
    """Seat `n` (0-based) as the screen counts seats, from 1."""
    return _("seat {seat}", seat=n + 1)


def bot_label(n: int) -> str:
    return bot_name(n)


def table_name(table: Mapping[str, Any]) -> str:
    """A table's name: one opened without a name is worded here from its host's name
    (`named_for`), in the player's language; `name` is the server's English."""
    named_for = table.get("named_for")
    if isinstance(named_for, str) and named_for:
        return _("{name}'s table", name=named_for)
    return str(table.get("name", ""))


def shown_name(who: Mapping[str, Any]) -> str:
    """A seat's, ladder row's or kept seat's name; a bot account's marked as a bot's
    (its `bot`), so a person always sees which seats a program plays. A server bot is
    named in the player's language from its seat (`bot 3`) or, on the ladder, its level
    (`bot (hard)`), whatever name the server gave it."""
    if who.get("kind") == "bot":  # a server bot: by its seat, or a level of the ladder
        seat = who.get("seat")
        if isinstance(seat, int) and not isinstance(seat, bool):
            return bot_name(seat)
        return level_bot(who.get("level"))
    name = str(who.get("name") or "?")
    return _("{name} (bot)", name=name) if who.get("bot") is True else name


def cards_count(n: object) -> str:
    """`3 cards`; `? cards` for a count the server left out."""
    if isinstance(n, int) and not isinstance(n, bool):
        return ngettext("{n} card", "{n} cards", n)
    return _("? cards")


def points_count(n: object) -> str:
    if isinstance(n, int) and not isinstance(n, bool):
        return ngettext("{n} pt", "{n} pts", n)
    return _("? pts")


def face_down_count(n: object) -> str:
    if isinstance(n, int) and not isinstance(n, bool):
        return ngettext("{n} face-down card", "{n} face-down cards", n)
    return _("? face-down cards")


def seat_line(who: str, cards: str, points: str) -> str:
    """A seat in the status area: `bot 2: 5 cards, 30 pts`."""
    return _("{who}: {cards}, {points}", who=who, cards=cards, points=points)


def and_list(names: Sequence[str]) -> str:
    """Names joined as a sentence joins them ("a and b"); "nobody" for none."""
    if not names:
        return _("nobody")
    joined = names[0]
    for name in names[1:]:
        joined = _("{first} and {second}", first=joined, second=name)
    return joined


def seat_names(table: Dict | None, my_seat: int | None) -> dict[int, str]:
    """Seat number → what the log calls that seat: "you", a player's name, "bot 3".

    Bots are named by seat (the server may call every bot the same); players who share
    a name get their seat number added, so the log is never ambiguous.
    """
    seats = [s for s in (table or {}).get("seats", []) or [] if isinstance(s, Mapping)]
    humans = [shown_name(s) for s in seats if s.get("kind") == "human"]
    names: dict[int, str] = {}
    for i, s in enumerate(seats):
        n = int(s.get("seat", i))
        name = shown_name(s) if s.get("name") else ""
        if n == my_seat:
            names[n] = you()
        elif s.get("kind") == "bot":
            names[n] = bot_label(n)
        elif s.get("kind") == "human" and name:
            names[n] = name if humans.count(name) == 1 else f"{name} ({number(n + 1)})"
        else:
            names[n] = seat_label(n)
    return names


def seat_changes(before: Dict | None, after: Dict, my_seat: int | None) -> list[Fragments]:
    """What changed at a table between two `table_update`s, one short line each."""
    old = {int(s.get("seat", 0)): s for s in (before or {}).get("seats", []) or []}
    lines: list[Fragments] = []
    names = seat_names(after, my_seat)
    for s in after.get("seats", []) or []:
        n = int(s.get("seat", 0))
        was = old.get(n, {})
        who = names.get(n, seat_label(n))
        kind = s.get("kind")
        if kind != was.get("kind") or s.get("name") != was.get("name"):
            if kind == "open":
                lines.append([("", _("seat {seat} is open", seat=n + 1))])
            elif kind == "bot":
                text = (_("{who} ({level}) takes seat {seat}", who=who,
                          level=level_name(s["level"]), seat=n + 1) if s.get("level")
                        else _("{who} takes seat {seat}", who=who, seat=n + 1))
                lines.append([("", text)])
            else:
                lines.append([("", _("{who} sits at seat {seat}",
                                     who=shown_name(s) if s.get("name") else who,
                                     seat=n + 1))])
        elif kind == "human":
            if s.get("ready") != was.get("ready"):
                if is_you(who):
                    text = _("you are ready") if s.get("ready") else _("you are not ready")
                else:
                    text = (_("{who} is ready", who=who) if s.get("ready")
                            else _("{who} is not ready", who=who))
                lines.append([("", text)])
            lines += _presence(who, was, s, after.get("phase") == "playing")
    if before is not None and after.get("phase") != before.get("phase"):
        lines.append([("class:title", _("table is now {phase}",
                                        phase=phase_text(after.get("phase"))))])
    return lines


def _presence(who: str, was: Dict, now: Dict, playing: bool) -> list[Fragments]:
    """A human seat's connection and stand-in bot, as they changed: only what is true
    now is said (a bot released at the match's end does not mean its player is back)."""
    mine = is_you(who)
    held, held_before = now.get("held_by_bot"), was.get("held_by_bot")
    back = now.get("connected") and was.get("connected") is False
    lost = now.get("connected") is False and was.get("connected") is not False \
        and "connected" in was
    lines: list[Fragments] = []
    if lost:
        lines.append([("class:dim", _("you lost the connection") if mine
                       else _("{who} lost the connection", who=who))])
    if held and not held_before:
        if held == "disconnected":
            lines.append([("class:dim", _("you are away: a stand-in bot plays for you until "
                                          "you are back") if mine
                           else _("{who} is away: a stand-in bot plays for them until they "
                                  "are back", who=who))])
        elif mine:
            lines.append([("class:warn", _("a stand-in bot plays for you: say anything to "
                                           "take your seat back"))])
        else:
            lines.append([("class:dim", _("a stand-in bot plays for {who} until {who} acts",
                                          who=who))])
    elif held_before and not held and playing and now.get("connected") is not False:
        if mine:
            text = _("you are back and play again") if back else _("you play again")
        else:
            text = (_("{who} is back and plays again", who=who) if back
                    else _("{who} plays again", who=who))
        lines.append([("class:dim", text)])
        return lines
    if back:
        lines.append([("class:dim", _("you are back") if mine
                       else _("{who} is back", who=who))])
    return lines


def _who(seat: object, names: Mapping[int, str]) -> str:
    if isinstance(seat, int) and not isinstance(seat, bool):
        return names.get(seat, seat_label(seat))
    return "?"


# --------------------------------------------------------------------------- events


def _cite(rules: str | None, classic: str, cardiva: str) -> str:
    """The rule behind an effect, in the table's rule set (both when unknown)."""
    return {"classic": classic, "cardiva": cardiva}.get(rules or "", f"{classic}, {cardiva}")


def _said(who: str, mine: str, theirs: str, **fields: object) -> str:
    """`mine` about the player's own seat, else `theirs` about `who` (both translated)."""
    return _(mine, **fields) if is_you(who) else _(theirs, who=who, **fields)


def event(e: Dict, names: Mapping[int, str], look: Look, rules: str | None = None) -> Fragments:
    """One line of the event log for one engine event (docs/architecture.md, Events)."""
    kind = str(e.get("event", "?"))
    who = _who(e.get("seat"), names)
    if kind == "play":
        out: Fragments = [("", _said(who, N_("you played "), N_("{who} played "))),
                          *card(e.get("card"), look)]
        if e.get("suit"):
            out += [("", _(", naming ")), *suit(e["suit"], look)]
        return out
    if kind == "draw":
        count = int(e.get("count", 1) or 1)
        drawn = e.get("cards") or ([e["card"]] if e.get("card") else [])
        text = (ngettext("you drew {n} card", "you drew {n} cards", count) if is_you(who)
                else ngettext("{who} drew {n} card", "{who} drew {n} cards", count, who=who))
        out = [("", text)]
        if drawn:
            out += [("", ": "), *card_list(drawn, look)]
        reason = e.get("reason")
        if reason == "penalty":
            out.append(("class:warn", _(" (the 7s' penalty)")))
        elif reason == "ace":
            out.append(("class:dim", _(" (ace, K10)")))
        return out
    if kind == "pass":
        return [("", _said(who, N_("you passed"), N_("{who} passed")))]
    if kind == "penalty":
        count = e.get("count", "?")
        rule = _cite(rules, "C11", "K7")
        return [("class:warn", _said(who, N_("you must draw {count} or answer with a 7 "
                                             "({rule})"),
                                     N_("{who} must draw {count} or answer with a 7 ({rule})"),
                                     count=count, rule=rule))]
    if kind == "skip":
        return [("", _said(who, N_("you are skipped (8, C9)"), N_("{who} is skipped (8, C9)")))]
    if kind == "reverse":
        if len(names) == 2:  # either way round, the other player is next (C12a)
            return [("", _("10: with two players, play goes on as before (C12a)"))]
        return [("", _("10: the direction of play is reversed (C10)"))]
    if kind == "bounce":
        return [("", _said(who, N_("10: the turn bounces back to you (K9)"),
                           N_("10: the turn bounces back to {who} (K9)")))]
    if kind == "pisti":
        text = _said(who, N_("pişti! you must play again (K11)"),
                     N_("pişti! {who} must play again (K11)"))
        return [("", text if look.unicode else text.replace("pişti", "pisti"))]
    if kind == "reshuffle":
        return [("", _("the discards are shuffled into a new stock of {count}",
                       count=e.get("count", "?")))]
    if kind == "stock_out":
        return [("class:warn", _("the stock is empty: the deal ends ({rule})",
                                 rule=_cite(rules, "C15", "K6")))]
    if kind == "muamele":
        return [("class:title", _("muamele")),
                ("", _said(who, N_(": you pick {picks} of {spread} (K14)"),
                           N_(": {who} picks {picks} of {spread} (K14)"),
                           picks=e.get("picks", "?"), spread=face_down_count(e.get("spread"))))]
    if kind == "pick":
        position = int(e.get("position", 0)) + 1
        out = [("", _said(who, N_("you picked card {position}"),
                          N_("{who} picked card {position}"), position=position))]
        if e.get("card"):
            out += [("", ": "), *card(e["card"], look)]
        if e.get("picks") is not None:
            out.append(("class:dim", ngettext(" ({n} pick left)", " ({n} picks left)",
                                              int(e["picks"]))))
        return out
    if kind == "deal_start":
        dealer = _who(e.get("dealer"), names)
        deal = _("deal {deal}", deal=e.get("deal_no", ""))
        return [("class:title", f"— {deal} —" if look.unicode else f"-- {deal} --"),
                ("", _said(dealer, N_(" you dealt"), N_(" {who} dealt")))]
    if kind == "timeout":
        if e.get("bot") and is_you(who):
            return [("class:warn", _("you ran out of time again: a stand-in bot plays for "
                                     "you; say anything to take your seat back"))]
        if e.get("bot"):
            return [("class:warn", _("{who} ran out of time again: a stand-in bot plays for "
                                     "them until {who} acts", who=who))]
        return [("class:warn", _said(who, N_("you ran out of time; the server moves for you"),
                                     N_("{who} ran out of time; the server moves for them")))]
    # `deal_end` and `match_end` are shown whole by `deal_result` and `match_result`;
    # kinds unknown here are ignored, as the protocol asks of clients.
    return []


def deal_result(result: Dict, totals: Sequence[Any], names: Mapping[int, str],
                look: Look) -> list[Fragments]:
    """End of a deal: every hand revealed, each seat's points, the totals (C13-C15, K12-K14)."""
    winner = result.get("winner")
    who = _who(winner, names)
    if result.get("reason") == "stock_out":  # C15, K6
        if winner is None:
            head = _("deal over: the stock ran out; no winner")
        else:
            head = _said(who, N_("deal over: the stock ran out; you have the lowest hand"),
                         N_("deal over: the stock ran out; {who} has the lowest hand"))
    elif winner is not None:
        head = _said(who, N_("deal over: you went out"), N_("deal over: {who} went out"))
    else:
        head = _("deal over")
    mult = result.get("multiplier", 1)
    if mult and mult != 1:  # C14, K13
        head += _(", penalties ×{times}", times=mult) if look.unicode else \
            _(", penalties x{times}", times=mult)
    lines: list[Fragments] = [[("class:title", head)]]
    hands = result.get("hands") or []
    points = result.get("points") or []
    for seat in sorted(names):
        pts = _shown(points[seat] if seat < len(points) else "?")
        tot = _shown(totals[seat] if seat < len(totals) else "?")
        score = f"+{pts} → {tot}" if look.unicode else f"+{pts} -> {tot}"
        # The score before the hand: a long hand wraps, the scores stay in one column.
        row: Fragments = [("", f"  {names[seat]:<12} {score:<12} ")]
        h = hands[seat] if seat < len(hands) else []
        row += card_list(cards.sort_hand(list(h)), look) if h else [("class:dim", _("(out)"))]
        lines.append(row)
    return lines


def _shown(value: object) -> str:
    """A number from the server in the language's digits; anything else as it is."""
    return number(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else str(value)


def match_result(totals: Sequence[Any], winners: Sequence[int], names: Mapping[int, str],
                 can_rematch: bool = True) -> list[Fragments]:
    """End of a match: totals, lowest first, and the winner(s) (C16, K15)."""
    who = and_list([_who(w, names) for w in winners])
    lines: list[Fragments] = [[("class:good", _("match over: {who} won", who=who))]]
    order = sorted(range(len(totals)), key=lambda s: totals[s])
    for s in order:
        lines.append([("", f"  {_who(s, names):<12} {_shown(totals[s])}")])
    if can_rematch:
        lines.append([("", _("Play again? /rematch (or /rematch no, /leave)"))])
    return lines


def table_summary(table: Dict, my_seat: int | None, look: Look = DEFAULT_LOOK,
                  show_code: bool = True) -> list[Fragments]:
    """Who sits where at a table that is not playing yet; its invite code unless
    `show_code` is false (offline, where nobody else can join)."""
    head = _("table #{id} {name}", id=_shown(table.get("id", "?")),
             name=table_name(table)).rstrip()
    head += f"{sep(look)}{rules_name(table.get('rules'))}{sep(look)}"
    head += phase_text(table.get("phase"))
    if table.get("code") and show_code:
        head += sep(look) + _("invite code {code}", code=table["code"])
    lines: list[Fragments] = [[("class:title", head)]]
    for s in table.get("seats", []) or []:
        n = int(s.get("seat", 0))
        kind = s.get("kind", "open")
        label = _("(open)") if kind == "open" else shown_name({"name": kind, **s})
        if kind == "bot":
            label = bot_with_level(n, s.get("level"))
        if s.get("ready") and kind != "open":
            label += _(" ready")
        if kind == "human" and s.get("connected") is False:
            label += _(" (disconnected)")
        style = "class:me" if n == my_seat else ""
        lines.append([(style, "  " + _("seat {seat}: {label}", seat=n + 1, label=label))])
    if table.get("spectators"):
        lines.append([("class:dim", "  " + _("watching: {names}", names=", ".join(
            map(str, table["spectators"]))))])
    return lines


# --------------------------------------------------------------------------- status


def time_left(deadline_at: float | None, now: float) -> str:
    if deadline_at is None:
        return ""
    return _("{seconds}s", seconds=max(0, math.ceil(deadline_at - now)))


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
    rows: int = 0
    """The most rows the status area may take (0: as many as it needs)."""


def link_note(link: str, look: Look) -> Fragments:
    """The connection, when it is not up: the rest of the screen may be out of date."""
    dash = " — " if look.unicode else " - "
    text = {"connecting": _("connecting to the server"),
            "reconnecting": _("disconnected{dash}reconnecting", dash=dash),
            "gone": _("disconnected")}.get(link)
    return [("class:warn", text)] if text else []


def progress(options: Dict | None, deal_no: object) -> list[str]:
    """How far the match is: `deal 2 of 4` (C16), or `deal 3` and `to 101` (K15)."""
    kind, __, n = str((options or {}).get("match_end") or "").partition(":")
    numbered = isinstance(deal_no, int) and bool(deal_no)
    if kind == "deals" and n.isdigit() and numbered:
        return [_("deal {deal} of {deals}", deal=deal_no, deals=int(n))]
    deal = [_("deal {deal}", deal=deal_no)] if numbered else []
    if kind == "points" and n.isdigit():
        return [*deal, _("to {points}", points=int(n))]
    return deal


def status(view: Dict | None, names: Mapping[int, str], my_seat: int | None, look: Look,
           at: Moment = Moment()) -> list[Fragments]:
    """The status area under the log, in rows of at most `at.width` columns: the table
    line, every seat, the hand, what to do now. Past `at.rows` rows it is drawn
    compact (`_blocks`), then cut, the hand and the moves kept last (`_cut`): the log
    above must keep rows of its own, or the others' moves scroll away unseen."""
    if not view:
        return []
    blocks = _blocks(view, names, my_seat, look, at, compact=False)
    if at.rows and sum(map(len, blocks)) > at.rows:
        blocks = _cut(_blocks(view, names, my_seat, look, at, compact=True), at.rows)
    return [row for block in blocks for row in block]


def _blocks(view: Dict, names: Mapping[int, str], my_seat: int | None, look: Look,
            at: Moment, compact: bool) -> list[list[Fragments]]:
    """The status area's rows, in blocks: the table line, the seats, the muamele spread,
    the hand, the moves or whom we wait for. `compact` leaves out what a player can do
    without (the rule set, the match's progress, the rules explained, the points,
    whom we wait for) and packs the seats."""
    width = at.width
    rules = view.get("rules", "")
    phase = view.get("phase")
    line1: list[Fragments] = []
    if link_note(at.link, look):
        line1.append(link_note(at.link, look))
    if not compact:
        line1.append([("class:title", rules_name(rules))])
        line1 += [[("", p)] for p in progress(view.get("options"), view.get("deal_no"))]
    if at.match_over:
        who = and_list([_who(w, names) for w in at.winners])
        line1.append([("class:good", _("match over: {who} won", who=who))])
        if my_seat is not None:
            line1.append([("class:dim", _("/rematch to play again, /leave for the lobby"))])
    elif phase == "over":
        line1.append([("", _("deal over"))])
        if at.next_deal:
            line1.append([("class:dim", _("next deal {when}", when=at.next_deal))])
    else:
        line1 += table_items(view, look, explained=not compact)
    blocks = [flow([], line1, width, sep(look), indent=2)]

    over = at.match_over or phase == "over"
    turn = None if over else (view.get("turn") if at.turn_seat is None else at.turn_seat)
    blocks.append(flow([], _seat_items(view, names, my_seat, look, at, turn, compact), width,
                       indent=2))

    muamele = view.get("muamele")
    if phase == "muamele" and isinstance(muamele, Mapping):
        blocks.append(wrap(spread(muamele, names, look), width))
    held: list[str] = []
    if my_seat is not None and view.get("hand") is not None:
        held = cards.sort_hand(list(view["hand"]), at.order)
        blocks.append(hand_lines(held, look, at.legal, width))
    if at.legal:
        blocks.append(flow([("class:good", _("your move: "))],
                           legal_items(at.legal, look, held), width))
    elif turn is not None and turn != my_seat and not at.link and not compact:
        blocks.append([[("class:dim", _("waiting for {who}", who=_who(turn, names)))]])
    return blocks


def _cut(blocks: list[list[Fragments]], rows: int) -> list[list[Fragments]]:
    """`blocks` in at most `rows` rows (or the last block's, if more): the table line
    and the seats give up their later rows first, then whole blocks go from the top;
    the hand and the moves, last, are what a turn needs."""
    for i in range(min(len(blocks) - 1, 2)):
        while sum(map(len, blocks)) > rows and len(blocks[i]) > 1:
            blocks[i] = blocks[i][:-1]
    while sum(map(len, blocks)) > rows and len(blocks) > 1:
        blocks = blocks[1:]
    return blocks


def table_items(view: Dict, look: Look, explained: bool = True) -> list[Fragments]:
    """The deal being played: top card, penalty, stock, what the next card must do
    (with `explained`, the rules that make it so, and the direction of play)."""
    rules = view.get("rules", "")
    top = view.get("top")
    first: Fragments = [("", _("top ")),
                        *(card(top, look) if top else [("class:dim", _("none"))])]
    if view.get("named_suit"):
        first += [("", _(" named ")), *suit(view["named_suit"], look)]
    items = [first]
    if view.get("penalty"):
        items.append([("class:warn", _("7s penalty {count}", count=view["penalty"]))])
    items.append([("", _("stock {count}", count=_shown(view.get("stock", "?"))))])
    if not explained:
        return items
    if view.get("first_round"):
        items.append([("class:dim", _("opening: clubs ({rule})", rule=_cite(rules, "C2", "K3")))])
    follow = view.get("must_follow")
    if follow == "ace":
        items.append([("class:dim", _("ace: one more card ({rule})",
                                      rule=_cite(rules, "C12", "K10")))])
    elif follow == "pisti":
        items.append([("class:dim", _("pisti: play again (K11)"))])
    direction = view.get("direction")
    if direction in (1, -1) and _seats_in(view) != 2:  # two: a 10 changes nothing seen (C12a)
        arrow = ("→" if direction == 1 else "←") if look.unicode else (
            "->" if direction == 1 else "<-")
        items.append([("class:dim", _("play goes {arrow}", arrow=arrow))])
    return items


def _seats_in(view: Dict) -> int:
    """How many seats the deal is played by."""
    players = view.get("players")
    if isinstance(players, int) and not isinstance(players, bool):
        return players
    return len(view.get("hand_counts") or [])


def _seat_items(view: Dict, names: Mapping[int, str], my_seat: int | None, look: Look,
                at: Moment, turn: object, compact: bool = False) -> list[Fragments]:
    """One item per seat: its cards and points (`compact`: its cards), the turn marker
    and clock on the seat to act."""
    counts = view.get("hand_counts") or []
    scores = view.get("scores") or []
    items: list[Fragments] = []
    for seat in sorted(set(names) | set(range(len(counts)))):
        n = counts[seat] if seat < len(counts) else None
        sc = scores[seat] if seat < len(scores) else 0
        note = at.notes.get(seat)
        who = _who(seat, names) + (f" ({note})" if note else "")
        label = (_("{who}: {cards}", who=who, cards=cards_count(n)) if compact
                 else seat_line(who, cards_count(n), points_count(sc)))
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
    return [("class:title", _("muamele")),
            ("", _said(who, N_(" you pick {picks} more of {spread}: "),
                       N_(" {who} picks {picks} more of {spread}: "), picks=picks,
                       spread=face_down_count(size))),
            ("class:dim", shown),
            ("", f" ({number(1)}-{number(size)})" if size else "")]


def log_page(lines: Sequence[Fragments], page: int, rows: int, width: int,
             deal_no: object = None, look: Look = DEFAULT_LOOK) -> list[Fragments]:
    """Page `page` (1: the newest) of this deal's log, in at most `rows` rows with its
    header, each wrapped row marked as the log marks them; a line is never split across
    two pages."""
    if not lines:
        return [[("class:dim", _("Nothing has happened in this deal yet."))]]
    room = max(rows - 1, 3)
    pages: list[list[Fragments]] = []
    current: list[Fragments] = []
    for line in reversed(lines):
        wrapped = wrap(line, width, mark=continued(look))
        if current and len(current) + len(wrapped) > room:
            pages.append(current)
            current = []
        current[:0] = wrapped
    pages.append(current)
    page = min(max(page, 1), len(pages))
    if isinstance(deal_no, int):
        head = _("deal {deal}, page {page} of {pages}", deal=deal_no, page=page,
                 pages=len(pages))
    else:
        head = _("this deal, page {page} of {pages}", page=page, pages=len(pages))
    if page < len(pages):
        head += _(" (/log {page} for earlier moves)", page=page + 1)
    return [*wrap([("class:title", head)], width), *pages[page - 1]]
