"""Helpers for the network tests that play whole matches: open a table, play a seat."""

from __future__ import annotations

import random
from typing import Any

from wireclient import Msg, Server, WireClient


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


async def play_to_match_end(client: WireClient, rng: random.Random) -> Msg:
    """Answer every `turn` prompt with one of its legal moves until `match_end`."""
    while True:
        msg = await client.wait(lambda m: m["type"] in ("turn", "match_end"))
        if msg["type"] == "match_end":
            return msg
        plays = [m for m in msg["moves"] if m["kind"] in ("play", "pick")]
        # Prefer shedding, so deals end in a few dozen moves (the reshuffle option can
        # otherwise make a random player's deal last for thousands).
        reply = await client.request("move", move=rng.choice(plays or msg["moves"]))
        assert reply["type"] == "ok", reply


async def pending_turn(clients: list[WireClient]) -> tuple[WireClient, Msg]:
    """The client whose seat must act now, and its latest prompt.

    A ping round trip on each connection first: the server writes a prompt before it
    reads the next request, so after the pong every prompt already sent has arrived.
    Pings are heartbeats: they do not count as the player acting.
    """
    for c in clients:
        await c.request("ping")
    for c in clients:
        turns = [m for m in c.received[c.cursor:] if m["type"] == "turn"]
        c.cursor = len(c.received)
        if turns:
            return c, turns[-1]
    raise AssertionError("nobody has a turn")
