"""The deal state machine: dealing, turns, special cards, the end of a deal, muamele.

A ``Deal`` is mutable and flat (``__slots__``, hands as lists of card ints, moves as
ints) because the bots search by copying and replaying it many thousand times a second.
Every refusal is checked before anything changes, so a refused move leaves no trace.
"""

from __future__ import annotations

import random
from functools import lru_cache
from typing import Any, Final

from .cards import ACE, CARD_STR, CLUBS, EIGHT, JACK, SEVEN, SUITS, TEN, deck
from .errors import DealOver, IllegalCard, IllegalMove, NotYourTurn, RuleError
from .moves import DRAW, JACK_BASE, MOVE_CARD, PASS, PICK, Move
from .options import Options
from .records import DealRecord
from .result import REASON_OUT, REASON_STOCK_OUT, DealResult, out_multiplier, score
from .rulesets import RuleSet
from .tables import (
    CTX_NAMED,
    CTX_OPENING,
    CTX_PENALTY,
    Table,
    play_table,
)

Event = dict[str, Any]

HAND_SIZE: Final = 7  # C1, K2

_PACKS = {decks: tuple(deck(decks)) for decks in (1, 2)}
_SORTED_PACKS = {decks: sorted(pack) for decks, pack in _PACKS.items()}

PLAY: Final = 0
MUAMELE: Final = 1
OVER: Final = 2
PHASE_NAMES = ("play", "muamele", "over")

NO_FOLLOW: Final = 0
FOLLOW_ACE: Final = 1
FOLLOW_PISTI: Final = 2
FOLLOW_NAMES = (None, "ace", "pisti")

_NOT_ORDINARY: Final = frozenset({JACK, SEVEN, TEN, ACE})  # K11: pişti needs an ordinary card
_ACTION_RANKS: Final = frozenset({SEVEN, EIGHT, TEN, ACE})  # C9-C12, K7, K9, K10
_DRAW_ONLY: Final = (DRAW,)
_DRAW_OR_PASS: Final = (DRAW, PASS)
_PASS_ONLY: Final = (PASS,)


DEAL_FIELDS: Final = (
    "bounce",
    "dealer",
    "deck",
    "direction",
    "drew",
    "first_left",
    "follow",
    "hands",
    "moves",
    "multiplier",
    "n",
    "named",
    "options",
    "out_seat",
    "over",
    "penalty",
    "phase",
    "picks",
    "pile",
    "queue",
    "quiet",
    "reshuffle",
    "reshuffles",
    "result",
    "rs",
    "seed",
    "stock",
    "table",
    "to_act",
    "turn",
    "twins",
)
"""The names of every attribute of a deal: its ``__slots__``, kept apart because a build
compiled with mypyc does not keep ``__slots__`` (a native class lays its attributes out
itself)."""


