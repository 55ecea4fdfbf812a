"""The cluster's ownership decisions, with plain values (`server/cluster/ownership.py`):
where a stopping process hands its sessions, and when a process whose subscription
vanished is taken for dead."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pisyedili.server.cluster.ownership import DeathWatch, Verdict, hand_targets


def test_a_seat_at_a_live_process_goes_to_that_process() -> None:
    assert hand_targets({"7": "p2", "8": "p3"}, ["p2", "p3"]) == {"7": "p2", "8": "p3"}


def test_the_others_go_round_the_live_processes_in_player_order() -> None:
    """In the lobby (None), or at a table of a process no longer live: shared out in
    turn, by player number (10 after 9), whatever order they were listed in."""
    tables: dict[str, str | None] = {"10": None, "9": None, "11": "p9", "12": None}
    assert hand_targets(tables, ["p3", "p2"]) == {"9": "p2", "10": "p3", "11": "p2",
                                                  "12": "p3"}


def test_no_live_process_takes_nothing() -> None:
    assert hand_targets({"7": None, "8": "p2"}, []) == {}


@given(st.dictionaries(st.integers(1, 500).map(str),
                       st.sampled_from([None, "p1", "p2", "p3", "p4"])),
       st.lists(st.sampled_from(["p1", "p2", "p3"]), min_size=1))
def test_every_session_goes_to_a_live_process(tables: dict[str, str | None],
                                              live: list[str]) -> None:
    targets = hand_targets(tables, live)
    assert set(targets) == set(tables)
    assert set(targets.values()) <= set(live)
    assert all(targets[p] == owner for p, owner in tables.items() if owner in live)
    spread = [targets[p] for p, owner in tables.items() if owner not in live]
    counts = [spread.count(process) for process in set(live)]
    assert max(counts) - min(counts) <= 1  # shared evenly


def test_a_process_unsubscribed_for_the_settling_time_is_dead() -> None:
    watch = DeathWatch(settle=1.0)
    assert watch.probed({"p2": 0, "p3": 1}, 10.0) == Verdict(suspect=("p2",))
    assert watch.probed({"p2": 0, "p3": 1}, 10.5) == Verdict(suspect=("p2",))
    assert watch.probed({"p2": 0, "p3": 1}, 11.0) == Verdict(dead=("p2",))


def test_a_process_subscribed_again_starts_over() -> None:
    """A link made again within the settling time: a later gap counts from then."""
    watch = DeathWatch(settle=1.0)
    assert watch.probed({"p2": 0}, 10.0) == Verdict(suspect=("p2",))
    assert watch.probed({"p2": 1}, 10.5) == Verdict()
    assert watch.probed({"p2": 0}, 11.2) == Verdict(suspect=("p2",))
    assert watch.probed({"p2": 0}, 12.2) == Verdict(dead=("p2",))


def test_a_process_forgotten_starts_over() -> None:
    watch = DeathWatch(settle=1.0)
    watch.probed({"p2": 0}, 10.0)
    watch.forget(["p2"])
    assert watch.probed({"p2": 0}, 11.0) == Verdict(suspect=("p2",))


def test_a_probe_of_some_processes_says_nothing_of_the_others() -> None:
    """The suspects are probed again alone: the others keep when they were found."""
    watch = DeathWatch(settle=1.0)
    watch.probed({"p2": 0, "p3": 0}, 10.0)
    assert watch.probed({"p3": 0}, 11.0) == Verdict(dead=("p3",))
    assert watch.probed({"p2": 0}, 11.5) == Verdict(dead=("p2",))
