"""A `table` snapshot's `deal_events` over a real socket: after some moves, each
player's and a spectator's `resync` carries the deal so far exactly as their own
updates told it (draws of others without their cards, a spectator's without any)."""

from __future__ import annotations

import pytest_twisted
from net_match import open_table, pending_turn
from wireclient import Msg, Server, WireClient


def told(client: WireClient) -> list[Msg]:
    """The current deal's events as the client's updates carried them, without
    deal_start and timeout notices (what `deal_events` promises)."""
    out: list[Msg] = []
    for event in client.events():
        if event["event"] == "deal_start":
            out = []
        elif event["event"] != "timeout":
            out.append(event)
    return out


@pytest_twisted.ensureDeferred
async def test_a_resync_carries_the_deal_so_far_as_each_member_saw_it() -> None:
    server = await Server.start(seed=11)
    try:
        clients, table_id = await open_table(server, ["Ayşe", "Mehmet"], "classic", 2,
                                             options={"match_end": "deals:1"})
        watcher = await server.connect("Deniz")
        await watcher.ok("join_table", table=table_id, spectate=True)
        draws = 0
        for _ in range(12):
            client, decision = await pending_turn(clients)
            moves = decision["moves"]
            draw = next((m for m in moves if m["kind"] == "draw"), None)
            move = draw if draw is not None and draws < 4 else moves[0]
            draws += move["kind"] == "draw"
            await client.ok("move", move=move)
            if any(e["event"] == "deal_end" for e in client.events()):
                break
        assert draws > 0
        for member in [*clients, watcher]:
            await member.request("ping")  # every update sent so far has arrived
            snap = await member.ok("resync")
            assert snap["type"] == "table"
            seat = snap["you"]["seat"]
            assert snap["deal_events"] == told(member)
            for event in snap["deal_events"]:
                if event["event"] == "draw":
                    assert ("cards" in event) == (seat is not None and event["seat"] == seat)
    finally:
        await server.stop()
