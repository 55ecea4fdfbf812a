"""Properties over many random games, in both rule sets and every seat count.

Cards are conserved, every game ends, every legal move applies, every illegal move is
refused with the state unchanged, a view holds only what its seat may know (and is
enough to rebuild the deal), a replay reproduces the final state, and after a follow-up
draw only the card drawn may be played (K10, K11).
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rules_kit import conserved, hidden_dealt, random_deal, snapshot

from pisyedili.server.rules import (
    DEAL_FIELDS,
    DRAW,
    PICK,
    Deal,
    DealRecord,
    Match,
    Options,
    RuleError,
    apply,
    apply_for,
    deal_from_view,
    events_for,
    events_for_seats,
    legal_moves,
    move_to_wire,
    parse_card,
    replay,
    unseen_cards,
    view,
    views,
)

COMBOS = [("classic", p) for p in range(2, 7)] + [("cardiva", p) for p in range(2, 5)]
ALL_MOVES = list(range(PICK + 104))
GARBAGE: list[Any] = [-1, PICK + 200, 10**9, True, None, "7h", 3.0]
MAX_MOVES = {"end_deal": 2_000, "reshuffle": 60_000}
STATE_SLOTS = [s for s in DEAL_FIELDS if s not in ("deck", "moves", "seed", "reshuffles")]

VIEW_KEYS = {
    "rules", "options", "players", "seat", "dealer", "phase", "turn", "direction", "hand",
    "hand_counts", "top", "named_suit", "pile", "stock", "penalty", "first_round",
    "must_follow", "drew", "scores", "deal_no", "muamele", "result",
}  # fmt: skip


def _state(d: Deal) -> dict[str, Any]:
    return {name: getattr(d, name) for name in STATE_SLOTS}


def _check_views(d: Deal, rng: random.Random) -> None:
    """Each seat's view: own hand only; it depends on nothing hidden; it rebuilds the deal."""
    seats = [None, *range(d.n)]
    # A server's fan-out builds them all at once (shared parts); one seat's is the same.
    assert views(d, seats[::-1]) == [view(d, seat) for seat in seats[::-1]]
    for seat in seats:
        v = view(d, seat)
        # K10, K11: the card a follow-up draw brought, in the drawer's own view only.
        owed_draw = d.follow and d.drew and seat == d.to_act
        assert set(v) == (VIEW_KEYS | {"drawn"} if owed_draw else VIEW_KEYS)
        if seat is None:
            assert v["hand"] is None
        else:
            assert [parse_card(c) for c in v["hand"]] == sorted(d.hands[seat])
        if d.over:
            continue
        # The same view from any other deal of the hidden cards: the view holds none of them.
        hidden = unseen_cards(v)
        assert Counter(hidden) == Counter(
            [c for s, h in enumerate(d.hands) if s != seat for c in h] + d.stock
        )
        other = deal_from_view(v, *hidden_dealt(v, seat, rng))
        assert view(other, seat) == v
        if seat is not None and seat == d.to_act:
            assert set(legal_moves(other, seat)) == set(legal_moves(d, seat))
    # With the true hidden cards, the rebuilt deal is the deal itself.
    v = view(d, None)
    same = deal_from_view(v, [h[:] for h in d.hands], d.stock[::-1], seed=d.seed)
    same.reshuffles = d.reshuffles
    assert _state(same) == _state(d)


def _play_out(d: Deal, rng: random.Random, empty_stock: str, heavy_every: int) -> None:
    steps = 0
    while not d.over:
        seat = d.to_act
        assert seat is not None
        legal = legal_moves(d, seat)
        assert legal, "a seat to act always has a move"
        assert len(set(legal)) == len(legal)
        assert all(legal_moves(d, s) == [] for s in range(d.n) if s != seat)
        before = snapshot(d)
        bad = rng.choice([m for m in ALL_MOVES if m not in legal] + GARBAGE)
        with pytest.raises(RuleError):
            apply(d, bad)
        with pytest.raises(RuleError) as err:
            apply_for(d, (seat + 1 + rng.randrange(d.n - 1)) % d.n, rng.choice(legal))
        assert err.value.code == "not_your_turn"
        assert snapshot(d) == before
        if steps % heavy_every == 0:
            _check_views(d, rng)
        events = apply(d, rng.choice(legal))
        _check_events(events)
        assert conserved(d)
        steps += 1
        assert steps < MAX_MOVES[empty_stock], "the deal does not end"
    _check_views(d, rng)
    assert d.result is not None and d.to_act is None
    assert len(d.result.points) == d.n and all(p >= 0 for p in d.result.points)
    if d.result.reason == "out":
        assert d.result.winner is not None and d.result.points[d.result.winner] == 0
    again = replay(DealRecord.from_wire(d.record.to_wire()))
    assert snapshot(again) == snapshot(d)


def _check_events(events: list[dict[str, Any]]) -> None:
    for ev in events:
        assert isinstance(ev["event"], str)
        if ev["event"] == "draw":
            assert len(ev["cards"]) == ev["count"]
    seats = [None, 0, 1, 0]
    assert events_for_seats(events, seats) == [events_for(events, seat) for seat in seats]
    for seat in (None, 0, 1):
        for ev in events_for(events, seat):
            if ev["event"] == "draw":
                assert ("cards" in ev) == (seat is not None and ev["seat"] == seat)


# The table is drawn by hypothesis rather than parametrized: pytest-twisted's wrapper of
# hypothesis tests does not survive parametrization. Enough examples cover every table.
TABLES = st.sampled_from(COMBOS)
SEEDS = st.integers(0, 2**32 - 1)


