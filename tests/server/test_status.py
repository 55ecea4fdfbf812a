"""`pisyedili-server status` without `--cluster`: the store's open tables and sessions,
said to be no proof that a server runs; and one clear line when it cannot read."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import fork_kit
from cluster.cluster_kit import Player
from poll_kit import poll_until
from process_output import SERVER, server_process

from pisyedili.server.bench.services import free_port
from pisyedili.server.service.status import UNKNOWN

STATUS_TIMEOUT = 60.0


def status(*args: str) -> subprocess.CompletedProcess[str]:
    return fork_kit.run([sys.executable, "-c", SERVER, "status", *args], text=True,
                        capture_output=True, timeout=STATUS_TIMEOUT, check=False)


def reported(*args: str) -> dict[str, Any]:
    done = status(*args, "--json")
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def test_without_a_cluster_the_store_is_read_and_said_to_prove_nothing(
        tmp_path: Path) -> None:
    db = str(tmp_path / "server.db")
    with server_process("--listen", "tcp:0:interface=127.0.0.1", "--db", db,
                        "--no-announce") as (_, port):
        host, guest = Player(port), Player(port)
        host.hello("Ali")
        guest.hello("Veli")
        table = host.ok("create_table", rules="classic", seats=2)["table"]["id"]
        report = poll_until(
            lambda: (r := reported("--db", db))["store"]["sessions"] == 2 and r,
            STATUS_TIMEOUT, "both sessions in the store")
        assert report["store"]["tables"] == [table]
        assert report["processes"] is None
        assert report["note"] == UNKNOWN
        text = status("--db", db)
        assert text.returncode == 0, text.stderr
        assert text.stdout.splitlines() == [
            UNKNOWN, f"store {db}: 1 open tables ({table}), 2 sessions"]


def test_a_store_that_is_not_there_is_one_line_and_status_1(tmp_path: Path) -> None:
    missing = tmp_path / "none.db"
    done = status("--db", str(missing))
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1
    assert done.stderr.endswith(f" status: no database at {missing}\n")
    assert done.stdout == ""
    assert not missing.exists()  # read, never created


def test_a_redis_nobody_listens_at_is_one_line_and_status_1() -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    done = status("--cluster", url)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1
    assert f"cannot reach the cluster's Redis at {url}" in done.stderr
    assert done.stdout == ""


def test_a_bad_cluster_address_is_a_usage_error() -> None:
    done = status("--cluster", "http://localhost/")
    assert done.returncode == 2
    assert "--cluster:" in done.stderr