class Deal:
    """One deal's full state. Read it through ``view``; change it only through ``apply``."""

    __slots__ = DEAL_FIELDS

    options: Options
    rs: RuleSet
    n: int
    table: Table
    bounce: bool
    reshuffle: bool
    twins: bool
    dealer: int
    hands: list[list[int]]
    stock: list[int]
    """Face down; the next card drawn is the last one."""
    pile: list[int]
    """The discards, bottom to top."""
    turn: int
    """The seat to decide now, -1 once the deal is over."""
    to_act: int | None
    """``turn``, or None once the deal is over: a plain attribute set with every change
    of turn, not a property, because every search step reads it."""
    over: bool
    """The deal has ended (``phase`` is over); a plain attribute for the same reason."""
    direction: int
    named: int
    """The suit a jack on top named (C6, K8), -1 if none."""
    penalty: int
    """Cards the seat to act must draw unless it answers with a 7 (C11, K7)."""
    first_left: int
    """Opening turns still to play (C2: one, K3: one lap)."""
    follow: int
    """A follow-up card is owed after an ace (C12, K10) or a pişti (K11)."""
    drew: bool
    """The seat to act has drawn this turn. A draw appends to the hand, so after a
    follow-up draw the hand's last card is the one drawn: the only card it may then play
    (K10, K11)."""
    phase: int
    result: DealResult | None
    out_seat: int
    multiplier: int
    picks: int
    """Muamele picks left for the picking seat (K14)."""
    queue: list[tuple[int, int]]
    """Seats still to pick in the muamele, with their picks (K14)."""
    seed: int
    reshuffles: int
    deck: tuple[int, ...]
    moves: list[Move]
    quiet: bool
    """``apply`` returns no events (an empty list): for a deal nobody watches, such as a
    search's simulations (``redeal`` makes its copies quiet); the one attribute one may
    set on a deal of one's own. The rules are played the same; only the wire events,
    above all the shown hands at the end, are not built."""

    @property
    def top(self) -> int | None:
        return self.pile[-1] if self.pile else None

    @property
    def record(self) -> DealRecord:
        return DealRecord(self.options, self.dealer, self.deck, self.seed, tuple(self.moves))

    def copy(self) -> Deal:
        # Spelled out rather than looped over __slots__: bots copy on every simulation.
        new = Deal.__new__(Deal)
        new.options = self.options
        new.rs = self.rs
        new.n = self.n
        new.table = self.table
        new.bounce = self.bounce
        new.reshuffle = self.reshuffle
        new.twins = self.twins
        new.dealer = self.dealer
        new.hands = [h[:] for h in self.hands]
        new.stock = self.stock[:]
        new.pile = self.pile[:]
        new.turn = self.turn
        new.to_act = self.to_act
        new.over = self.over
        new.direction = self.direction
        new.named = self.named
        new.penalty = self.penalty
        new.first_left = self.first_left
        new.follow = self.follow
        new.drew = self.drew
        new.phase = self.phase
        new.result = self.result
        new.out_seat = self.out_seat
        new.multiplier = self.multiplier
        new.picks = self.picks
        new.queue = self.queue[:]
        new.seed = self.seed
        new.reshuffles = self.reshuffles
        new.deck = self.deck
        new.moves = self.moves[:]
        new.quiet = self.quiet
        return new

    def __repr__(self) -> str:
        return (
            f"<Deal {self.options.rules} {self.n}p phase={PHASE_NAMES[self.phase]} "
            f"turn={self.turn} top={CARD_STR[self.pile[-1]] if self.pile else None} "
            f"stock={len(self.stock)} hands={[len(h) for h in self.hands]}>"
        )


_Fixed = tuple[RuleSet, int, Table, bool, bool, bool]


@lru_cache(maxsize=256)
def _fixed(options: Options) -> _Fixed:
    """What a deal takes from its options, worked out once per options: every deal
    starts here, and with short deals (classic, 4 players) dealing weighs on speed."""
    rs = options.ruleset
    return (
        rs,
        options.players,
        play_table(rs),
        options.ten == "bounce",
        options.empty_stock == "reshuffle",
        options.decks > 1,
    )


def blank_deal(options: Options, dealer: int, seed: int, deck_order: tuple[int, ...]) -> Deal:
    if type(dealer) is not int or not 0 <= dealer < options.players:
        raise ValueError(f"dealer must be a seat 0-{options.players - 1}, not {dealer!r}")
    d = Deal.__new__(Deal)
    d.options = options
    d.rs, d.n, d.table, d.bounce, d.reshuffle, d.twins = _fixed(options)
    rs = d.rs
    d.dealer = dealer
    d.hands = [[] for _ in range(d.n)]
    d.stock = []
    d.pile = []
    d.turn = d.to_act = (dealer + 1) % d.n  # C2, K3: the dealer's left opens
    d.over = False
    d.direction = 1  # C3: clockwise, to the left
    d.named = -1
    d.penalty = 0
    d.first_left = d.n if rs.opening_lap else 1
    d.follow = NO_FOLLOW
    d.drew = False
    d.phase = PLAY
    d.result = None
    d.out_seat = -1
    d.multiplier = 1
    d.picks = 0
    d.queue = []
    d.seed = seed
    d.reshuffles = 0
    d.deck = deck_order
    d.moves = []
    d.quiet = False
    return d


def deal_from_deck(options: Options, dealer: int, deck_order: list[int], seed: int = 0) -> Deal:
    """Deal 7 each, one at a time from the dealer's left (C1, K2); the rest is the stock."""
    if sorted(deck_order) != _SORTED_PACKS.get(options.decks):
        raise ValueError("deck_order is not a full pack for these options")
    return _deal(options, dealer, list(deck_order), seed)


