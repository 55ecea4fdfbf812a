"""What an operator reads in a cluster's logs: a process named by its host and game
port (or by `--cluster-name`) in the others' lines about it, not only by its number of
this start; a stop that says what it held and what became of it; no Twisted factory
noise (`Starting factory <object at 0x...>`)."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
from contextlib import ExitStack
from pathlib import Path

from poll_kit import poll_until

from cluster.cluster_kit import BACKSTOP, Player, listed
from cluster.outage_kit import server
from cluster.redis_kit import RedisAt

FACTORY_NOISE = re.compile(r"(Starting|Stopping) factory")


def _host_a_table(port: int, name: str) -> tuple[Player, int]:
    player = Player(port)
    player.hello(name)
    answer = player.request("create_table", rules="classic", seats=2)
    assert answer["type"] == "table", answer
    return player, int(answer["table"]["id"])


def test_a_process_killed_is_named_by_its_host_and_port_in_the_others_logs(
        redis: RedisAt, tmp_path: Path) -> None:
    """A process without --cluster-name is called after this host and its game port;
    killed (kill -9), the process left names it so, with its number of this start."""
    procs: list[subprocess.Popen[str]] = []
    host = socket.gethostname()
    with ExitStack() as stack:
        port_a, log_a = stack.enter_context(server(redis.url, tmp_path / "a.db", 0, procs))
        port_b, log_b = stack.enter_context(server(redis.url, tmp_path / "b.db", 1, procs))
        told = log_a.wait_for(rf"cluster: process (p\d+) is ({re.escape(host)}:\d+)")
        number = told.group(1)
        assert told.group(2) == f"{host}:{port_a}", told.group(0)
        player, table = _host_a_table(port_a, "Ayşe")
        poll_until(lambda: table in listed(port_b), BACKSTOP, "B to list A's table")
        procs[0].send_signal(signal.SIGKILL)
        procs[0].wait()
        log_b.wait_for(rf"cluster: process {number} \({re.escape(host)}:{port_a}\) is gone, "
                       r"with 1 tables")
        player.close()


def test_a_stop_says_what_it_held_and_the_others_name_it_by_its_chosen_name(
        redis: RedisAt, tmp_path: Path) -> None:
    """SIGTERM: the process logs its tables and sessions by count and id, and that its
    tables are the others' to take over; the other names it by its --cluster-name and
    its address. Neither logs a Twisted factory starting or stopping."""
    procs: list[subprocess.Popen[str]] = []
    host = socket.gethostname()
    with ExitStack() as stack:
        _, log_a = stack.enter_context(server(redis.url, tmp_path / "a.db", 0, procs))
        port_b, log_b = stack.enter_context(server(redis.url, tmp_path / "b.db", 1, procs,
                                                   extra=("--cluster-name", "web2", "--web",
                                                          "tcp:0:interface=127.0.0.1")))
        told = log_b.wait_for(r"cluster: process (p\d+) is web2 at (\S+)")
        number = told.group(1)
        assert told.group(2) == f"{host}:{port_b}", told.group(0)
        player, table = _host_a_table(port_b, "Mehmet")
        watcher = Player(port_b)
        watcher.hello("Zeynep")
        ids = [str(i) for i in sorted([player.welcome["player"], watcher.welcome["player"]])]
        procs[1].send_signal(signal.SIGTERM)
        assert procs[1].wait(timeout=BACKSTOP) == 0
        stopped = log_b.wait_for(r"stopping: (\d+) tables \((.*?)\) and (\d+) sessions, "
                                 r"(\d+) of them connected \(players (.*?)\) and told "
                                 r"shutting_down: (.*)")
        assert stopped.groups() == ("1", str(table), "2", "2", ", ".join(ids),
                                    "the sessions handed to the other processes, the "
                                    "tables released for them to take over"), \
            stopped.group(0)
        log_a.wait_for(rf"cluster: process {number} \(web2 at {re.escape(host)}:{port_b}\) "
                       r"is gone, with 1 tables")
        log_b.rest()
        procs[0].send_signal(signal.SIGTERM)
        assert procs[0].wait(timeout=BACKSTOP) == 0
        log_a.rest()
        for log in (log_a, log_b):
            assert not FACTORY_NOISE.search(log.text), log.text
            assert "Traceback" not in log.text, log.text
        player.close()
        watcher.close()
