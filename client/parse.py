"""What the player typed → a wire message, a move, or a local action.

Pure functions: they see only the text and a `Context` (the hand as shown, the legal
moves the server sent, whether it is our turn), never a socket.  Moves are read
forgivingly (`7h`, `10S`, `ts`, `js h`, `j` then a suit, a hand index, `d`, `p`);
legality stays the server's call — a well-formed move the server did not list is
still sent, so the player gets the server's reason and rule rather than ours.

Seats, hand indices and muamele positions are 1-based on screen and 0-based on the
wire; the conversion lives here and in `render`, nowhere else.
"""

from __future__ import annotations

import re
import shlex
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pisyedili.protocol.limits import MAX_ID
from pisyedili.protocol.shapes import BOT_LEVELS, HISTORY_PAGE, RULE_SETS

from . import cards
from .i18n import CHOICES, N_, _, ngettext
from .terms import level_name, rules_name, typed_level, typed_rules

WireMove = Mapping[str, Any]
Message = dict[str, Any]


@dataclass(frozen=True)
class Context:
    """What the parser may know about the game at the moment of typing."""

    hand: Sequence[str] = ()
    """The hand in display order (`cards.sort_hand`), so index 1 is the first shown."""
    legal: Sequence[WireMove] = ()
    my_turn: bool = False
    at_table: bool = False
    lobby_offset: int = 0
    """Where the lobby page we hold starts in the whole list."""
    lobby_total: int | None = None
    """How many tables the lobby holds (None: unknown, or the page is all of them)."""
    lobby_page: int = 200
    """Rows per lobby page."""
    invite: int | None = None
    """The latest invitation we hold and have not answered, if any."""


@dataclass(frozen=True)
class Move:
    """A move to send as `{"type": "move", "move": ...}`."""

    move: WireMove


@dataclass(frozen=True)
class NeedSuit:
    """A jack was chosen without a suit to name (C5, K8): ask, then send."""

    card: str


@dataclass(frozen=True)
class Request:
    """A lobby or table request, ready to send (the connection adds the `id`)."""

    msg: Message


@dataclass(frozen=True)
class Local:
    """A command the client answers itself (`help`, `rules`, `quit`, `moves`)."""

    name: str
    arg: str = ""


@dataclass(frozen=True)
class Secret:
    """An account request that needs a password typed at a hidden prompt first
    (`register`, `login` NAME, `passwd`): never on the command line, where the screen
    and the history would keep it."""

    kind: str
    name: str = ""


@dataclass(frozen=True)
class Chat:
    text: str


@dataclass(frozen=True)
class Invalid:
    """Input we cannot turn into anything; `message` tells the player what to type."""

    message: str
    cards: bool = False
    """`message` names cards in wire notation, to be drawn as the screen draws them."""


Parsed = Move | NeedSuit | Request | Local | Chat | Invalid | Secret


# --------------------------------------------------------------------------- moves

_JACK_SUIT = re.compile(r"^(?P<card>\S+?)\s*(?:[\s>:/=-]|\s*->)\s*(?P<suit>\S+)$")


def is_pick_phase(legal: Sequence[WireMove]) -> bool:
    """Muamele (K14): the only decisions offered are positions in the spread."""
    return bool(legal) and all(m.get("kind") == "pick" for m in legal)


def _is_jack(card: str) -> bool:
    return cards.rank_of(card) == "J"


def _play(card: str, suit: str | None, ctx: Context) -> Parsed:
    if ctx.hand and card not in ctx.hand:
        return Invalid(_("You do not hold {card}.", card=card), cards=True)
    if _is_jack(card):
        if suit is None:
            return NeedSuit(card)
        return Move({"kind": "play", "card": card, "suit": suit})
    if suit is not None:
        return Invalid(_("Only a jack names a suit (C5, K8)."))
    return Move({"kind": "play", "card": card})


def _legal_cards(ctx: Context) -> set[str]:
    return {
        cards.normalise(m.get("card"))
        for m in ctx.legal
        if m.get("kind") == "play" and m.get("card") is not None
    }