def new_deal(options: Options, dealer: int, rng: random.Random) -> Deal:
    """Shuffle with ``rng`` (production: ``secrets.SystemRandom()``) and deal."""
    # Sorting by independent random keys is a uniform shuffle (a tie among 104 floats
    # has odds near 1e-12) at half the cost of rng.shuffle's pure-Python loop.
    rand = rng.random
    order = sorted(_PACKS[options.decks], key=lambda _: rand())
    return _deal(options, dealer, order, rng.getrandbits(64))


def _deal(options: Options, dealer: int, order: list[int], seed: int) -> Deal:
    d = blank_deal(options, dealer, seed, tuple(order))
    n = d.n
    dealt = HAND_SIZE * n
    # Card i goes to seat (dealer + 1 + i) % n, so seat s holds every n-th card from its
    # offset: the deal one at a time, as slices.
    d.hands = [order[(s - dealer - 1) % n : dealt : n] for s in range(n)]
    d.stock = order[dealt:][::-1]
    return d


def replay(record: DealRecord) -> Deal:
    """Rebuild a deal from its record; every state along the way is reproduced exactly."""
    d = deal_from_deck(record.options, record.dealer, list(record.deck), record.seed)
    for move in record.moves:
        apply(d, move)
    return d


# --- legal moves --------------------------------------------------------------------


def _context(d: Deal) -> int:
    if d.penalty:
        return CTX_PENALTY
    if d.first_left:
        return CTX_OPENING
    if d.named >= 0:
        return CTX_NAMED + d.named
    return d.pile[-1]


def _plays(d: Deal, hand: list[int], ctx: int) -> list[Move]:
    """The plays ``hand`` allows in ``ctx``, in the order of the hand (twins give one move)."""
    moves = _collect(d.table[ctx], hand, d.twins)
    if moves and len(hand) == 1 and d.rs.ace_not_last and hand[0] % 13 == ACE:
        return []  # K10: an ace may not be the last card
    return moves


def _collect(row: tuple[tuple[Move, ...], ...], hand: list[int], twins: bool) -> list[Move]:
    """The moves of the cards of ``hand`` in a play-table row, in the order of the hand;
    a jack has one move per suit named, and a twin adds none (K1).

    One tuple lookup a card: quicker than a set intersection when interpreted, and a few
    machine operations a card when compiled."""
    moves: list[Move] = []
    for c in hand:
        plays = row[c]
        if plays:
            if twins and plays[0] in moves:
                continue
            if len(plays) == 1:
                moves.append(c)
            else:
                moves += plays
    return moves


def _mandatory_follow(d: Deal) -> bool:
    return d.follow == FOLLOW_PISTI or d.rs.ace_follow_mandatory


def legal_moves(d: Deal, seat: int) -> list[Move]:
    """Every legal move for ``seat``; empty unless it is that seat's decision."""
    if seat != d.turn or d.phase:
        if seat != d.turn or d.phase == OVER:
            return []
        return list(range(PICK, PICK + len(d.stock)))  # K14: any position of the spread
    if d.penalty or d.first_left or d.follow:
        return _special_legal_moves(d, d.hands[seat])
    # The common turn, its context worked out here: the bots' search runs through here on
    # every step.
    hand = d.hands[seat]
    named = d.named
    ctx = d.pile[-1] if named < 0 else CTX_NAMED + named
    if d.drew:
        # C7: draw again or pass; K5: one draw only, then pass
        tail = _PASS_ONLY if d.rs.draw_limit else _DRAW_OR_PASS
    else:
        tail = _DRAW_ONLY  # C7, K5: draw instead of playing
    moves = _plays(d, hand, ctx)
    moves += tail
    return moves


def _special_legal_moves(d: Deal, hand: list[int]) -> list[Move]:
    """Legal moves under a pending penalty, in the opening, or owing a follow-up card."""
    if d.drew and d.follow:
        # K10, K11: after the follow-up draw only the card drawn (the hand's last) may be
        # played, or pass; a card held before stays barred even where the draw lifted the
        # last-card bar on an ace (K10). A follow-up is owed on an ace or a pişti card, so
        # no jack names a suit and the top is the context.
        return [*d.table[d.pile[-1]][hand[-1]], PASS]
    moves = _plays(d, hand, _context(d))
    if d.penalty:
        moves.append(DRAW)  # C11, K7: answer with a 7 or take the penalty
    elif d.first_left:
        if not moves:
            moves.append(DRAW)  # C2, K3: draw until a club comes; no pass
    elif _mandatory_follow(d):
        if not moves:
            moves.append(DRAW)  # K10, K11: no card to follow with: draw one
    else:
        moves.append(PASS)  # C12: end the turn without drawing
    return moves


