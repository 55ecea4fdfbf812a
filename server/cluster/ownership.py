"""Who holds what when a process leaves: the cluster's decisions, with no I/O.

A process that stops hands the sessions it homes to the live ones (`hand_targets`).
These functions only decide: the callers read the state they need (`net/relay.py`)
and act on the answer, so each decision is tested with plain values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def hand_targets(tables: Mapping[str, str | None], live: Sequence[str]) -> dict[str, str]:
    """Where a stopping process hands each session it homes, by player id. `tables`
    says which process holds each one's table: None for a player at no table or at a
    table of the stopping process itself (whoever takes that table over calls its
    member home). A player at a table of a live process goes to that process, where it
    is then a member of a table of its own process (nothing to relay); the others go to
    the live processes in turn, in player order, to share the load. Nobody is handed
    anywhere when no process is live."""
    ordered = sorted(set(live))
    if not ordered:
        return {}
    targets: dict[str, str] = {}
    turn = 0
    for player in sorted(tables, key=_by_number):
        owner = tables[player]
        if owner in ordered:
            targets[player] = owner
        else:
            targets[player] = ordered[turn % len(ordered)]
            turn += 1
    return targets


def _by_number(player: str) -> tuple[int, str]:
    return (int(player), "") if player.isdigit() else (0, player)
