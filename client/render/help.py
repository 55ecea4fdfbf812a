"""Help pages, refusals and the rules summary of `/rules`."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from prompt_toolkit.utils import get_cwidth

from pisyedili.protocol.shapes import BOT_LEVELS, RULE_SETS

from .. import catalogs
from ..i18n import CHOICES, ENGLISH, N_, _, current, ngettext, number
from ..parse import COMMANDS, REPLAY_COMMANDS, CommandSpec, usage_words
from .cards import card, suit
from .settings import level_name, options_text, rules_name
from .table import and_list
from .text import DEFAULT_LOOK, Dict, Fragments, Look, wrap

HELP_TOPICS = ("moves", "table", "lobby", "invite", "replay", "account", "operator", "screen")

_TOPIC_NAMES = {"moves": N_("moves"), "table": N_("table"), "lobby": N_("lobby"),
                # i18n: the help topic of play now and invitations (`/help invite`)
                "invite": N_("invite"), "replay": N_("replay"), "account": N_("account"),
                "operator": N_("operator"), "screen": N_("screen")}
"""Each help topic as the player reads and types it (`/help masa` is `/help table`)."""


def topic_names() -> str:
    """The help topics in the current language, as a list."""
    return _(", ").join(_(_TOPIC_NAMES[t]) for t in HELP_TOPICS)


def _topic(word: str) -> str:
    """The topic `word` names, in English or the current language; else `word`."""
    folded = word.casefold()
    return next((t for t, name in _TOPIC_NAMES.items() if folded == _(name).casefold()), word)

_MOVES_HELP = (
    ("7h  10s  qd  ts", N_("play that card (case, and 10 or T, do not matter)")),
    ("3", N_("play the card numbered 3 on the hand line")),
    ("js h  j h  j", N_("play a jack naming hearts (a bare j asks which suit)")),
    ("d  draw", N_("draw a card (C7, K5)")),
    ("p  pass", N_("end your turn once you have drawn (C7, K5)")),
    (N_("4 (in muamele)"), N_("pick face-down card number 4 (K14)")),
)

_CREATE_OPTIONS = N_("/create options: --name NAME, --ten reverse|bounce, --decks 1|2, "
                     "--turn SECONDS, --empty-stock end_deal|reshuffle, "
                     "--match-end deals:N|points:N, --rated")
_PLAY_OPTIONS = N_("/play options: --rated (players with an account only), --bots SECONDS "
                   "(how long the table you open waits before bots take its open seats; "
                   "0: never)")


def _rows(pairs: Sequence[tuple[str, str]], width: int) -> list[Fragments]:
    """Two columns, the second wrapped under itself (columns as the terminal counts them)."""
    col = min(max(get_cwidth(a) for a, __ in pairs), 20)
    out: list[Fragments] = []
    for a, b in pairs:
        pad = " " * max(col - get_cwidth(a), 0)
        out += wrap([("", f"  {a}{pad}  {b}")], width, col + 4)
    return out


def _commands(topic: str) -> list[tuple[str, str]]:
    return [(usage_words(c.usage), about(c)) for c in COMMANDS if c.topic == topic]


def about(command: CommandSpec) -> str:
    """What a command does, in the current language."""
    return _(command.about, levels=", ".join(map(level_name, BOT_LEVELS)),
             codes=", ".join(CHOICES), topics=topic_names())


def _text(text: str, width: int, style: str = "") -> list[Fragments]:
    return wrap([(style, text)], width, 2)


PLACES = ("lobby", "table", "playing", "watching", "replay")
"""Where the player stands, for `/help` alone (`ClientState.place`): each has its page."""

_ALSO = {
    "lobby": ("history", "say", "lang", "help", "quit"),
    "table": ("leave", "help"),
    "watching": ("log", "score", "rules", "say", "sit", "leave", "help", "quit"),
}
"""Commands of other pages that are of use where the player stands too."""


def _with(names: Sequence[str]) -> list[tuple[str, str]]:
    specs = {c.name: c for c in COMMANDS}
    return [(usage_words(specs[n].usage), about(specs[n])) for n in names]


def help_lines(topic: str = "", width: int = 80, look: Look = DEFAULT_LOOK,
               where: str = "playing") -> list[Fragments]:
    """`/help` and `/help TOPIC`: each page fits an 80×24 terminal beside the status area.
    `/help` alone shows what can be done `where` the player stands (`PLACES`)."""
    topic = _topic(topic.strip().lower().lstrip("/"))
    specs = {c.name: c for c in COMMANDS}
    if not topic and where in ("lobby", "table", "replay"):
        topic = where
    if not topic and where == "watching":
        return [[("class:title", _("Watching a table"))], *_rows(_with(_ALSO[where]), width),
                *_text(_("The players' hands stay hidden; /sit SEAT takes an open seat "
                         "before the match starts."), width, "class:dim")]
    if not topic:
        return [[("class:title", _("Help"))],
                *_text(_("On your turn: a card (7h, 10s, qd) or its number on the hand line, "
                         "js h for a jack naming hearts, d to draw, p to pass; Tab "
                         "completes."), width),
                *_rows(_commands("game"), width)]
    if topic == "moves":
        return [[("class:title", _("Moves (on your turn)"))],
                *_rows([(_(a), _(b)) for a, b in _MOVES_HELP], width),
                *_text(_("Tab completes the legal moves and /moves lists them; off your "
                         "turn, plain text is chat."), width)]
    if topic in ("account", "operator"):
        head = _("Accounts and ratings") if topic == "account" else _("Operators")
        return [[("class:title", head)], *_rows(_commands(topic), width),
                *_text(_("A registered name is yours alone: others get it suffixed. /login "
                         "remembers a login token for this server, never the password.")
                       if topic == "account" else _("Only the server's operators may use "
                                                    "these; every action is logged with "
                                                    "your name."), width, "class:dim")]
    if topic in ("table", "lobby"):
        head = _("At a table") if topic == "table" else _("In the lobby")
        lines = [[("class:title", head)],
                 *_rows(_commands(topic) + _with(_ALSO[topic]), width)]
        if topic == "table":
            lines += _text(_("Seats are numbered from 1. The host fills open seats with bots "
                             "and starts the match once every seat is ready."), width)
        else:
            lines += _text(_("/help create lists its options; /help invite: play now and "
                             "invitations."), width, "class:dim")
        return lines
    if topic == "invite":
        return [[("class:title", _("Play now and invitations"))],
                *_rows(_with(["play"]) + _commands("invite"), width),
                *_text(_("An invitation holds no seat: it ends when answered, after a "
                         "minute, or when the table fills, starts or its inviter leaves. "
                         "Who comes by /play or /accept is ready; a quick table starts "
                         "once every seat is filled and ready."), width, "class:dim")]
    if topic in ("replay", "history"):
        keys = [(_(" or ").join(words) + (f" ({key})" if key else ""), _(what))
                for words, key, what in REPLAY_COMMANDS]
        return [[("class:title", _("Finished matches"))], *_rows(_commands("replay"), width),
                [("class:title", _("In a replay (type a word, or press the key)"))],
                *_rows(keys, width),
                *_text(_("pisyedili replay FILE opens a saved match, no server needed."),
                       width)]
    if topic == "screen":
        turn = "▶" if look.unicode else ">"
        return [[("class:title", _("The screen"))],
                *_text(_("Above the prompt: what happened, newest last (/log shows this "
                         "deal again)."), width),
                *_text(_("Below it: the rule set and how far the match is (deal 2 of 4, or "
                         "to 101), the top card and the stock; every seat with its cards "
                         "and points, {turn} on the seat to act with its time left; your "
                         "hand, each card beside the number you type for it, the ones you "
                         "may play underlined; then your legal moves.", turn=turn), width),
                *_text(_("/sort rank|suit orders the hand; /bell rings when it is your "
                         "turn; /lang CODE changes the language."), width),
                *_text(_("Ctrl-C, Ctrl-D or /quit leaves; during a match, press it twice."),
                       width)]
    spec = specs.get(topic)
    if spec is None:
        return _text(_("No help on {topic}. Topics: {topics}, or a command name (/help "
                       "create).", topic=repr(topic), topics=topic_names()), width,
                     "class:error")
    lines = [[("class:title", usage_words(spec.usage))],
             *_text(_("{about}; e.g. {example}", about=about(spec), example=spec.example),
                    width)]
    if spec.name == "create":
        lines += _text(_(_CREATE_OPTIONS), width, "class:dim")
    if spec.name == "play":
        lines += _text(_(_PLAY_OPTIONS), width, "class:dim")
    return lines


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


REFUSALS: dict[str, str] = {
    "frame_too_large": N_("the message was too large for the server"),
    "malformed_frame": N_("the server could not read a message"),
    "not_a_map": N_("the server could not read a message"),
    "missing_type": N_("the server could not read a message"),
    "invalid_utf8": N_("the server could not read a message"),
    "bad_key": N_("the server could not read a message"),
    "text_message": N_("the server could not read a message"),
    "ext_not_allowed": N_("the server could not read a message"),
    "too_deep": N_("the server could not read a message"),
    "value_too_large": N_("that is too long for the server"),
    "unknown_type": N_("the server does not know that request"),
    "missing_field": N_("the request lacks a field"),
    "bad_field": N_("the server refused a value of that request"),
    "unsupported_version": N_("the server speaks another version of the protocol"),
    "hello_required": N_("the server expected a greeting first"),
    "already_welcomed": N_("already connected"),
    "bad_token": N_("the session expired: starting a new one"),
    "handshake_timeout": N_("the server waited too long for a greeting"),
    "idle_timeout": N_("the server heard nothing for too long"),
    "server_full": N_("the server is full"),
    "too_many_connections": N_("too many connections from your address"),
    "too_many_sessions": N_("too many sessions from your address"),
    "rate_limited": N_("too many requests too fast: wait a moment"),
    "too_slow": N_("the connection was too slow"),
    "shutting_down": N_("the server is shutting down"),
    "feature_not_negotiated": N_("this server does not offer that"),
    "internal_error": N_("the server failed on that request"),
    "cluster_unavailable": N_("the server cannot reach the rest of its cluster just now: "
                              "try again in a moment"),
    "no_such_table": N_("no table with that number or invite code"),
    "private_table": N_("that table is private: join it with its invite code"),
    "already_at_table": N_("you are at a table already; /leave it first"),
    "not_at_table": N_("you are not at a table"),
    "too_many_tables": N_("the server allows no more open tables"),
    "bad_options": N_("those table options are refused"),
    "test_decks_off": N_("this server deals no stacked decks"),
    "no_such_seat": N_("the table has no such seat"),
    "seat_taken": N_("that seat is not open"),
    "not_seated": N_("you do not hold a seat"),
    "not_a_bot": N_("that seat does not hold a bot"),
    "not_host": N_("only the table's host may do that"),
    "table_not_ready": N_("not every seat is filled and ready yet"),
    "game_in_progress": N_("a match is being played: seats cannot change now"),
    "no_game": N_("no deal is being played"),
    "match_not_over": N_("a rematch can only be agreed once the match is over"),
    "invite_self": N_("you cannot invite yourself"),
    "player_busy": N_("that player is at a table already"),
    "not_invitable": N_("that player's program takes no invitations"),
    "table_full": N_("your table has no open seat"),
    "too_many_invites": N_("too many invitations: wait a while"),
    "player_elsewhere": N_("that player, or your table, is on another server of this "
                           "cluster: invitations do not reach there"),
    "no_such_invite": N_("that invitation is over: it expired, ended or was answered"),
    "no_such_match": N_("no finished match with that number that you may see"),
    "history_unavailable": N_("this server keeps no finished matches"),
    "accounts_unavailable": N_("this server keeps no accounts"),
    "name_registered": N_("that name is registered to an account already"),
    "logged_in": N_("you are logged in already; /logout first"),
    "not_logged_in": N_("you are not logged in"),
    "bad_login": N_("wrong name, password or login token"),
    "too_many_logins": N_("too many login attempts: wait a while"),
    "server_busy": N_("the server is busy checking passwords: try again shortly"),
    "weak_password": N_("that password is too short"),
    "bad_password": N_("that password holds a character no password may"),
    "tls_required": N_("this server takes passwords only over an encrypted connection"),
    "account_required": N_("a rated table seats registered players only: log in, or "
                           "watch"),
    "bot_account_refused": N_("this table's host seats no bot accounts: watch it, or find "
                              "another table"),
    "not_operator": N_("only a server operator may do that"),
    "no_such_player": N_("nobody of that name is connected or registered"),
    "bad_network": N_("that is not an IP address or range"),
    "muted": N_("an operator muted you: you cannot chat"),
    "banned": N_("you are banned from this server"),
    "kicked": N_("an operator removed you from the server"),
    "not_your_turn": N_("it is not your turn"),
    "illegal_card": N_("that card cannot be played now"),
    "illegal_move": N_("that move is not allowed now"),
    "card_not_in_hand": N_("you do not hold that card"),
    "deal_over": N_("the deal is over"),
}
"""Every error code (protocol/errors.py) as the player reads it. The server's message is
English: in another language the code says what happened; a code not listed here (a
newer server's) is a plain refusal, in English the server's text."""



SANCTIONS = ("kicked", "banned", "muted")
"""The codes of an operator's sanction: shown in the player's words in every language,
with the operator's reason and how long it lasts (`sanction`)."""


def span(seconds: int | float) -> str:
    """A wait in the largest unit that keeps it readable, rounded up ("5 minutes")."""
    whole = max(1, math.ceil(seconds))
    if whole >= 2 * 86400:
        days = math.ceil(whole / 86400)
        return ngettext("{n} day", "{n} days", days, n=number(days))
    if whole >= 2 * 3600:
        hours = math.ceil(whole / 3600)
        return ngettext("{n} hour", "{n} hours", hours, n=number(hours))
    if whole >= 120:
        minutes = math.ceil(whole / 60)
        return ngettext("{n} minute", "{n} minutes", minutes, n=number(minutes))
    return ngettext("{n} second", "{n} seconds", whole, n=number(whole))


def sanction(msg: Dict) -> Fragments:
    """A kick, ban or mute (`error` or the `muted` notice) as the player reads it: what
    the operator did, why, and for how long (the server's `retry_after`)."""
    code = "muted" if msg.get("type") == "muted" else str(msg.get("code"))
    text = _(REFUSALS[code])
    text = text[:1].upper() + text[1:]
    if msg.get("reason"):
        text += _(" (reason: {reason})", reason=msg["reason"])
    left = msg.get("retry_after")
    if not isinstance(left, int | float) or isinstance(left, bool):
        text += _("; until an operator lifts it")
    elif code == "kicked":
        text += _("; you may come back in {span}", span=span(left))
    else:
        text += _("; it ends in {span}", span=span(left))
    return [("class:error", text)]


def refusal(msg: Dict, look: Look) -> Fragments:
    """A refused request as a player reads it: cards as on screen, seats counted from 1
    and the rule cited.  The code is for programs and stays off the screen."""
    code = str(msg.get("code") or "")
    if code in SANCTIONS:
        return sanction(msg)
    seat = msg.get("seat")
    if current() != ENGLISH and code in REFUSALS:
        # A refusal's `field` is the protocol's name for it (`options.ten`), English:
        # the words say which kind of thing was refused, not which field.
        text = _(REFUSALS[code])
    elif current() != ENGLISH:  # a newer server's code: its message is English
        text = _("the server refused that")
    else:
        text = str(msg.get("message") or _("the server refused that"))
        if isinstance(seat, int) and not isinstance(seat, bool):
            text = re.sub(rf"\bseat {seat}\b", f"seat {seat + 1}", text)
    out = with_cards(text[:1].upper() + text[1:], look, "class:error")
    waiting = [s + 1 for s in msg.get("waiting_for") or [] if isinstance(s, int)]
    if waiting:
        out.append(("class:error", ngettext(" (waiting for seat {seats})",
                                            " (waiting for seats {seats})", len(waiting),
                                            seats=", ".join(map(number, waiting)))))
    if msg.get("retry_after") is not None and current() != ENGLISH and code in REFUSALS:
        out.append(("class:error", _(" (try again in {seconds}s)",
                                     seconds=msg["retry_after"])))
    if msg.get("rule"):
        out.append(("class:dim", _(" (rule {rule})", rule=msg["rule"])))
    return out


_RULE_SUMMARY: dict[str, list[str]] = catalogs.rule_lines()
"""Each rule set's key rules with their numbers: the web's Rules panel shows the same
lines, from the same file and the same translations (`catalogs`)."""


def rules_lines(rules: str | None, options: Dict | None) -> list[Fragments]:
    """A summary of the table's rule set with rule numbers, and its options."""
    if not rules:
        sets = and_list([rules_name(r) for r in RULE_SETS])
        return [[("", _("Not at a table. The rule sets are {sets}; /create picks one.",
                        sets=sets))]]
    lines: list[Fragments] = [[("class:title", _("Rules: {rules}", rules=rules_name(rules)))]]
    lines += [[("", f"  {_(line)}")] for line in _RULE_SUMMARY.get(rules, [])]
    if options:
        opts = options_text(options)
        lines.append([("class:dim", "  " + _("options: {options}", options=opts))])
    return lines
