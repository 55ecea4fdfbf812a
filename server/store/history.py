"""Finished matches for the `history` feature: what `history` and `replay` answer.

Transport-neutral and synchronous: each function takes the `Store` and runs on the
store's thread (`Archive.query`), so a slow read never stalls the reactor. Only the
store's finished matches are read, so nothing of a match in progress can leak; a
private table's matches reach their own players only: the sessions that held their
seats and the accounts seated in them (`Viewer`), never whoever holds a name now.
Refusals are `ProtocolError`s, which the network layer answers as `error`.
"""

from __future__ import annotations

from typing import Any

from pisyedili.protocol import names
from pisyedili.protocol.errors import ProtocolError
from pisyedili.protocol.shapes import HISTORY_PAGE, REPLAY_MOVES, REPLAY_STEP_MOVES, SHEET_ROWS
from pisyedili.server import rules as engine
from pisyedili.server.store.base import Store, Viewer
from pisyedili.server.table.effects import Message


def lookup_name(name: str) -> str:
    """A typed player name in the one spelling names are kept in (NFC, trimmed)."""
    try:
        return names.normalise(name)
    except names.BadName as e:
        raise ProtocolError("bad_field", f"name: {e}", field="name") from None


def summary(row: dict[str, Any]) -> Message:
    """A stored match as a `match_summary`: each seat with its total, in seat order."""
    totals = row["totals"]
    players = []
    for p in sorted(row["players"], key=lambda p: p["seat"]):
        player: dict[str, Any] = {"seat": p["seat"], "name": p["name"], "kind": p["kind"],
                                  "total": totals[p["seat"]]}
        if p.get("level"):
            player["level"] = p["level"]
        if p.get("bot"):  # a bot account's program held this human seat
            player["bot"] = True
        if p.get("left_at") is not None:  # its player left; a server bot finished it
            player["left_at"] = p["left_at"]
            if p.get("forfeit"):
                player["forfeit"] = True
        players.append(player)
    return {"id": row["id"], "rules": row["rules"], "options": row["options"],
            "players": players, "winners": row["winners"], "deals": row["deals"],
            "started_at": row["started_at"], "finished_at": row["finished_at"],
            "private": row["private"]}


def history_page(store: Store, of: str, name: str | None, viewer: Viewer, offset: int = 0,
                 limit: int = HISTORY_PAGE) -> Message:
    """The `history` reply: one page of the list `of`, as `viewer` may see it. `name`
    is the player's whose list it is ("player"), or the viewer's own ("mine"): the
    reply names it; "mine" lists what the viewer's session and account played."""
    limit = min(limit, HISTORY_PAGE)
    rows, total = store.history_page(of, name, viewer, offset, limit)
    reply: Message = {"type": "history", "of": of, "matches": [summary(r) for r in rows],
                      "total": total, "offset": offset}
    if of != "recent" and name is not None:
        reply["name"] = name
    return reply


STEP_FIELDS = ("phase", "turn", "direction", "top", "named_suit", "stock", "penalty",
               "muamele")
"""The public parts of a position a `replay_step` repeats from the spectator's view."""


def replay_steps(record: dict[str, Any], start: int, count: int) -> list[Message]:
    """The positions of a finished deal, every hand face up: before move `start`, then
    after each of the `count` moves from there. A client without the rules engine (the
    browser) shows them as they are; the engine rebuilds them from the record."""
    rec = engine.DealRecord.from_wire(record)
    d = engine.deal_from_deck(rec.options, rec.dealer, list(rec.deck), rec.seed)
    for move in rec.moves[:start]:
        engine.apply(d, move)

    def step(move: int | None, seat: int | None, events: list[Message]) -> Message:
        public = engine.view(d, None)
        return {**{k: public[k] for k in STEP_FIELDS},
                "hands": [[engine.CARD_STR[c] for c in sorted(hand)] for hand in d.hands],
                "move": None if move is None else engine.move_to_wire(move),
                "seat": seat, "events": events}

    steps = [step(None, None, [])]
    for move in rec.moves[start:start + count]:
        seat = d.turn
        events = engine.apply(d, move)
        steps.append(step(move, seat, events))
    return steps


def replay_page(store: Store, match_id: int, deal_no: int, start: int, viewer: Viewer,
                steps: bool = False) -> Message:
    """The `replay` reply: deal `deal_no` of the match, its moves from `start` on (a
    page of at most `REPLAY_MOVES`; with `steps`, of at most `REPLAY_STEP_MOVES` and
    the positions they lead to); its first page, the match's score sheet too."""
    found = store.visible_deal(match_id, deal_no, viewer)
    if found is None:
        raise ProtocolError("no_such_match", f"no finished match {match_id} that you may "
                            "see")
    deal = found["deal"]
    if deal is None:
        raise ProtocolError("bad_field", f"deal: match {match_id} has "
                            f"{found['deals']} deals", field="deal")
    record = deal["record"]
    moves = record["moves"]
    if start > len(moves):
        raise ProtocolError("bad_field", f"from: deal {deal_no} has {len(moves)} moves",
                            field="from")
    count = REPLAY_STEP_MOVES if steps else REPLAY_MOVES
    reply: Message = {"type": "replay", "match": summary(found), "deal_no": deal_no,
                      "result": deal["result"],
                      "record": {**record, "moves": moves[start:start + count]},
                      "from": start, "move_count": len(moves)}
    if steps:
        reply["steps"] = replay_steps(record, start, count)
    if start == 0:  # once per deal: the sheet is the whole match's
        reply["sheet"] = engine.sheet_rows(store.deal_results(match_id), SHEET_ROWS)
    return reply
