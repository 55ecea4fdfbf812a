"""`pisyedili-server` as an operator runs it: a process, logs on stdout, SIGTERM to stop."""

from __future__ import annotations

import json
import signal
import socket
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import fork_kit
import pytest
from process_output import BACKSTOP, Output

from pisyedili.protocol.codec import decode, frame
from pisyedili.protocol.limits import SERVER_FRAME_LIMITS
from pisyedili.protocol.version import PROTOCOL_VERSION

START = "from pisyedili.server.service.tap import main; main()"


def recv(sock: socket.socket) -> dict[str, Any]:
    (size,) = struct.unpack(">I", sock.recv(4, socket.MSG_WAITALL))
    return decode(sock.recv(size, socket.MSG_WAITALL), SERVER_FRAME_LIMITS)


def test_serves_logs_json_and_stops_cleanly_on_sigterm() -> None:
    proc = fork_kit.popen(
        [sys.executable, "-c", START, "--listen", "tcp:0:interface=127.0.0.1",
         "--name", "Çay ocağı", "--log-format", "json", "--seed", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, encoding="utf-8")
    assert proc.stdout is not None
    output = Output(proc.stdout)
    try:
        port = int(output.wait_for(r"port=(\d+)").group(1))
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(frame({"type": "hello", "protocol": PROTOCOL_VERSION, "name": "ann",
                                "id": 1}))
            welcome = recv(sock)
            assert welcome["type"] == "welcome" and welcome["server"] == "Çay ocağı"
            proc.send_signal(signal.SIGTERM)
            goodbye = recv(sock)
            assert goodbye["code"] == "shutting_down"
        assert proc.wait(timeout=BACKSTOP) == 0
        log = output.rest()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    records = [json.loads(r) for r in log.splitlines() if r.strip()]  # one per line
    assert records and all({"time", "level", "message", "namespace"} <= set(r)
                           for r in records)
    assert any(r["level"] == "warn" and r.get("seed") == 1 and "--seed 1" in r["message"]
               for r in records), "the --seed warning is missing"
    assert welcome["token"] not in log


def test_exits_1_when_it_cannot_listen() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = fork_kit.run(
            [sys.executable, "-c", START, "--listen", f"tcp:{port}:interface=127.0.0.1"],
            capture_output=True, text=True, timeout=30)
    assert done.returncode == 1
    assert "cannot listen" in done.stdout


def test_twistd_stops_when_it_cannot_listen(tmp_path: Path) -> None:
    """twistd starts its services before it runs the reactor: a port that cannot be
    bound then must still stop the server, not leave it running where nobody can
    reach it."""
    twistd = Path(sys.executable).parent / "twistd"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.Popen(
            [str(twistd), "-n", "--pidfile=", "pisyedili", "--no-announce", "--db",
             ":memory:", "--listen", f"tcp:{port}:interface=127.0.0.1"],
            cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True)
        assert proc.stdout is not None
        try:
            out = Output(proc.stdout)
            out.wait_for(r"cannot listen: .*" + str(port))
            proc.wait(timeout=60)
            assert "Server Shut Down" in out.rest()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def _started_with_open_files(soft: int, hard: int, *args: str) -> tuple[int, str]:
    """A real server started under that limit on open files (as a shell's `ulimit -n`
    sets it): its soft limit once it listens, read from /proc, and its log so far."""
    import resource

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    proc = fork_kit.popen(
        [sys.executable, "-c", START, "--listen", "tcp:0:interface=127.0.0.1",
         "--db", ":memory:", "--no-announce", *args],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, encoding="utf-8",
        preexec_fn=limited)
    assert proc.stdout is not None
    output = Output(proc.stdout)
    try:
        output.wait_for(r"listening on .*port=\d+")
        limits = Path(f"/proc/{proc.pid}/limits").read_text()
    finally:
        proc.kill()
        proc.wait()
    line = next(row for row in limits.splitlines() if row.startswith("Max open files"))
    return int(line.split()[3]), output.text


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/PID/limits")
def test_a_server_raises_its_limit_on_open_files_to_what_its_connections_need() -> None:
    """A shell's soft limit (often 1,024) would turn players away past it with no error
    of ours: the server raises it to --max-connections and a reserve, as far as the
    hard limit allows, and says so."""
    now, log = _started_with_open_files(256, 4096, "--max-connections", "1000")
    assert now == 1000 + 64
    assert "raised the limit on open files from 256 to 1064" in log
    now, log = _started_with_open_files(2048, 4096, "--max-connections", "1000")
    assert now == 2048 and "open files" not in log  # enough already: left alone


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/PID/limits")
def test_a_server_says_when_its_hard_limit_leaves_too_few_open_files() -> None:
    now, log = _started_with_open_files(200, 300, "--max-connections", "1000")
    assert now == 300
    assert "only 300 open files are allowed" in log and "--max-connections 1000" in log
    assert "ulimit -n" in log


SCRIPT = Path(sys.executable).parent / "pisyedili-server"


def test_version_names_the_game_its_protocol_and_twisted() -> None:
    from importlib.metadata import version

    from twisted import copyright

    done = subprocess.run([str(SCRIPT), "--version"], capture_output=True, text=True,
                          timeout=BACKSTOP)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (f"pisyedili-server {version('pisyedili')} "
                                   f"(protocol {PROTOCOL_VERSION}, "
                                   f"Twisted {copyright.version})")


def _description_runs(help_text: str) -> list[str]:
    """Lines of a help whose words (the first column of an option's line left out)
    have a run of more than 2 spaces inside them."""
    import re

    bad = []
    for line in help_text.splitlines():
        words = line.strip()
        if len(line) - len(line.lstrip()) < 10:  # an option's or a command's own line
            words = re.sub(r"^\S+(, \S+)?\s{2,}", "", words, count=1)
        if "   " in words:
            bad.append(line)
    return bad


@pytest.mark.parametrize("command", [[], ["backup"], ["operator"]])
def test_help_has_no_runs_of_spaces_inside_a_sentence(command: list[str]) -> None:
    done = subprocess.run([str(SCRIPT), *command, "--help"], capture_output=True, text=True,
                          timeout=BACKSTOP)
    assert done.returncode == 0, done.stderr
    assert "--operator=" in done.stdout or command
    assert _description_runs(done.stdout) == []


def test_a_second_server_on_a_busy_port_says_how_to_choose_another() -> None:
    first = subprocess.Popen(
        [str(SCRIPT), "--listen", "tcp:0:interface=127.0.0.1", "--db", ":memory:",
         "--no-announce"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, encoding="utf-8")
    assert first.stdout is not None
    try:
        port = int(Output(first.stdout).wait_for(r"listening on .*port=(\d+)").group(1))
        second = subprocess.run(
            [str(SCRIPT), "--listen", f"tcp:{port}:interface=127.0.0.1", "--db",
             ":memory:", "--no-announce"],
            capture_output=True, text=True, timeout=BACKSTOP)
    finally:
        first.kill()
        first.wait()
    assert second.returncode == 1
    assert "Address already in use" in second.stdout
    assert "choose another with --listen tcp:PORT" in second.stdout
