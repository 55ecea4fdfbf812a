"""Per-seat views (exactly what a seat may know) and their inverse for the bots.

``view`` is what the server sends and what a bot decides from; ``deal_from_view`` turns
a view plus a guess of the hidden cards (a determinization) back into a playable
``Deal``. Keeping both here keeps them in step: every public field a rebuilt deal needs
is in the view.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from .cards import CARD_STR, DECK_SIZE, SUITS, deck, parse_card, parse_suit
from .deal import (
    FOLLOW_NAMES,
    MUAMELE,
    OVER,
    PHASE_NAMES,
    Deal,
    blank_deal,
)
from .match import Match
from .options import Options
from .result import REASON_OUT, DealResult

_CANONICAL = {name: c for c, name in enumerate(CARD_STR)}


def _cards(texts: Sequence[str]) -> list[int]:
    """Parse card strings, fast for the canonical spelling views use (bots call this often)."""
    get = _CANONICAL.get
    out = [get(t, -1) for t in texts]
    if -1 in out:
        out = [parse_card(t) for t in texts]
    return out


@lru_cache(maxsize=64)
def _options(items: tuple[tuple[str, Any], ...]) -> Options:
    return Options.from_wire(dict(items))


@lru_cache(maxsize=2)
def _sorted_pack(decks: int) -> list[int]:
    return sorted(deck(decks))


def _checked_seat(seat: object, players: int) -> int | None:
    if seat is None:
        return None
    if type(seat) is not int or not 0 <= seat < players:
        raise ValueError(f"seat must be None (spectator) or 0-{players - 1}, not {seat!r}")
    return seat


def view(game: Deal | Match, who: object) -> dict[str, Any]:
    """What seat ``who`` may know now (``None`` = a spectator: ``hand`` is None).

    Cards are notation strings. ``phase`` is ``play``, ``muamele`` or ``over``; ``turn``
    the seat to decide (None when over); ``direction`` 1 (clockwise) or -1;
    ``first_round`` the opening turns still to play (C2: 1, K3: one per player; 0 after);
    ``must_follow`` None, ``"ace"`` (C12, K10) or ``"pisti"`` (K11); ``drew`` whether the
    seat to act has drawn this turn; ``drawn``, only in the own view of a seat that drew
    owing a follow-up, the card drawn: the only one it may play (K10, K11); ``penalty``
    the cards a 7 run makes it draw;
    ``muamele`` (in that phase) the picking ``seat``, its ``picks`` left, the ``spread``
    size, the ``queue`` of ``[seat, picks]`` still to come, the deal's ``winner`` and
    ``multiplier``; ``result`` once the deal is over, with every hand.
    """
    return views(game, (who,))[0]


def views(game: Deal | Match, seats: Sequence[object]) -> list[dict[str, Any]]:
    """``view(game, s)`` for each ``s`` of ``seats``, at little more than the cost of
    one: a server sends a view to every member after every step, and all but the hand
    is the same for each. The views share those parts (lists, the options), so they
    must be read, never changed in place.
    """
    if isinstance(game, Match):
        d = game.deal
        scores = list(game.totals)
        deal_no = game.deal_no
    else:
        d = game
        scores = [0] * d.n
        deal_no = 1
    checked = [_checked_seat(who, d.n) for who in seats]
    muamele = None
    if d.phase == MUAMELE:
        muamele = {
            "seat": d.turn,
            "picks": d.picks,
            "spread": len(d.stock),
            "queue": [[s, p] for s, p in d.queue],
            "winner": d.out_seat,
            "multiplier": d.multiplier,
        }
    rules = d.options.rules
    options = d.options.to_wire()
    phase = PHASE_NAMES[d.phase]
    hand_counts = [len(h) for h in d.hands]
    top = CARD_STR[d.pile[-1]] if d.pile else None
    named_suit = SUITS[d.named] if d.named >= 0 else None
    pile = [CARD_STR[c] for c in d.pile]
    must_follow = FOLLOW_NAMES[d.follow]
    result = d.result.to_wire() if d.result is not None else None
    # Every seat's view is this map with its own `seat` and `hand`: a copy of a built
    # map costs a fraction of building it again (the keys keep their order).
    shared: dict[str, Any] = {
        "rules": rules,
        "options": options,
        "players": d.n,
        "seat": None,
        "dealer": d.dealer,
        "phase": phase,
        "turn": d.to_act,
        "direction": d.direction,
        "hand": None,
        "hand_counts": hand_counts,
        "top": top,
        "named_suit": named_suit,
        "pile": pile,
        "stock": len(d.stock),
        "penalty": d.penalty,
        "first_round": d.first_left,
        "must_follow": must_follow,
        "drew": d.drew,
        "scores": scores,
        "deal_no": deal_no,
        "muamele": muamele,
        "result": result,
    }
    # a follow-up draw appends (K10, K11): only the seat to act sees what it drew
    drawn_by = d.turn if d.follow and d.drew else None
    hands = d.hands
    out: list[dict[str, Any]] = []
    for seat in checked:
        v = shared.copy()
        if seat is not None:
            v["seat"] = seat
            v["hand"] = [CARD_STR[c] for c in sorted(hands[seat])]
            if seat == drawn_by:
                v["drawn"] = CARD_STR[hands[seat][-1]]
        out.append(v)
    return out


def unseen_cards(v: Mapping[str, Any]) -> list[int]:
    """The cards ``v``'s seat cannot see (other hands and the stock), as a sorted multiset."""
    decks = int(v["options"]["decks"])
    counts = [decks] * DECK_SIZE
    for c in _cards(v["pile"]):
        counts[c] -= 1
    for c in _cards(v.get("hand") or ()):
        counts[c] -= 1
    if min(counts) < 0:
        raise ValueError("the view shows a card more often than the pack holds")
    return [c for c in range(DECK_SIZE) if counts[c] for _ in range(counts[c])]


