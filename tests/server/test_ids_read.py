"""The journal's ids read while Redis is away (`IdsRead`): every `IDS_EVERY` seconds
while it is away, never once it is back, however Redis comes and goes while a slow
read is under way."""

from __future__ import annotations

from twisted.internet.defer import Deferred
from twisted.internet.task import Clock

from pisyedili.server.cluster.local import LocalCluster
from pisyedili.server.service.takeover import IDS_EVERY, IdsRead


class Reads:
    """The reads asked of the journal, each answered when the test says."""

    def __init__(self) -> None:
        self.asked: list[Deferred[dict[str, int]]] = []

    def __call__(self) -> Deferred[dict[str, int]]:
        read: Deferred[dict[str, int]] = Deferred()
        self.asked.append(read)
        return read


def test_no_read_once_redis_is_back_after_it_flapped_during_a_slow_read() -> None:
    """Redis goes (a read starts), comes back and goes again while that read is slow,
    then comes back once the read is done: no read of the journal follows, and none
    raises in the loop that runs them."""
    clock, reads = Clock(), Reads()
    ids = IdsRead(reads, LocalCluster(), clock)
    ids.start()  # Redis gone
    ids.stop()  # back
    ids.start()  # gone again: the first read is still under way
    clock.advance(IDS_EVERY)
    for read in list(reads.asked):
        read.callback({"player": 7})
    asked = len(reads.asked)
    ids.stop()  # back
    for _ in range(5):
        clock.advance(IDS_EVERY)
    assert len(reads.asked) == asked
    assert not clock.getDelayedCalls()


def test_reads_go_on_every_interval_while_redis_is_away() -> None:
    """One read at a time: a slow one is not doubled by the next tick; the next tick
    after it is done reads again."""
    clock, reads = Clock(), Reads()
    ids = IdsRead(reads, LocalCluster(), clock)
    ids.start()
    assert len(reads.asked) == 1
    clock.advance(IDS_EVERY)
    assert len(reads.asked) == 1  # the first still under way
    reads.asked[0].callback({})
    clock.advance(IDS_EVERY)
    assert len(reads.asked) == 2
    ids.stop()
