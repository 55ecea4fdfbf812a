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

from process_output import Output

from pisyedili.protocol.codec import decode, frame
from pisyedili.protocol.limits import SERVER_FRAME_LIMITS
from pisyedili.protocol.version import PROTOCOL_VERSION

START = "from pisyedili.server.service.tap import main; main()"


def recv(sock: socket.socket) -> dict[str, Any]:
    (size,) = struct.unpack(">I", sock.recv(4, socket.MSG_WAITALL))
    return decode(sock.recv(size, socket.MSG_WAITALL), SERVER_FRAME_LIMITS)


def test_serves_logs_json_and_stops_cleanly_on_sigterm() -> None:
    proc = subprocess.Popen(
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
        assert proc.wait(timeout=20) == 0
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
        done = subprocess.run(
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