@settings(max_examples=80, deadline=None)
@given(table=TABLES, seed=SEEDS)
def test_random_deals_keep_every_invariant(table: tuple[str, int], seed: int) -> None:
    rules, players = table
    rng = random.Random(seed)
    _play_out(random_deal(rules, players, seed), rng, "end_deal", heavy_every=1)


@settings(max_examples=30, deadline=None)
@given(table=TABLES, seed=SEEDS)
def test_random_deals_with_reshuffles_keep_every_invariant(
    table: tuple[str, int], seed: int
) -> None:
    rules, players = table
    rng = random.Random(seed)
    d = random_deal(rules, players, seed, empty_stock="reshuffle")
    _play_out(d, rng, "reshuffle", heavy_every=50)


@pytest.mark.parametrize(("rules", "players"), COMBOS)
def test_thousands_of_random_deals_conserve_cards_and_end(rules: str, players: int) -> None:
    """A cheaper sweep: 1000 deals per table, conservation checked at every move."""
    opts = Options.make(rules, players)
    total = 52 * opts.decks
    for seed in range(1000):
        rng = random.Random(seed)
        d = random_deal(rules, players, seed)
        steps = 0
        while not d.over:
            apply(d, rng.choice(legal_moves(d, d.turn)))
            assert sum(map(len, d.hands)) + len(d.stock) + len(d.pile) == total
            steps += 1
            assert steps < MAX_MOVES["end_deal"]
        assert conserved(d)


CARDIVA_TABLES = st.sampled_from([c for c in COMBOS if c[0] == "cardiva"])


def _ace_hoarder(legal: list[int], rng: random.Random) -> int:
    """Plays when it can, an ace last: hands end on aces, so a follow-up often leaves a lone
    ace barred as the last card (K10), the case where a held card could slip through."""
    plays = [m for m in legal if move_to_wire(m)["kind"] == "play"]
    others = [m for m in plays if move_to_wire(m)["card"][0] != "A"]
    return rng.choice(others or plays or legal)


def _check_rebuilt_moves(d: Deal, seat: int, rng: random.Random) -> None:
    """Rebuilt from ``seat``'s view with the hidden cards dealt at random, the deal offers
    ``seat`` exactly its live legal moves; no other view names the card drawn."""
    v = view(d, seat)
    hidden = unseen_cards(v)
    rng.shuffle(hidden)
    guess: list[list[int] | None] = []
    for s, count in enumerate(v["hand_counts"]):
        guess.append(None if s == seat else hidden[:count])
        hidden = hidden[count:] if s != seat else hidden
    rebuilt = deal_from_view(v, guess, hidden)
    assert set(legal_moves(rebuilt, seat)) == set(legal_moves(d, seat))
    assert all("drawn" not in view(d, s) for s in [None, *range(d.n)] if s != seat)


@pytest.mark.rule("K10")
@pytest.mark.rule("K11")
@settings(max_examples=120, deadline=None)
@given(
    table=CARDIVA_TABLES,
    seed=SEEDS,
    chooser=st.sampled_from(["uniform", "ace_hoarder"]),
    empty_stock=st.sampled_from(["end_deal", "reshuffle"]),
)
def test_after_a_follow_up_draw_every_play_is_the_card_drawn(
    table: tuple[str, int], seed: int, chooser: str, empty_stock: str
) -> None:
    rules, players = table
    rng = random.Random(seed)
    d = random_deal(rules, players, seed, empty_stock=empty_stock)
    drawn: str | None = None  # the card the seat to act drew owing a follow-up
    steps = 0
    while not d.over:
        seat = d.to_act
        assert seat is not None
        legal = legal_moves(d, seat)
        if drawn is not None:
            assert d.follow and d.drew
            assert view(d, seat)["drawn"] == drawn
            _check_rebuilt_moves(d, seat, rng)
            plays = {move_to_wire(m)["card"] for m in legal if m < DRAW}
            assert plays <= {drawn}, (drawn, view(d, seat))
            before = snapshot(d)
            for card in set(view(d, seat)["hand"]) - {drawn}:
                with pytest.raises(RuleError):
                    apply(d, parse_card(card))
            assert snapshot(d) == before
        move = rng.choice(legal) if chooser == "uniform" else _ace_hoarder(legal, rng)
        owed = d.follow
        events = apply(d, move)
        drawn = None
        if owed and move == DRAW and d.to_act == seat:
            (ev,) = [e for e in events if e["event"] == "draw" and e["seat"] == seat]
            drawn = ev["cards"][-1]
        steps += 1
        assert steps < MAX_MOVES[empty_stock]


@settings(max_examples=24, deadline=None)
@given(table=TABLES, seed=SEEDS)
def test_random_matches_end_with_the_lowest_totals_winning(
    table: tuple[str, int], seed: int
) -> None:
    rules, players = table
    rng = random.Random(seed)
    m = Match(Options.make(rules, players), random.Random(seed))
    while True:
        while not m.deal.over:
            m.apply(rng.choice(legal_moves(m.deal, m.deal.turn)))
        if m.over:
            break
        m.next_deal()
    assert m.totals == [sum(r.points[s] for r in m.results) for s in range(players)]
    assert m.winners and all(m.totals[w] == min(m.totals) for w in m.winners)
    assert len(m.records) == m.deal_no
    assert all(replay(rec).result == res for rec, res in zip(m.records, m.results, strict=True))
