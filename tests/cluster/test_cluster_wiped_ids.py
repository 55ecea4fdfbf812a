"""Ids never go back while Redis is wiped under running processes: Redis is killed and
started again empty while three processes on one PostgreSQL store make players and
tables at once, each as fast as it is answered. No player or table id is handed out
twice across the run (a reused player id is refused by the store, `sessions_pkey`, and
gives a newcomer another's session), and the store holds every session made."""

from __future__ import annotations

import threading
from contextlib import ExitStack

from pg_kit import Cluster
from poll_kit import poll_until

from cluster.cluster_kit import BACKSTOP, Player, log_of, server
from cluster.redis_kit import own_redis
from cluster.test_cluster_ids import _stop
from pisyedili.server.store import open_store

PROCESSES = 3


class Maker(threading.Thread):
    """At one process, players who each open a table, one after another until told to
    stop: their ids; a request refused while Redis is away is asked again."""

    def __init__(self, port: int, n: int) -> None:
        super().__init__(daemon=True)
        self.port, self.n = port, n
        self.players: list[int] = []
        self.tables: list[int] = []
        self.refused: list[str] = []
        self.stop = threading.Event()
        self.failure: BaseException | None = None

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                self._one()
        except BaseException as e:  # (told by the test, which joins this thread)
            self.failure = e

    def _one(self) -> None:
        # Each from an address of its own: a run makes more than one address may hold.
        count = len(self.players) + len(self.refused)
        player = Player(self.port, f"127.{self.n + 10}.{count // 250}.{count % 250 + 1}")
        try:
            welcome = player.hello(f"Oyuncu{self.n}")
            if welcome["type"] == "error":
                self.refused.append(welcome["code"])
                return
            self.players.append(int(welcome["player"]))
            made = player.request("create_table", rules="classic", seats=2)
            if made["type"] == "error":
                self.refused.append(made["code"])
            else:
                self.tables.append(int(made["table"]["id"]))
        finally:
            player.close()



def _sessions(db: str) -> set[int]:
    """The player ids of the sessions the store holds."""
    store = open_store(db)
    try:
        return {row[0] for row in store.read_journal().sessions}
    finally:
        store.close()


def test_redis_wiped_under_running_processes_hands_out_no_id_twice(postgres: Cluster) -> None:
    """Players and tables made at three processes at once, before Redis is wiped, while
    it is away (refused: `cluster_unavailable`) and as it comes back to each process
    in turn: every id once, the store refusing no row and holding every session."""
    db = postgres.store()
    redis = own_redis()
    try:
        with ExitStack() as stack:
            procs = [stack.enter_context(server(redis.url, db, n, "--log-format", "json"))
                     for n in range(PROCESSES)]
            makers = [Maker(port, n) for n, (_, port) in enumerate(procs)]
            for maker in makers:
                maker.start()
            poll_until(lambda: all(len(m.tables) >= 5 for m in makers) or None, BACKSTOP,
                       "players and tables made at every process")
            before = [len(m.players) for m in makers]
            redis.kill()
            redis.start()  # on its port, empty: it keeps nothing
            poll_until(lambda: all(len(m.tables) >= b + 20
                                   for m, b in zip(makers, before, strict=True)) or None,
                       BACKSTOP, lambda: "players and tables made at every process again: "
                       f"{[(len(m.tables), m.refused[-3:]) for m in makers]}")
            for maker in makers:
                maker.stop.set()
                maker.join(BACKSTOP)
                assert maker.failure is None, maker.failure
            made = {p for m in makers for p in m.players}
            poll_until(lambda: made <= _sessions(db) or None, BACKSTOP,
                       lambda: f"the store holding every session: {made - _sessions(db)}")
            log = _stop([(proc, port, log_of(proc)) for proc, port in procs])
    finally:
        redis.stop()
    players = [p for m in makers for p in m.players]
    tables = [t for m in makers for t in m.tables]
    assert len(players) == len(set(players)), sorted(players)
    assert len(tables) == len(set(tables)), sorted(tables)
    assert "duplicate key" not in log
    assert {code for m in makers for code in m.refused} <= {"cluster_unavailable"}
