"""Whole matches played by the rules engine with a random player, as export documents:
the material the replay tests check the viewer and the file format against."""

from __future__ import annotations

import random
from typing import Any

from pisyedili.client.replay import FORMAT, VERSION
from pisyedili.server import rules as engine

NAMES = ("Ayşe", "Mehmet", "Zeynep", "Emre", "Elif", "Can")


def play(seed: int, rules: str = "classic", players: int = 3,
         **options: Any) -> dict[str, Any]:
    """A whole match, every seat choosing at random among its legal moves (shedding
    first, so deals stay short), as the export document of it."""
    rng = random.Random(seed)
    opts = engine.Options.make(rules, players, **{"match_end": "deals:2", **options})
    match = engine.Match(opts, rng)
    while not match.over:
        d = match.deal
        legal = engine.legal_moves(d, d.turn)
        plays = [m for m in legal if m not in (engine.DRAW, engine.PASS)]
        match.apply(rng.choice(plays or legal))
        if match.deal.over and not match.over:
            match.next_deal()
    summary = {
        "id": seed, "rules": rules, "options": {**opts.to_wire(), "turn_seconds": 0},
        "players": [{"seat": s, "name": NAMES[s], "kind": "human", "total": t}
                    for s, t in enumerate(match.totals)],
        "winners": list(match.winners), "deals": len(match.records),
        "started_at": 1_764_590_000.0, "finished_at": 1_764_590_600.0, "private": False}
    deals = [{"deal_no": n, "result": r.to_wire(), "record": rec.to_wire()}
             for n, (r, rec) in enumerate(zip(match.results, match.records, strict=True), 1)]
    return {"format": FORMAT, "version": VERSION, "match": summary, "deals": deals}
