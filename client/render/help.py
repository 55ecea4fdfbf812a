"""Help pages, refusals, the rules summary of `/rules`, the ladder and profiles."""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from typing import Any

from pisyedili.protocol.shapes import RULE_SETS

from ..parse import COMMANDS, REPLAY_COMMANDS
from .cards import card, suit
from .text import DEFAULT_LOOK, Dict, Fragments, Look, wrap

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


def help_lines(topic: str = "", width: int = 80, look: Look = DEFAULT_LOOK) -> list[Fragments]:
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
