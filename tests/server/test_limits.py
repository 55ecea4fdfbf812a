"""The abuse-limit mechanisms on their own, with a task.Clock."""

from __future__ import annotations

import pytest
from twisted.internet import task

from pisyedili.server.net.limits import (
    FLOOD_WINDOW,
    ConnectionCounter,
    RefusalWindow,
    ServerLimits,
    address_key,
    web_reserve,
)
from pisyedili.server.token_bucket import TokenBucket


def test_bucket_allows_a_burst_then_the_rate() -> None:
    clock = task.Clock()
    bucket = TokenBucket(rate=2, burst=5, clock=clock)
    assert [bucket.take() for _ in range(6)] == [True] * 5 + [False]
    assert bucket.retry_after() == pytest.approx(0.5)
    clock.advance(0.5)
    assert bucket.take() and not bucket.take()
    clock.advance(100)  # refills up to the burst, not beyond
    assert sum(bucket.take() for _ in range(10)) == 5


def test_counter_caps_per_address_then_in_total_and_releases() -> None:
    counter = ConnectionCounter(max_total=3, max_per_address=2)
    assert counter.admit("a") is None and counter.admit("a") is None
    assert counter.admit("a") == "too_many_connections"
    assert counter.admit("b") is None
    assert counter.admit("c") == "server_full"
    counter.release("a")
    assert counter.total == 2
    assert counter.admit("c") is None
    counter.release("nobody")  # never admitted: nothing changes
    assert counter.total == 3


@pytest.mark.parametrize("bad", [
    {"max_connections": 0}, {"burst": 0}, {"rate": 0}, {"handshake_seconds": -1},
    {"ping_seconds": 30, "idle_seconds": 30},
])
def test_limits_refuse_nonsense(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        ServerLimits(**bad)  # type: ignore[arg-type]


def test_limits_announced_in_welcome_are_integers() -> None:
    wire = ServerLimits(rate=2.5, ping_seconds=7.5).to_wire()
    assert all(isinstance(v, int) for v in wire.values())
    assert wire["rate"] == 2 and wire["ping_seconds"] == 8


def test_addresses_are_counted_per_ipv4_host_and_per_ipv6_64() -> None:
    assert address_key("192.0.2.7") == "192.0.2.7"
    assert address_key("::ffff:192.0.2.7") == "192.0.2.7"
    assert address_key("2001:db8:1:2::1") == address_key("2001:db8:1:2:ffff::9")
    assert address_key("2001:db8:1:2::1") == "2001:db8:1:2::/64"
    assert address_key("2001:db8:1:3::1") != address_key("2001:db8:1:2::1")
    assert address_key("local") == "local"


def test_a_reserve_keeps_places_that_only_others_may_take() -> None:
    counter = ConnectionCounter(max_total=10, max_per_address=100)
    reserve = web_reserve(10)
    assert reserve == 1
    for _ in range(9):
        assert counter.admit("web", reserve=reserve) is None
    assert counter.admit("web", reserve=reserve) == "server_full"
    assert counter.admit("tcp") is None  # the reserved place
    assert counter.admit("tcp") == "server_full"


def test_a_connection_counted_in_the_total_only_leaves_its_address_free() -> None:
    counter = ConnectionCounter(max_total=10, max_per_address=1)
    assert counter.admit("proxy", per_address=False) is None
    assert counter.admit("proxy", per_address=False) is None
    assert counter.admit("proxy") is None  # the address's own place is still free
    assert counter.total == 3
    counter.release("proxy", per_address=False)
    counter.release("proxy")
    assert counter.total == 1
    assert counter.admit("proxy") is None


def test_refusals_count_over_a_fixed_window_not_in_a_row() -> None:
    window = RefusalWindow(0.0)
    assert [window.refuse(t) for t in (0.0, 1.0, 9.9)] == [1, 2, 3]
    assert window.refuse(FLOOD_WINDOW) == 1  # a new window from here
    assert window.refuse(FLOOD_WINDOW + 9.0) == 2