# --- applying moves -----------------------------------------------------------------


def apply_for(d: Deal, seat: object, move: object) -> list[Event]:
    """``apply`` after checking that ``seat`` is the one to act."""
    if d.phase == OVER:
        raise DealOver("the deal is over")
    if seat != d.turn:
        raise NotYourTurn(f"it is seat {d.turn}'s turn, not seat {seat}'s", d.rs.cite("turn"))
    return apply(d, move)


def apply(d: Deal, move: object) -> list[Event]:
    """Apply ``move`` for the seat to act; return the events, in wire form.

    Anything but a legal move, of any type, raises a ``RuleError`` and changes nothing
    (typed ``object`` so that a compiled build checks it here, not at the call)."""
    phase = d.phase
    if phase == OVER:
        raise DealOver("the deal is over")
    if type(move) is not int:
        raise _no_such_pick(d) if phase else IllegalMove(f"not a move: {move!r}")
    if phase:
        events = _pick(d, move)
    elif 0 <= move < DRAW:
        events = _play(d, d.turn, move)
    elif move == DRAW:
        events = _draw(d, d.turn)
    elif move == PASS:
        events = _pass(d, d.turn)
    elif move >= PICK:
        raise IllegalMove("there is nothing to pick: no muamele is under way", d.rs.cite("muamele"))
    else:
        raise IllegalMove(f"not a move: {move!r}")
    d.moves.append(move)
    if d.quiet:
        return []  # the rarer events were built all the same, and are dropped here
    return events


def _end_turn(d: Deal, nxt: int) -> None:
    d.turn = d.to_act = nxt
    d.drew = False
    d.follow = NO_FOLLOW
    if d.first_left:
        d.first_left -= 1


def _play(d: Deal, seat: int, move: Move) -> list[Event]:
    hand = d.hands[seat]
    card = MOVE_CARD[move]
    pile = d.pile
    first = d.first_left
    if d.penalty:
        ctx = CTX_PENALTY
    elif first:
        ctx = CTX_OPENING
    elif d.named >= 0:
        ctx = CTX_NAMED + d.named
    else:
        ctx = pile[-1]
    if move not in d.table[ctx][card]:
        if card not in hand:
            raise _not_in_hand(card)
        raise _why_illegal(d, ctx, move)
    rank = card % 13
    if rank == ACE and len(hand) == 1 and d.rs.ace_not_last:
        if card not in hand:
            raise _not_in_hand(card)
        raise IllegalCard("you may not go out on an ace", d.rs.cite("ace"))
    if d.follow and d.drew and card != hand[-1]:
        raise _not_the_drawn_card(d, card, hand)  # K10, K11
    try:
        hand.remove(card)
    except ValueError:
        raise _not_in_hand(card) from None
    pile.append(card)
    events: list[Event] = (
        [] if d.quiet else [{"event": "play", "seat": seat, "card": CARD_STR[card]}]
    )
    if move >= JACK_BASE:
        d.named = named = (move - JACK_BASE) % 4  # C5, K8
        if events:
            events[0]["suit"] = SUITS[named]
    else:
        d.named = -1  # C2: an opening jack of clubs names nothing (the table: its suit)
    if not hand:
        _go_out(d, seat, card, events)
    elif not first and (rank in _ACTION_RANKS or card == ctx):
        _card_effect(d, seat, card, ctx, events)  # ctx is the card under it, if not a jack
    else:
        # An ordinary card, or any card in the opening (C2, K3: no effect): the turn passes.
        d.turn = d.to_act = (seat + d.direction) % d.n
        d.drew = False
        d.follow = NO_FOLLOW
        if first:
            d.first_left = first - 1
    return events


def _not_in_hand(card: int) -> IllegalMove:
    return IllegalMove(f"{CARD_STR[card]} is not in your hand", code="card_not_in_hand")


