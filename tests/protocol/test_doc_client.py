"""The minimal client printed in docs/protocol.md plays a whole match against a real
`pisyedili-server`: the doc alone is enough to write a working client."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
SERVER = Path(sys.executable).with_name("pisyedili-server")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def server_port() -> Iterator[int]:
    port = _free_port()
    proc = subprocess.Popen(
        [str(SERVER), "--listen", f"tcp:{port}:interface=127.0.0.1", "--bot-delay", "0",
         "--seed", "3"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("pisyedili-server did not start") from None
                time.sleep(0.1)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_the_documented_minimal_client_plays_a_whole_match(server_port: int) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 1
    namespace: dict[str, Any] = {}
    exec(compile(blocks[0], "docs/protocol.md", "exec"), namespace)
    end = namespace["play"]("127.0.0.1", server_port)
    assert end["type"] == "match_end"
    assert len(end["totals"]) == 2
    assert set(end["winners"]) <= {0, 1}