def _resolve_rank(rank: str, ctx: Context) -> str | Invalid:
    """A bare rank (`q`, `j`): the one card of that rank the player means."""
    held = sorted({c for c in ctx.hand if cards.rank_of(c) == rank}, key=cards.display_key)
    if not held:
        return Invalid(_("You hold no {rank}.", rank=rank) if ctx.hand
                       else _("Say which suit, e.g. qd."))
    legal = [c for c in held if c in _legal_cards(ctx)]
    # Jacks differ only by the suit they carry, never by what they do: any legal one will do.
    if len(legal) == 1 or (legal and rank == "J"):
        return legal[0]
    if not legal and (len(held) == 1 or rank == "J"):
        return held[0]  # not legal: the server will say why, with the rule
    return Invalid(_("Which one? {cards}", cards=" ".join(legal or held)), cards=True)


def _parse_card_or_rank(text: str, ctx: Context) -> str | Invalid | None:
    card = cards.parse_card(text)
    if card is not None:
        return card
    rank = cards.parse_rank(text)
    if rank is not None and not text.strip().isdigit():
        return _resolve_rank(rank, ctx)
    return None


def _parse_number(n: int, suit: str | None, ctx: Context) -> Parsed:
    if is_pick_phase(ctx.legal):
        positions = sorted(int(m["position"]) for m in ctx.legal if "position" in m)
        if suit is not None:
            return Invalid(_("A muamele pick is a position number, e.g. 3 (K14)."))
        if positions and (n - 1) not in positions:
            return Invalid(_("Pick a position from {first} to {last}.", first=positions[0] + 1,
                             last=positions[-1] + 1))
        return Move({"kind": "pick", "position": n - 1})
    if not ctx.hand:
        return Invalid(_("No hand to choose from."))
    if not 1 <= n <= len(ctx.hand):
        return Invalid(_("Card numbers go from 1 to {last}.", last=len(ctx.hand)))
    return _play(ctx.hand[n - 1], suit, ctx)


_DRAW_WORDS = frozenset({"çek", "взять", "беру", "узяти", "взяти", "برداشتن", "بردار",
                         "کشیدن", "بکش", "จั่ว"})
"""`draw` as the screen says it in each language (the legal moves show it so), and as
players there say it."""
_PASS_WORDS = frozenset({"pas", "пас", "پاس", "ผ่าน"})


def _ascii_digits(text: str) -> str:
    """Any decimal digit as 0-9: a Persian keyboard types ۷, and `دل ۷` is `دل 7`."""
    return "".join(str(unicodedata.decimal(ch)) if ch.isdecimal() else ch for ch in text)


def parse_move(text: str, ctx: Context) -> Parsed | None:
    """A move from its short form, or None if the text does not look like a move."""
    t = _ascii_digits(text.strip().lower())
    if t in ("d", "draw") or t in _DRAW_WORDS:
        return Move({"kind": "draw"})
    if t in ("p", "pass") or t in _PASS_WORDS:
        return Move({"kind": "pass"})
    m = re.fullmatch(r"(?:pick\s+)?(\d+)", t)
    if m:
        return _parse_number(int(m.group(1)), None, ctx)
    named = cards.parse_named_card(t)
    if named is not None:
        return _play(named, None, ctx)
    words = t.split()
    if len(words) == 3:  # a jack in words, then the suit it names: `sinek vale kupa`
        named, suit = cards.parse_named_card(" ".join(words[:2])), cards.parse_suit(words[2])
        if named is not None and suit is not None:
            return _play(named, suit, ctx)

    # A whole card (`7h`, `js`) or a bare rank (`j`, `q`) ...
    card = _parse_card_or_rank(t, ctx)
    if isinstance(card, Invalid):
        return card
    if card is not None:
        return _play(card, None, ctx)

    # ... optionally followed by a suit to name: `js h`, `js>h`, `j h`, `3 h`, `jsh`.
    m = _JACK_SUIT.match(t)
    parts = (m.group("card"), m.group("suit")) if m else (t[:-1], t[-1:]) if len(t) > 2 else None
    if parts is None:
        return None
    head, tail = parts
    suit = cards.parse_suit(tail)
    if suit is None:
        return None
    if head.isdigit():
        return _parse_number(int(head), suit, ctx)
    card = _parse_card_or_rank(head, ctx)
    if isinstance(card, Invalid):
        return card
    if card is None:
        return None
    return _play(card, suit, ctx)


