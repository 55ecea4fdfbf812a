"""The minimal client printed in docs/protocol.md plays a whole match against a real
`pisyedili-server`: the doc alone is enough to write a working client.

It speaks the current protocol version, answers the `moves` of `update` and `table`
messages and pings, and returns the `match_end` event of the match's last `update`.
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from process_output import BACKSTOP

from pisyedili.protocol import PROTOCOL_VERSION

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
SERVER = Path(sys.executable).with_name("pisyedili-server")


@pytest.fixture
def server_port() -> Iterator[int]:
    """A real server on a port the OS picks; its own log line says which."""
    proc = subprocess.Popen(
        [str(SERVER), "--listen", "tcp:0:interface=127.0.0.1", "--bot-delay", "0",
         "--seed", "4"],  # a seed whose match meets the rate limit
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # ends (and fails below) if the server dies first
            found = re.search(r"listening on .*port=(\d+)", line)
            if found:
                break
        else:
            raise RuntimeError("pisyedili-server did not start")
        # Keep reading its log, so a full pipe never blocks the server.
        threading.Thread(target=proc.stdout.read, daemon=True).start()
        yield int(found.group(1))
    finally:
        proc.terminate()
        proc.wait(timeout=BACKSTOP)


def test_the_documented_minimal_client_plays_a_whole_match(server_port: int) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 1
    namespace: dict[str, Any] = {}
    exec(compile(blocks[0], "docs/protocol.md", "exec"), namespace)
    end = namespace["play"]("127.0.0.1", server_port)
    assert end["event"] == "match_end"
    assert len(end["totals"]) == 2
    assert set(end["winners"]) <= {0, 1}
    assert end["winners"]


def test_the_documented_minimal_client_speaks_this_version() -> None:
    block = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)[0]
    assert f'"protocol": {PROTOCOL_VERSION}' in block
    # Version 2 has no `turn` message: the decision comes as `moves` in `update`/`table`.
    assert '"turn"' not in block
    assert '"moves" in msg' in block