def deal_from_view(
    v: Mapping[str, Any],
    hands: Sequence[Sequence[int] | None],
    stock: Sequence[int],
    seed: int = 0,
) -> Deal:
    """A full playable ``Deal`` from a view plus an assignment of the hidden cards.

    ``hands[s]`` is seat ``s``'s hand as card ints (``None`` for the viewing seat: its
    hand comes from the view); ``stock[0]`` is the next card to be drawn; ``seed`` drives
    later reshuffles. Raises ``ValueError`` if the cards do not add up to the pack.
    The rebuilt deal has no replayable record (its deck order is unknown). A hand given
    keeps its order: after a follow-up draw its last card is the one drawn (K10, K11); the
    viewing seat's card drawn is the view's ``drawn``.
    """
    try:
        return _rebuild(v, hands, stock, seed)
    except (KeyError, TypeError, IndexError, AttributeError) as exc:
        raise ValueError(f"malformed view: {exc!r}") from exc


def _drawn_last(hand: list[int], drawn: Any) -> None:
    """Put the card the follow-up draw brought (the view's ``drawn``) last in a hand read
    from a sorted view: the engine offers the hand's last card only (K10, K11)."""
    if not isinstance(drawn, str):
        raise ValueError("the view does not say which card the follow-up draw brought")
    card = _cards((drawn,))[0]
    if card not in hand:
        raise ValueError(f"the card drawn, {drawn}, is not in the hand")
    hand.remove(card)
    hand.append(card)


def _rebuild(
    v: Mapping[str, Any],
    hands: Sequence[Sequence[int] | None],
    stock: Sequence[int],
    seed: int,
) -> Deal:
    raw = v["options"]
    if not isinstance(raw, Mapping):
        raise ValueError("view options must be a map")
    try:
        options = _options(tuple(sorted(raw.items())))
    except TypeError:  # unhashable values: let the validator explain
        options = Options.from_wire(dict(raw))
    n = options.players
    if len(hands) != n:
        raise ValueError(f"hands must have {n} entries, one per seat")
    seat = v.get("seat")
    full: list[list[int]] = []
    for s in range(n):
        h = hands[s]
        if h is None:
            if s != seat or v.get("hand") is None:
                raise ValueError(f"seat {s}'s hand is hidden in this view: give it")
            h = _cards(v["hand"])
        if len(h) != v["hand_counts"][s]:
            raise ValueError(f"seat {s} holds {v['hand_counts'][s]} cards, not {len(h)}")
        full.append(list(h))
    if len(stock) != v["stock"]:
        raise ValueError(f"the stock holds {v['stock']} cards, not {len(stock)}")
    pile = _cards(v["pile"])
    everything = [c for h in full for c in h] + list(stock) + pile
    if sorted(everything) != _sorted_pack(options.decks):
        raise ValueError("hands, stock and pile do not make up the pack")
    d = blank_deal(options, int(v["dealer"]), seed, ())
    d.hands = full
    d.stock = list(reversed(stock))
    d.pile = pile
    d.phase = PHASE_NAMES.index(v["phase"])
    d.turn = -1 if v["turn"] is None else int(v["turn"])
    d.over = d.phase == OVER
    d.to_act = None if d.over else d.turn
    d.direction = int(v["direction"])
    d.named = -1 if v["named_suit"] is None else parse_suit(v["named_suit"])
    d.penalty = int(v["penalty"])
    d.first_left = int(v["first_round"])
    d.follow = FOLLOW_NAMES.index(v["must_follow"])
    d.drew = bool(v["drew"])
    if d.drew and d.follow and seat == d.turn and hands[d.turn] is None:
        _drawn_last(full[d.turn], v.get("drawn"))
    mu = v.get("muamele")
    if d.phase == MUAMELE and mu is not None:
        d.picks = int(mu["picks"])
        d.queue = [(int(s), int(p)) for s, p in mu["queue"]]
        d.out_seat = int(mu["winner"])
        d.multiplier = int(mu["multiplier"])
    if d.phase == OVER and v.get("result") is not None:
        r = v["result"]
        d.result = DealResult(
            reason=r["reason"],
            winner=r["winner"],
            multiplier=r["multiplier"],
            points=tuple(r["points"]),
            hands=tuple(tuple(h) for h in full),
        )
        if d.result.reason == REASON_OUT and d.result.winner is not None:
            d.out_seat = d.result.winner
            d.multiplier = d.result.multiplier
    return d


def redeal(template: Deal, hands: Sequence[Sequence[int] | None], stock: Sequence[int]) -> Deal:
    """A copy of ``template`` (a deal from ``deal_from_view``) with other hidden cards,
    to simulate: ``apply`` on it returns no events (``Deal.quiet``).

    ``hands`` and ``stock`` are as ``deal_from_view`` takes them; a ``None`` hand keeps
    the template's. Nothing is checked again: a search builds one deal from the view,
    checked, and then many guesses of the same hidden cards, each a shuffle of the same
    unseen ones, so that re-reading and re-checking the view on every guess is waste.
    """
    d = template.copy()
    d.quiet = True
    own = d.hands
    d.hands = [own[s] if h is None else list(h) for s, h in enumerate(hands)]
    d.stock = list(reversed(stock))
    return d