def move_input(move: WireMove) -> str:
    """How the player would type a wire move: the completion text for it."""
    kind = move.get("kind")
    if kind == "play":
        card = cards.normalise(move.get("card")).lower()
        suit = move.get("suit")
        return f"{card} {suit}" if suit else card
    if kind == "pick":
        return f"pick {int(move.get('position', 0)) + 1}"
    return str(kind)


def move_inputs(legal: Sequence[WireMove]) -> list[str]:
    """Completion texts for exactly the legal moves the server sent, without repeats."""
    seen: dict[str, None] = {}
    for m in legal:
        seen.setdefault(move_input(m), None)
    return list(seen)


# ------------------------------------------------------------------------ commands


PLACEHOLDERS = {
    "CODE": N_("CODE"), "FILE": N_("FILE"), "HOW-MANY": N_("HOW-MANY"), "ID": N_("ID"),
    "LEVEL": N_("LEVEL"), "MINUTES": N_("MINUTES"), "NAME": N_("NAME"), "PAGE": N_("PAGE"),
    "RANGE": N_("RANGE"), "REASON": N_("REASON"), "RULES": N_("RULES"), "SEAT": N_("SEAT"),
    "SEATS": N_("SEATS"), "SECONDS": N_("SECONDS"), "TABLE": N_("TABLE"),
    "TABLE-ID": N_("TABLE-ID"), "TEXT": N_("TEXT"), "TOPIC": N_("TOPIC"),
    "options": N_("options"),
}
"""The words of a command's usage that stand for what the player types in their place
(`/sit SEAT`), said in the player's language; the command's own words stay as typed."""

_PLACEHOLDER = re.compile(r"(?<![\w-])(?:[A-Z][A-Z-]*[A-Z]|options)(?![\w-])")


def usage_words(usage: str) -> str:
    """`usage` with its placeholders in the current language (`/sit SEAT` → `/sit YER`)."""
    return _PLACEHOLDER.sub(lambda m: _(PLACEHOLDERS[m[0]]) if m[0] in PLACEHOLDERS
                            else m[0], usage)


@dataclass(frozen=True)
class CommandSpec:
    name: str
    usage: str
    example: str
    about: str
    build: Callable[[list[str], Context], Parsed] = field(repr=False)
    topic: str = "game"
    """The /help page that lists it: `game` (the first page), `table`, `lobby`, `invite`..."""


def _choices(keys: Sequence[str], name: Callable[[str], str]) -> str:
    """A usage's choices (`klasik|Cardiva`), in the words of the current language."""
    return "|".join(map(name, keys))


def _seat(text: str) -> int | None:
    return int(text) - 1 if text.isdigit() and int(text) >= 1 else None


def _create(args: list[str], ctx: Context) -> Parsed:
    usage = Invalid(_(
        "Usage: {usage}",
        usage=usage_words(
            f"/create {_choices(RULE_SETS, rules_name)} SEATS [--private] [--rated] [--name NAME]"
            " [--ten reverse|bounce] [--empty-stock end_deal|reshuffle]"
            " [--match-end deals:4|points:101] [--decks 1|2] [--turn SECONDS]")
    ))
    rules = typed_rules(args[0]) if args else None
    if len(args) < 2 or rules is None or not args[1].isdigit():
        return usage
    msg: Message = {"type": "create_table", "rules": rules, "seats": int(args[1])}
    options: dict[str, Any] = {}
    flags = {
        "--ten": "ten",
        "--empty-stock": "empty_stock",
        "--match-end": "match_end",
        "--decks": "decks",
        "--turn": "turn_seconds",
    }
    rest = args[2:]
    while rest:
        flag = rest.pop(0).lower()
        if flag == "--private":
            msg["private"] = True
        elif flag == "--rated":
            msg["rated"] = True  # registered players only; its matches change ratings
        elif flag in ("--name", *flags) and rest:
            value = rest.pop(0)
            if flag == "--name":
                msg["name"] = value
            elif flag in ("--decks", "--turn"):
                if not value.isdigit():
                    return Invalid(_("{flag} takes a number.", flag=flag))
                options[flags[flag]] = int(value)
            else:
                options[flags[flag]] = value.lower()
        else:
            return usage
    if options:
        msg["options"] = options
    return Request(msg)