def _not_the_drawn_card(d: Deal, card: int, hand: list[int]) -> RuleError:
    """K10, K11: after the follow-up draw only the card drawn (``hand[-1]``) may be played."""
    if card not in hand:
        return _not_in_hand(card)
    topic = "ace" if d.follow == FOLLOW_ACE else "pisti"
    return IllegalCard(
        f"after the follow-up draw only the card drawn, {CARD_STR[hand[-1]]}, may be played",
        d.rs.cite(topic),
    )


def _card_effect(d: Deal, seat: int, card: int, ctx: int, events: list[Event]) -> None:
    """What a played card does after the opening, when it may do anything: 7, 8, 10, ace,
    or a card on its twin (pişti; ``ctx`` is the card it was played on, unless that was a
    jack or a 7 to answer)."""
    rs = d.rs
    rank = card % 13
    n = d.n
    step = d.direction
    if rank == SEVEN:
        d.penalty += 3  # C11, K7: stacking sevens add 3 each
        nxt = (seat + step) % n
        events.append({"event": "penalty", "seat": nxt, "count": d.penalty})
        _end_turn(d, nxt)
    elif rank == EIGHT and rs.eight_skips:
        events.append({"event": "skip", "seat": (seat + step) % n})  # C9, C12a
        _end_turn(d, (seat + 2 * step) % n)
    elif rank == TEN:
        if d.bounce:
            nxt = (seat - step) % n  # K9: back one seat; the direction stays
            events.append({"event": "bounce", "seat": nxt})
        else:
            d.direction = step = -step  # C10
            nxt = (seat + step) % n
            events.append({"event": "reverse", "direction": step})
        _end_turn(d, nxt)
    elif rank == ACE:
        d.follow = FOLLOW_ACE  # C12, K10
        d.drew = False
        if rs.ace_others_draw:  # K10: every other player draws 1
            for k in range(1, n):
                if not _draw_cards(d, (seat + k * step) % n, 1, "ace", events):
                    break
    elif card == ctx and rs.pisti and d.twins and rank not in _NOT_ORDINARY:
        d.follow = FOLLOW_PISTI  # K11
        d.drew = False
        events.append({"event": "pisti", "seat": seat})
    else:
        _end_turn(d, (seat + step) % n)


def _why_illegal(d: Deal, ctx: int, move: Move) -> IllegalCard:
    """Name the rule a refused card breaks (slow path, refusals only)."""
    rs = d.rs
    card = MOVE_CARD[move]
    name = CARD_STR[card]
    if ctx == CTX_PENALTY:
        msg = f"only a 7 answers a 7: play a 7 or draw {d.penalty}"
        return IllegalCard(msg, rs.cite("penalty"))
    if ctx == CTX_OPENING:
        if card // 13 != CLUBS:
            return IllegalCard("the opening play must be a club", rs.cite("opening"))
        if card % 13 in rs.opening_banned:
            return IllegalCard(f"{name} may not be played in the first round", rs.cite("opening"))
        return IllegalCard("an opening jack has no effect: it names no suit", rs.cite("opening"))
    if card % 13 == JACK and move < JACK_BASE:
        return IllegalCard("a jack must name a suit", rs.cite("jack"))
    if ctx < CTX_NAMED and ctx % 13 == JACK:  # C2: the opening jack, which named nothing
        if card % 13 == JACK:
            return IllegalCard("a jack may not be played on a jack", rs.cite("jack_top"))
        return IllegalCard(f"the opening jack names no suit: follow its own, "
                           f"{SUITS[ctx // 13]}", rs.cite("jack_top"))
    if ctx >= CTX_NAMED:
        suit = SUITS[ctx - CTX_NAMED]
        if card % 13 == JACK:
            return IllegalCard("a jack may not be played on a jack", rs.cite("jack_top"))
        return IllegalCard(f"the jack on top asks for {suit}", rs.cite("jack_top"))
    return IllegalCard(
        f"{name} matches neither the suit nor the rank of {CARD_STR[ctx]}", rs.cite("match")
    )


def _refill(d: Deal, events: list[Event]) -> None:
    """Shuffle the discards under the top card into a new stock (C15, K6 option; K14)."""
    pile = d.pile
    cards = pile[:-1]
    del pile[:-1]
    random.Random(d.seed * 131 + d.reshuffles).shuffle(cards)
    d.reshuffles += 1
    d.stock = cards
    events.append({"event": "reshuffle", "count": len(cards)})


