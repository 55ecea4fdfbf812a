"""Helpers for the network tests that play whole matches: open a table, play a seat."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from wireclient import Msg, Server, WireClient, event_of


async def open_table(server: Server, names: list[str], rules: str, seats: int,
                     bots: int = 0, options: dict[str, Any] | None = None,
                     private: bool = False,
                     level: str = "easy") -> tuple[list[WireClient], int]:
    """`names[0]` opens the table, the others join; bots fill the last seats; started."""
    clients = [await server.connect(name) for name in names]
    host = clients[0]
    snap = await host.ok("create_table", rules=rules, seats=seats, private=private,
                         options=options or {"match_end": "deals:1"})
    assert snap["type"] == "table"
    table_id = snap["table"]["id"]
    if snap["you"]["seat"] is None:
        await host.ok("sit", seat=0)
    for client in clients[1:]:
        how = {"code": snap["table"]["code"]} if private else {"table": table_id}
        joined = await client.ok("join_table", **how)
        assert joined["you"]["seat"] is not None
    for seat in range(seats - bots, seats):
        await host.ok("add_bot", seat=seat, level=level)
    for client in clients[1:]:
        await client.ok("ready", ready=True)
    await host.ok("start")
    return clients, table_id


def ends_match(msg: Msg) -> bool:
    return msg["type"] == "update" and any(e["event"] == "match_end" for e in msg["events"])


Choose = Callable[[list[Msg]], Msg]
"""A player's pick among the moves it is offered."""


def shedding(rng: random.Random) -> Choose:
    """A random player that prefers shedding (a play or a pick), so deals end in a few
    dozen moves: the reshuffle option can otherwise make a random player's deal last for
    thousands."""
    def choose(moves: list[Msg]) -> Msg:
        plays = [m for m in moves if m["kind"] in ("play", "pick")]
        return rng.choice(plays or moves)
    return choose


async def play(client: WireClient, choose: Choose, moves: int | None = None) -> Msg | None:
    """Answer the decisions offered with `choose`: `moves` of them (None: to the
    match's end); the `match_end` event if the match ended meanwhile.

    Waits for each move's `ok` before reading on, as a strict client does: the `ok`
    comes before the update the move causes, so this never deadlocks.
    """
    made = 0
    while moves is None or made < moves:
        msg = await client.wait(lambda m: ends_match(m) or ("moves" in m and m["type"] in
                                                             ("update", "table")))
        if ends_match(msg):
            return event_of(msg, "match_end")
        if any(m["type"] in ("update", "table") for m in client.received[client.cursor:]):
            continue  # a later step arrived already: this decision is gone
        start = len(client.received)
        reply = await client.request("move", move=choose(msg["moves"]))
        assert reply["type"] == "ok", reply
        assert not [m for m in client.received[start:client.received.index(reply)]
                    if m["type"] == "update"], "an update came before the move's ok"
        made += 1
    return None


async def play_to_match_end(client: WireClient, rng: random.Random) -> Msg:
    """Answer every decision offered with a `shedding` move; the `match_end` event."""
    ended = await play(client, shedding(rng))
    assert ended is not None
    return ended


async def pending_turn(clients: list[WireClient]) -> tuple[WireClient, Msg]:
    """The client whose seat must decide now, and the message that offered its moves.

    A ping round trip on each connection first: the server writes what a step causes
    before it reads the next request, so after the pong every update already sent has
    arrived. Pings are heartbeats: they do not count as the player acting.
    """
    for c in clients:
        await c.request("ping")
    for c in clients:
        c.cursor = len(c.received)
        decision = c.decision()
        if decision is not None:
            return c, decision
    raise AssertionError("nobody has a decision to make")