def _play_now(args: list[str], ctx: Context) -> Parsed:
    """`/play [RULES] [SEATS] [--rated] [--bots SECONDS]`: `play_now`."""
    usage = Invalid(_("Usage: {usage}", usage=f"/play [{'|'.join(RULE_SETS)}] [SEATS] "
                                              "[--rated] [--bots SECONDS]"))
    msg: Message = {"type": "play_now"}
    rest = list(args)
    while rest:
        word = rest.pop(0).lower()
        if word in RULE_SETS and "rules" not in msg:
            msg["rules"] = word
        elif word.isdigit() and "seats" not in msg:
            msg["seats"] = int(word)
        elif word == "--rated":
            msg["rated"] = True
        elif word == "--bots" and rest and rest[0].isdigit():
            msg["bots_after"] = int(rest.pop(0))
        else:
            return usage
    return Request(msg)


def _invite(args: list[str], ctx: Context) -> Parsed:
    if len(args) != 1:
        return Invalid(_("Usage: {usage}", usage="/invite NAME"))
    return Request({"type": "invite", "name": args[0]})


def _answer(accept: bool) -> Callable[[list[str], Context], Parsed]:
    """`/accept [ID]`, `/decline [ID]`: the latest invitation, or the one numbered."""
    def build(args: list[str], ctx: Context) -> Parsed:
        if len(args) > 1 or (args and not args[0].lstrip("#").isdigit()):
            return Invalid(_("Usage: {usage}", usage="/accept [ID]" if accept
                             else "/decline [ID]"))
        invite = int(args[0].lstrip("#")) if args else ctx.invite
        if invite is None or invite > MAX_ID:
            return Invalid(_("You hold no invitation to answer."))
        return Request({"type": "answer_invite", "invite": invite, "accept": accept})

    return build


def _join(spectate: bool) -> Callable[[list[str], Context], Parsed]:
    def build(args: list[str], ctx: Context) -> Parsed:
        if len(args) != 1:
            return Invalid(_("Usage: {usage} TABLE-ID or INVITE-CODE",
                             usage="/watch" if spectate else "/join"))
        arg = args[0]
        msg: Message = {"type": "join_table"}
        if arg.isdigit():
            msg["table"] = int(arg)
        else:
            msg["code"] = arg
        if spectate:
            msg["spectate"] = True
        return Request(msg)

    return build


def _sit(args: list[str], ctx: Context) -> Parsed:
    seat = _seat(args[0]) if len(args) == 1 else None
    if seat is None:
        return Invalid(_("Usage: {usage} (seats are numbered from 1)",
                         usage=usage_words("/sit SEAT")))
    return Request({"type": "sit", "seat": seat})


def _bot(add: bool) -> Callable[[list[str], Context], Parsed]:
    def build(args: list[str], ctx: Context) -> Parsed:
        seat = _seat(args[0]) if args else None
        level = typed_level(args[1]) if len(args) > 1 else None
        if seat is None or len(args) > (2 if add else 1):
            return Invalid(_("Usage: {usage}", usage=usage_words(
                f"/bot SEAT [{_choices(BOT_LEVELS, level_name)}]" if add else "/unbot SEAT")))
        if len(args) > 1 and level is None:
            return Invalid(_("Bot levels: {levels}.",
                             levels=", ".join(map(level_name, BOT_LEVELS))))
        msg: Message = {"type": "add_bot" if add else "remove_bot", "seat": seat}
        if level is not None:
            msg["level"] = level
        return Request(msg)

    return build


def _simple(msg: Message) -> Callable[[list[str], Context], Parsed]:
    def build(args: list[str], ctx: Context) -> Parsed:
        return Request(dict(msg))

    return build


def _rematch(args: list[str], ctx: Context) -> Parsed:
    agree = not (args and args[0].lower() in ("no", "n", "off", "false"))
    return Request({"type": "rematch", "agree": agree})


def _say(args: list[str], ctx: Context) -> Parsed:
    # Replaced by the raw-text path in parse_input.
    return Invalid(_("Usage: {usage}", usage=usage_words("/say TEXT")))


def _local(name: str) -> Callable[[list[str], Context], Parsed]:
    def build(args: list[str], ctx: Context) -> Parsed:
        return Local(name, " ".join(args))

    return build