def _draw_cards(d: Deal, seat: int, count: int, reason: str, events: list[Event]) -> bool:
    """Move ``count`` cards from the stock to ``seat``; False if the stock ran out (deal over)."""
    stock = d.stock
    hand = d.hands[seat]
    if count == 1 and stock:  # by far the most common case
        c = stock.pop()
        hand.append(c)
        if d.quiet:
            return True
        events.append(
            {"event": "draw", "seat": seat, "count": 1, "reason": reason, "cards": [CARD_STR[c]]}
        )
        return True
    if count <= len(stock):
        got = stock[len(stock) - count :]
        del stock[len(stock) - count :]
        got.reverse()
        hand.extend(got)
        if d.quiet:
            return True
        events.append(
            {
                "event": "draw",
                "seat": seat,
                "count": count,
                "reason": reason,
                "cards": [CARD_STR[c] for c in got],
            }
        )
        return True
    drawn: list[int] = []
    ok = True
    for _ in range(count):
        if not d.stock:
            if drawn:
                _draw_event(seat, drawn, reason, events)
                drawn = []
            if d.reshuffle and len(d.pile) > 1:
                _refill(d, events)
            else:
                ok = False
                break
        c = d.stock.pop()
        hand.append(c)
        drawn.append(c)
    if drawn:
        _draw_event(seat, drawn, reason, events)
    if not ok:
        events.append({"event": "stock_out", "seat": seat})  # C15, K6
        _finish(d, REASON_STOCK_OUT, None, 1, events)
    return ok


def _draw_event(seat: int, cards: list[int], reason: str, events: list[Event]) -> None:
    events.append(
        {
            "event": "draw",
            "seat": seat,
            "count": len(cards),
            "reason": reason,
            "cards": [CARD_STR[c] for c in cards],
        }
    )


def _draw(d: Deal, seat: int) -> list[Event]:
    stock = d.stock
    if d.penalty or d.first_left or d.follow or not stock:
        return _special_draw(d, seat)
    if d.drew and d.rs.draw_limit:
        raise IllegalMove("only one draw per turn: play or pass", d.rs.cite("draw"))
    # The common draw (C7, K5), spelled out.
    c = stock.pop()
    d.hands[seat].append(c)
    d.drew = True
    if d.quiet:
        return []
    return [{"event": "draw", "seat": seat, "count": 1, "reason": "draw", "cards": [CARD_STR[c]]}]


def _special_draw(d: Deal, seat: int) -> list[Event]:
    """A draw taking a penalty, in the opening, owing a follow-up, or from an empty stock."""
    rs = d.rs
    events: list[Event] = []
    penalty = d.penalty
    if penalty:
        d.penalty = 0
        if _draw_cards(d, seat, penalty, "penalty", events):
            if rs.penalty_ends_turn:
                _end_turn(d, (seat + d.direction) % d.n)  # C11: the turn ends
            # K7: otherwise the taker plays their own turn on the 7 as an ordinary card
        return events
    if d.first_left:
        if _plays(d, d.hands[seat], _context(d)):
            raise IllegalMove("you hold a club you may open with: play it", rs.cite("opening"))
    elif d.follow:
        topic = "ace" if d.follow == FOLLOW_ACE else "pisti"
        if not _mandatory_follow(d):
            raise IllegalMove("after an ace, play one more card or pass; no draw", rs.cite(topic))
        if d.drew:
            raise IllegalMove("you have drawn: play the card if you can, or pass", rs.cite(topic))
        if _plays(d, d.hands[seat], _context(d)):
            raise IllegalMove("you must play another card", rs.cite(topic))
    elif d.drew and rs.draw_limit:
        raise IllegalMove("only one draw per turn: play or pass", rs.cite("draw"))
    if _draw_cards(d, seat, 1, "draw", events):
        d.drew = True
    return events


def _pass(d: Deal, seat: int) -> list[Event]:
    if d.drew and not (d.penalty or d.first_left or d.follow):
        d.turn = d.to_act = (seat + d.direction) % d.n  # C7, K5: pass after a draw
        d.drew = False
        return [] if d.quiet else [{"event": "pass", "seat": seat}]
    rs = d.rs
    if d.penalty:
        raise IllegalMove(f"answer with a 7 or draw the penalty of {d.penalty}", rs.cite("penalty"))
    if d.first_left:
        raise IllegalMove(
            "the opening play cannot be passed: draw until a club comes", rs.cite("opening")
        )
    if d.follow:
        if _mandatory_follow(d) and not d.drew:
            topic = "ace" if d.follow == FOLLOW_ACE else "pisti"
            raise IllegalMove("you must play another card, or draw if you cannot", rs.cite(topic))
    elif not d.drew:
        raise IllegalMove("you may pass only after drawing", rs.cite("draw"))
    _end_turn(d, (seat + d.direction) % d.n)
    return [{"event": "pass", "seat": seat}]