def _choice(name: str, choices: Sequence[str]) -> Callable[[list[str], Context], Parsed]:
    """A local command with one optional argument out of `choices` (none: toggle)."""
    def build(args: list[str], ctx: Context) -> Parsed:
        arg = args[0].lower() if len(args) == 1 else ""
        if len(args) > 1 or (args and arg not in choices):
            return Invalid(_("Usage: {usage}",
                             usage=usage_words(f"/{name} [{'|'.join(choices)}]")))
        return Local(name, arg)

    return build


def _lobby(args: list[str], ctx: Context) -> Parsed:
    """`/lobby` asks for the page we hold again; `PAGE`, `next` or `prev` for another."""
    usage = Invalid(_("Usage: {usage} (pages are numbered from 1)",
                      usage=usage_words("/lobby [PAGE|next|prev]")))
    page = max(ctx.lobby_page, 1)
    pages = None if ctx.lobby_total is None else max(1, -(-ctx.lobby_total // page))
    arg = args[0].lower() if len(args) == 1 else ""
    if len(args) > 1:
        return usage
    if not arg:
        offset = ctx.lobby_offset
    elif arg in ("next", "n"):
        offset = ctx.lobby_offset + page
        if ctx.lobby_total is None or offset >= ctx.lobby_total:
            return Invalid(_("This is the last page of the lobby (/lobby 1 for the "
                             "first)."))
    elif arg in ("prev", "p", "previous"):
        if ctx.lobby_offset <= 0:
            return Invalid(_("This is the first page of the lobby."))
        offset = max(ctx.lobby_offset - page, 0)
    elif arg.isdigit() and int(arg) >= 1:
        if pages is not None and int(arg) > pages:
            return Invalid(ngettext("The lobby has {n} page.", "The lobby has {n} pages.",
                                    pages))
        offset = (int(arg) - 1) * page
    else:
        return usage
    msg: Message = {"type": "lobby_subscribe"}
    if offset:
        msg["offset"] = offset
    return Request(msg)


def _history(args: list[str], ctx: Context) -> Parsed:
    """`/history [mine|recent|NAME] [PAGE]`: one page of finished matches."""
    usage = Invalid(_("Usage: {usage} (pages are numbered from 1)",
                      usage=usage_words("/history [mine|recent|NAME] [PAGE]")))
    page = 1
    if args and args[-1].isdigit():
        page = int(args.pop())
        if page < 1:
            return usage
    if len(args) > 1:
        return usage
    who = args[0] if args else "mine"
    msg: Message = {"type": "history", "of": who.lower() if who.lower() in ("mine", "recent")
                    else "player"}
    if msg["of"] == "player":
        msg["name"] = who
    if page > 1:
        msg["offset"] = (page - 1) * HISTORY_PAGE
    return Request(msg)


def _match_id(text: str) -> str | None:
    """A match id as typed (`12` or `#12`), or None if it cannot be one."""
    digits = text.lstrip("#")
    return digits if digits.isdigit() and int(digits) <= MAX_ID else None


def _replay(args: list[str], ctx: Context) -> Parsed:
    match = _match_id(args[0]) if len(args) == 1 else None
    if match is None:
        return Invalid(_("Usage: {usage} (the match's number in /history)",
                         usage=usage_words("/replay ID")))
    return Local("replay", match)


def _export(args: list[str], ctx: Context) -> Parsed:
    """`/export ID FILE`, or `/export FILE` for the match being replayed."""
    match = _match_id(args[0]) if len(args) == 2 else None
    if match is not None:
        return Local("export", f"{match}\n{args[1]}")  # typed lines hold no newline
    if len(args) == 1:
        return Local("export", args[0])
    return Invalid(_("Usage: {usage} (or /export FILE during a replay)",
                     usage=usage_words("/export ID FILE")))
def _secret(kind: str, usage: str, names: int = 0) -> Callable[[list[str], Context], Parsed]:
    def build(args: list[str], ctx: Context) -> Parsed:
        if len(args) != names:
            return Invalid(_("Usage: {usage} (the password is asked for next, hidden)",
                             usage=usage_words(usage)))
        return Secret(kind, args[0] if args else "")

    return build


def _logout(args: list[str], ctx: Context) -> Parsed:
    if len(args) > 1 or (args and args[0].lower() not in ("everywhere", "all")):
        return Invalid(_("Usage: {usage}", usage=usage_words("/logout [everywhere]")))
    msg: Message = {"type": "logout"}
    if args:
        msg["everywhere"] = True
    return Request(msg)


def _top(args: list[str], ctx: Context) -> Parsed:
    rules = [r for r in map(typed_rules, args) if r is not None]
    counts = [a for a in args if a.isdigit() and 1 <= int(a) <= 100]
    everyone = [a for a in args if a.lower() == "all"]
    if len(args) != len(rules) + len(counts) + len(everyone) or max(
            len(rules), len(counts), len(everyone)) > 1:
        return Invalid(_("Usage: {usage}", usage=usage_words(
            f"/top [{_choices(RULE_SETS, rules_name)}] [HOW-MANY, 1-100] [all]")))
    msg: Message = {"type": "leaderboard", "rules": rules[0] if rules else RULE_SETS[0]}
    if counts:
        msg["limit"] = int(counts[0])
    if everyone:  # provisional ratings too, after the settled ones
        msg["provisional"] = True
    return Request(msg)


def _named(kind: str, usage: str, minutes: bool = False,
           reason: bool = False) -> Callable[[list[str], Context], Parsed]:
    """`/kind NAME [MINUTES] [REASON...]`, as far as the request takes them."""
    def build(args: list[str], ctx: Context) -> Parsed:
        if not args:
            return Invalid(_("Usage: {usage}", usage=usage_words(usage)))
        target, rest = args[0], args[1:]
        msg: Message = {"type": kind}
        if kind in ("ban", "unban") and any(c in target for c in ".:/") \
                and not target.isalpha():
            msg["network"] = target  # an address or range; names hold none of these
        else:
            msg["name"] = target
        if minutes and rest and rest[0].isdigit():
            msg["minutes"] = int(rest.pop(0))
        if reason and rest:
            msg["reason"] = " ".join(rest)
        elif rest:
            return Invalid(_("Usage: {usage}", usage=usage_words(usage)))
        return Request(msg)

    return build


def _close_table(args: list[str], ctx: Context) -> Parsed:
    if not args or not args[0].isdigit():
        return Invalid(_("Usage: {usage}",
                         usage=usage_words("/closetable TABLE-ID [REASON]")))
    msg: Message = {"type": "close_table", "table": int(args[0])}
    if args[1:]:
        msg["reason"] = " ".join(args[1:])
    return Request(msg)


def _announce(args: list[str], ctx: Context) -> Parsed:
    if not args:
        return Invalid(_("Usage: {usage}", usage=usage_words("/announce TEXT")))
    return Request({"type": "announce", "text": " ".join(args)})


def _log(args: list[str], ctx: Context) -> Parsed:
    if len(args) > 1 or (args and not (args[0].isdigit() and int(args[0]) >= 1)):
        return Invalid(_("Usage: {usage} (1 is the newest page, 2 the one before...)",
                         usage=usage_words("/log [PAGE]")))
    return Local("log", args[0] if args else "1")


def _lang(args: list[str], ctx: Context) -> Parsed:
    """`/lang CODE`: the language of the screen, from now on (`/lang` alone lists them)."""
    if len(args) > 1 or (args and args[0].lower() not in CHOICES):
        return Invalid(_("Usage: {usage}", usage=usage_words(f"/lang [{'|'.join(CHOICES)}]")))
    return Local("lang", args[0].lower() if args else "")


COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec("moves", "/moves", "/moves", N_("your legal moves now"), _local("moves")),
    CommandSpec("log", "/log [PAGE]", "/log", N_("who did what this deal"), _log),
    CommandSpec("rules", "/rules", "/rules", N_("this table's rule set"), _local("rules")),
    CommandSpec("say", "/say TEXT", "/say good luck", N_("chat (plain text works when it is "
                "not your turn)"), _say),
    CommandSpec("sort", "/sort [rank|suit]", "/sort rank",
                N_("order your hand by rank or by suit"), _choice("sort", cards.HAND_ORDERS)),
    CommandSpec("bell", "/bell [on|off]", "/bell",
                N_("ring the terminal bell when it is your turn"), _choice("bell", ("on", "off"))),
    CommandSpec("leave", "/leave", "/leave", N_("leave the table for the lobby"),
                _simple({"type": "leave_table"})),
    CommandSpec("help", "/help [TOPIC]", "/help moves", N_("help: {topics}, or a command"),
                _local("help")),
    CommandSpec("lang", "/lang [CODE]", "/lang tr", N_("show the screen in another language "
                "({codes})"), _lang),
    CommandSpec("quit", "/quit", "/quit", N_("leave and exit (Ctrl-D and Ctrl-C too)"),
                _local("quit")),
    CommandSpec("sit", "/sit SEAT", "/sit 2", N_("take an open seat"), _sit, "table"),
    CommandSpec("stand", "/stand", "/stand", N_("give up your seat, stay at the table"),
                _simple({"type": "stand"}), "table"),
    CommandSpec("bot", "/bot SEAT [LEVEL]", "/bot 3 hard", N_("host: put a bot on an open seat "
                "({levels})"), _bot(True), "table"),
    CommandSpec("unbot", "/unbot SEAT", "/unbot 3", N_("host: remove a bot"), _bot(False),
                "table"),
    CommandSpec("ready", "/ready", "/ready", N_("mark yourself ready"),
                _simple({"type": "ready", "ready": True}), "table"),
    CommandSpec("unready", "/unready", "/unready", N_("take your ready back"),
                _simple({"type": "ready", "ready": False}), "table"),
    CommandSpec("start", "/start", "/start", N_("host: start the match once all are ready"),
                _simple({"type": "start"}), "table"),
    CommandSpec("rematch", "/rematch [no]", "/rematch", N_("agree (or not) to play again"),
                _rematch, "table"),
    CommandSpec("invite", "/invite NAME", "/invite Ayşe", N_("invite a player to your table"),
                _invite, "invite"),
    CommandSpec("resync", "/resync", "/resync", N_("redraw the table from a fresh snapshot"),
                _simple({"type": "resync"}), "table"),
    CommandSpec("lobby", "/lobby [PAGE|next|prev]", "/lobby 2",
                N_("list the tables again, or another page of them"), _lobby, "lobby"),
    CommandSpec("play", "/play [RULES] [SEATS] [options]", "/play classic 4",
                N_("sit at a waiting table, or open a quick one"), _play_now, "lobby"),
    CommandSpec("accept", "/accept [ID]", "/accept 3", N_("accept the invitation to a table"),
                _answer(True), "invite"),
    CommandSpec("decline", "/decline [ID]", "/decline 3", N_("decline the invitation"),
                _answer(False), "invite"),
    CommandSpec("create", "/create RULES SEATS [--private] [options]",
                "/create classic 4 --private", N_("open a table (you host it)"), _create, "lobby"),
    CommandSpec("join", "/join TABLE|CODE", "/join 3", N_("join a table by id or invite code"),
                _join(False), "lobby"),
    CommandSpec("watch", "/watch TABLE|CODE", "/watch 3", N_("spectate a table"), _join(True),
                "lobby"),
    CommandSpec("history", "/history [mine|recent|NAME] [PAGE]", "/history recent",
                N_("finished matches: yours, recent, a player's"), _history,
                "replay"),
    CommandSpec("replay", "/replay ID", "/replay 12", N_("watch a finished match, every hand "
                "face up"), _replay, "replay"),
    CommandSpec("score", "/score", "/score", N_("the score sheet, at a table or in a replay"),
                _local("score"), "replay"),
    CommandSpec("export", "/export ID FILE", "/export 12 match.json",
                N_("save a finished match to FILE"), _export,
                "replay"),
    CommandSpec("register", "/register", "/register", N_("register the name you play under "
                "(asks for a password)"), _secret("register", "/register"), "account"),
    CommandSpec("login", "/login NAME", "/login Ayşe", N_("log in to your account (asks for "
                "the password; remembered for this server)"), _secret("login", "/login NAME",
                                                                      1), "account"),
    CommandSpec("logout", "/logout [everywhere]", "/logout", N_("log out (everywhere: on "
                "every device)"), _logout, "account"),
    CommandSpec("passwd", "/passwd", "/passwd", N_("change your password (asks for both)"),
                _secret("passwd", "/passwd"), "account"),
    CommandSpec("top", "/top [RULES] [N] [all]", "/top cardiva", N_(
                "the rating ladder of a rule set (all: provisional ratings too)"),
                _top, "account"),
    CommandSpec("profile", "/profile NAME", "/profile Ayşe", N_("a player's ratings and "
                "latest matches"), _named("profile", "/profile NAME"), "account"),
    CommandSpec("kick", "/kick NAME [REASON]", "/kick Troll spamming", N_("operators: "
                "disconnect a player"), _named("kick", "/kick NAME [REASON]", reason=True),
                "operator"),
    CommandSpec("mute", "/mute NAME [MINUTES] [REASON]", "/mute Troll 30", N_("operators: "
                "stop a player chatting"), _named("mute", "/mute NAME [MINUTES] [REASON]",
                                                 minutes=True, reason=True), "operator"),
    CommandSpec("unmute", "/unmute NAME", "/unmute Troll", N_("operators: lift a mute"),
                _named("unmute", "/unmute NAME"), "operator"),
    CommandSpec("ban", "/ban NAME|RANGE [MINUTES] [REASON]", "/ban 203.0.113.0/24 60",
                N_("operators: ban an account or an address range"),
                _named("ban", "/ban NAME|RANGE [MINUTES] [REASON]", minutes=True,
                       reason=True), "operator"),
    CommandSpec("unban", "/unban NAME|RANGE", "/unban Troll", N_("operators: lift a ban"),
                _named("unban", "/unban NAME|RANGE"), "operator"),
    CommandSpec("closetable", "/closetable TABLE [REASON]", "/closetable 7",
                N_("operators: close a table"), _close_table, "operator"),
    CommandSpec("announce", "/announce TEXT", "/announce restart at ten", N_("operators: "
                "tell every player"), _announce, "operator"),
)

_BY_NAME = {c.name: c for c in COMMANDS}
_ALIASES = {"q": "quit", "exit": "quit", "h": "help", "?": "help", "spectate": "watch",
            "part": "leave", "chat": "say", "add": "bot", "matches": "history",
            "scores": "score", "sheet": "score", "playnow": "play", "quick": "play"}


REPLAY_COMMANDS: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (("n", "next"), "Right, Enter", N_("the next move (at a deal's end, the next deal)")),
    (("b", "back"), "Left", N_("the move before")),
    (("nd", "]"), "PageDown", N_("the next deal")),
    (("pd", "["), "PageUp", N_("this deal's start, then the deal before")),
    (("end",), "End", N_("this deal's end and its result")),
    (("d N", "deal N"), "", N_("deal N from its start")),
    (("q", "quit"), "", N_("leave the replay")),
)
"""The replay's commands: typed words, the key that does the same, what it does."""


def parse_command(text: str, ctx: Context) -> Parsed:
    """A slash command (`text` starts with `/`)."""
    body = text.strip()[1:]
    name, __, rest = body.partition(" ")
    name = _ALIASES.get(name.lower(), name.lower())
    spec = _BY_NAME.get(name)
    if spec is None:
        return Invalid(_("Unknown command /{name}; /help lists them.", name=name))
    if name == "say":
        if not rest.strip():
            return Invalid(_("Usage: {usage}", usage=usage_words("/say TEXT")))
        return Chat(rest.strip())
    try:
        args = shlex.split(rest)
    except ValueError as exc:
        return Invalid(_("Cannot read that: {error}.", error=str(exc)))
    return spec.build(args, ctx)


MOVE_HELP = N_(
    "Type a card (7h, 10s, qd), its number in your hand, js h to play a jack naming hearts,"
    " d to draw, p to pass; /say to chat."
)


def parse_input(text: str, ctx: Context) -> Parsed | None:
    """Anything typed at the prompt; None for an empty line."""
    if not text.strip():
        return None
    if text.lstrip().startswith("/"):
        return parse_command(text, ctx)
    move = parse_move(text, ctx) if ctx.at_table else None
    if ctx.my_turn:
        return move if move is not None else Invalid(_("Not a move. {help}", help=_(MOVE_HELP)))
    if move is not None:
        # It reads as a move (or a mistyped one): saying "7h" to the table is unlikely.
        return Invalid(_("It is not your turn (use /say to chat)."))
    return Chat(text.strip())


def parse_suit_answer(text: str) -> str | None:
    """The answer to "which suit?" after a bare jack."""
    return cards.parse_suit(text)