# --- the end of a deal --------------------------------------------------------------


def _go_out(d: Deal, seat: int, card: int, events: list[Event]) -> None:
    d.out_seat = seat
    d.multiplier = out_multiplier(card)  # C14, K13
    if d.rs.muamele:
        _start_muamele(d, events)
    else:
        _finish(d, REASON_OUT, seat, d.multiplier, events)


def _finish(d: Deal, reason: str, winner: int | None, multiplier: int, events: list[Event]) -> None:
    d.result = score(d.rs, d.hands, reason, winner, multiplier)
    d.phase = OVER
    d.over = True
    d.turn = -1
    d.to_act = None
    d.penalty = 0
    d.follow = NO_FOLLOW
    d.drew = False  # a draw belongs to a turn, and no turn is left
    if not d.quiet:
        events.append({"event": "deal_end", "result": d.result.to_wire()})


def _start_muamele(d: Deal, events: list[Event]) -> None:
    """K14: each seat with sevens picks 3 face-down cards per seven, clockwise from the
    winner's left."""
    d.penalty = 0
    d.follow = NO_FOLLOW
    d.drew = False
    n = d.n
    for k in range(1, n):
        seat = (d.out_seat + k) % n
        sevens = sum(1 for c in d.hands[seat] if c % 13 == SEVEN)
        if sevens:
            d.queue.append((seat, 3 * sevens))
    _next_picker(d, events)


def _spread_ready(d: Deal, events: list[Event]) -> bool:
    if d.stock:
        return True
    if len(d.pile) > 1:
        _refill(d, events)  # K14: from the discards under the top card, shuffled
        return True
    return False


def _next_picker(d: Deal, events: list[Event]) -> None:
    while d.queue and _spread_ready(d, events):
        seat, picks = d.queue.pop(0)
        d.phase = MUAMELE
        d.turn = d.to_act = seat
        d.picks = picks
        events.append({"event": "muamele", "seat": seat, "picks": picks, "spread": len(d.stock)})
        return
    d.queue.clear()
    d.picks = 0
    _finish(d, REASON_OUT, d.out_seat, d.multiplier, events)


def _no_such_pick(d: Deal) -> IllegalMove:
    """Worded in the wire's terms: ``position`` counts from 0 (a client may show 1-n)."""
    n = len(d.stock)
    return IllegalMove(
        f"muamele: position counts from 0; pick 0-{n - 1}, one of the {n} face-down cards",
        d.rs.cite("muamele"),
        field="move.position",
    )


def _not_a_pick(d: Deal, move: Move) -> IllegalMove:
    """A play, draw or pass in muamele: the refusal says what to send instead, since a
    client that only shows the position range leaves its player guessing why."""
    kind = "play" if move < DRAW else "draw" if move == DRAW else "pass"
    n = len(d.stock)
    return IllegalMove(
        f"muamele: no {kind} until it ends; send a pick, kind \"pick\" with a position "
        f"0-{n - 1}, one of the {n} face-down cards",
        d.rs.cite("muamele"),
        field="move.kind",
    )


def _pick(d: Deal, move: Move) -> list[Event]:
    stock = d.stock
    if 0 <= move < PICK:
        raise _not_a_pick(d, move)
    if not PICK <= move < PICK + len(stock):
        raise _no_such_pick(d)
    seat = d.turn
    pos = move - PICK
    card = stock.pop(len(stock) - 1 - pos)
    d.hands[seat].append(card)
    d.picks -= 1
    if card % 13 == SEVEN:
        d.picks += 3  # K14: a picked 7 gives 3 more picks
    events: list[Event] = []
    if not d.quiet:
        events.append(
            {
                "event": "pick",
                "seat": seat,
                "position": pos,
                "card": CARD_STR[card],
                "picks": d.picks,
            }
        )
    if not d.picks or not _spread_ready(d, events):
        _next_picker(d, events)
    return events
