"""LAN discovery, the client's side: browsing real announcing servers, choosing one, and
`pisyedili --discover` as a player runs it.

In-process tests browse 127.0.0.1 only, and look for their own servers' ports among
what they find; the command-line tests run the server and the client in a network
namespace of their own with only loopback in it, so there they know exactly what is
there. No packet leaves this machine. Browsing is time-based by nature: the tests poll
with a deadline.
"""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from discovery_kit import DEADLINE, LOOPBACK, PEM, announced, network_namespace
from process_output import Output
from twisted.internet import reactor, threads
from zeroconf import ServiceInfo

from pisyedili.client.discovery import (
    HOW_ELSE,
    SERVICE_TYPE,
    Found,
    choose,
    choose_from,
    dedupe,
    discover,
    found_of,
    table,
)
from pisyedili.protocol.version import SUPPORTED_VERSIONS
from pisyedili.server.net.hello import server_version
from pisyedili.server.service.assembly import make_factory
from pisyedili.server.service.server import ServerService

# -- without a network ------------------------------------------------------------------

def test_found_servers_are_deduplicated_by_address_and_port_and_sorted() -> None:
    a = Found("Kahve", "192.0.2.9", 7707, instance="Kahve")
    again = Found("Kahve", "192.0.2.9", 7707, instance="Kahve-2")
    b = Found("ayşe", "192.0.2.11", 7707)
    c = Found("Kahve", "192.0.2.10", 7707)
    d = Found("Kahve", "192.0.2.9", 7708)
    assert dedupe([d, again, c, a, b]) == [b, a, d, c]
    assert dedupe([Found("B", "192.0.2.9", 1), Found("A", "192.0.2.9", 1)]) == [
        Found("A", "192.0.2.9", 1)]


def test_where_and_target() -> None:
    assert Found("x", "192.0.2.9", 7707).target == "192.0.2.9:7707"
    assert Found("x", "2001:db8::1", 7707).where == "[2001:db8::1]:7707"
    assert Found("x", "2001:db8::1", 7707).target == "[2001:db8::1]:7707"
    assert Found("x", "192.0.2.9", 7708, tls=True).target == "tls:192.0.2.9:7708"
    assert Found("x", "2001:db8::1", 7708, tls=True).target == r"tls:2001\:db8\:\:1:7708"


def test_the_table_shows_every_column_and_flags_incompatible_servers() -> None:
    rows = table([Found("Kahve", "192.0.2.9", 7707, "0.1.0", SUPPORTED_VERSIONS, 3, False),
                  Found("Old", "192.0.2.10", 7707, "0.0.1", (99,), None, True)],
                 numbered=True)
    assert rows[0].split() == ["#", "NAME", "ADDRESS", "VERSION", "PROTOCOLS", "TABLES", "TLS"]
    assert rows[1].split() == ["1", "Kahve", "192.0.2.9:7707", "0.1.0",
                               ",".join(map(str, SUPPORTED_VERSIONS)), "3", "no"]
    assert rows[2].split() == ["2", "Old", "(incompatible)", "192.0.2.10:7707", "0.0.1", "99",
                               "?", "yes"]


def test_a_service_info_becomes_one_entry_per_address() -> None:
    info = ServiceInfo(SERVICE_TYPE, f"Çay-2.{SERVICE_TYPE}", port=7707,
                       parsed_addresses=["192.0.2.9", "2001:db8::1"], server="h.local.",
                       properties={"name": "Çay", "version": "1.0", "protocol": "1,2,x",
                                   "tls": "1", "tables": "5"})
    assert found_of(info) == [
        Found("Çay", "192.0.2.9", 7707, "1.0", (1, 2), 5, True, "Çay-2"),
        Found("Çay", "2001:db8::1", 7707, "1.0", (1, 2), 5, True, "Çay-2")]
    bare = ServiceInfo(SERVICE_TYPE, f"Bare.{SERVICE_TYPE}", port=1,
                       parsed_addresses=["192.0.2.9"], server="h.local.")
    assert found_of(bare) == [Found("Bare", "192.0.2.9", 1, instance="Bare")]


# -- choosing, from a given list ---------------------------------------------------------

def answers(*typed: str) -> Any:
    replies = list(typed)
    asked: list[str] = []

    def read(prompt: str) -> str:
        asked.append(prompt)
        if not replies:
            raise EOFError
        return replies.pop(0)

    read.asked = asked  # type: ignore[attr-defined]
    return read


def test_choosing_among_several_by_number() -> None:
    found = [Found("A", "192.0.2.9", 7707), Found("B", "192.0.2.9", 7708, tls=True)]
    out, err, read = io.StringIO(), io.StringIO(), answers("first", "9", "2")
    assert choose_from(found, out, err, read) == "tls:192.0.2.9:7708"
    assert read.asked[0] == "Server to connect to (1-2, Enter to cancel): "
    assert err.getvalue().count("Type a number from 1 to 2.") == 2
    assert [r.split()[:2] for r in out.getvalue().splitlines()[1:]] == [["1", "A"], ["2", "B"]]
    assert choose_from(found, io.StringIO(), io.StringIO(), answers("")) == 0  # Enter: cancel
    assert choose_from(found, io.StringIO(), err, answers()) == 1  # end of input


def test_one_found_asks_to_confirm() -> None:
    one = [Found("Tek", "192.0.2.9", 7707)]
    read = answers("")
    assert choose_from(one, io.StringIO(), io.StringIO(), read) == "192.0.2.9:7707"
    assert read.asked == ["Connect to Tek at 192.0.2.9:7707? [Y/n] "]
    assert choose_from(one, io.StringIO(), io.StringIO(), answers("y")) == "192.0.2.9:7707"
    assert choose_from(one, io.StringIO(), io.StringIO(), answers("n")) == 0


def test_none_found_says_so_and_how_else_to_play() -> None:
    out, err = io.StringIO(), io.StringIO()
    assert choose_from([], out, err, answers()) == 1
    assert "No Pis Yedili server found" in err.getvalue() and HOW_ELSE in err.getvalue()
    assert out.getvalue() == ""


# -- real servers on loopback -------------------------------------------------------------
# Other servers may announce on this loopback meanwhile (another test run): each test
# looks for its own ports only.

async def serving(name: str, endpoints: Sequence[str]) -> ServerService:
    return await announced(ServerService(make_factory(reactor, name=name), endpoints,
                                         reactor, announce=True))


@pytest_twisted.ensureDeferred
async def test_a_real_server_is_listed_and_chosen_by_its_number() -> None:
    name = f"Kahve {os.getpid()}"
    service = await serving(name, ["tcp:0:interface=127.0.0.1",
                                   f"ssl:0:interface=127.0.0.1:privateKey={PEM}"])
    try:
        ports = {p.getHost().port: p.factory is not service.factory for p in service.ports}
        [tls] = [p for p, is_tls in ports.items() if is_tls]
        end = time.monotonic() + DEADLINE
        while True:  # browsing is time-based: a loaded machine may answer late
            out, err = io.StringIO(), io.StringIO()
            assert await threads.deferToThread(discover, out, err, 2.0, LOOPBACK) == 0
            rows = [r.split() for r in out.getvalue().splitlines()]
            mine = [r for r in rows if r[-5] in {f"127.0.0.1:{p}" for p in ports}]
            if len(mine) == 2 or time.monotonic() > end:
                break
        assert rows[0] == ["NAME", "ADDRESS", "VERSION", "PROTOCOLS", "TABLES", "TLS"]
        assert [r[-5:] for r in mine] == [
            [f"127.0.0.1:{p}", server_version(), ",".join(map(str, SUPPORTED_VERSIONS)), "0",
             "yes" if ports[p] else "no"] for p in sorted(ports)], out.getvalue()
        assert all(r[:-5] == name.split() for r in mine)
        assert "Looking for Pis Yedili servers" in err.getvalue()

        def pick_tls(prompt: str) -> str:
            """Type the number the list gives our TLS port."""
            for row in out.getvalue().splitlines()[1:]:
                if f"127.0.0.1:{tls} " in row:
                    return row.split()[0]
            return ""

        while True:
            out = io.StringIO()
            chosen = await threads.deferToThread(choose, out, io.StringIO(), pick_tls, 2.0,
                                                 LOOPBACK)
            if chosen == f"tls:127.0.0.1:{tls}" or time.monotonic() > end:
                break
        assert chosen == f"tls:127.0.0.1:{tls}", out.getvalue()
    finally:
        await service.stopService()


# -- the command line, in a network namespace of its own -----------------------------------

@pytest.fixture
def netns() -> Iterator[list[str]]:
    """`ip netns exec NS`: a network namespace with only loopback, up."""
    with network_namespace("pisy-cli", loopback_up=True) as name:
        yield ["ip", "netns", "exec", name]


def command(script: str, module: str) -> list[str]:
    installed = Path(sys.executable).with_name(script)
    return [str(installed)] if installed.exists() else [sys.executable, "-m", module]


def pisyedili(ns: list[str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ns, *command("pisyedili", "pisyedili.client.cli"), *args],
                          input=stdin, capture_output=True, text=True, encoding="utf-8",
                          timeout=DEADLINE, env={**os.environ, "PYTHONIOENCODING": "utf-8"})


def test_pisyedili_discover_lists_a_real_server_and_pisyedili_asks(netns: list[str]) -> None:
    server = subprocess.Popen(
        [*netns, sys.executable, "-c", "from pisyedili.server.service.tap import main; main()",
         "--listen", "tcp:0:interface=127.0.0.1", "--name", "Çay ocağı"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        encoding="utf-8")
    assert server.stdout is not None
    output = Output(server.stdout)
    try:
        output.wait_for("LAN discovery", timeout=DEADLINE)
        seen = output.text
        assert "LAN discovery: announced" in seen, seen
        [port] = {int(p) for p in re.findall(r"port=(\d+)", seen)}

        listed = pisyedili(netns, "--discover")
        for _ in range(3):  # browsing is time-based: a loaded machine may answer late
            if f"127.0.0.1:{port}" in listed.stdout:
                break
            listed = pisyedili(netns, "--discover")
        assert listed.returncode == 0, listed.stderr
        head, row = listed.stdout.splitlines()
        assert head.split() == ["NAME", "ADDRESS", "VERSION", "PROTOCOLS", "TABLES", "TLS"]
        assert row.split() == ["Çay", "ocağı", f"127.0.0.1:{port}", server_version(),
                               ",".join(map(str, SUPPORTED_VERSIONS)), "0", "no"]
        assert "Looking for Pis Yedili servers" in listed.stderr

        asked = pisyedili(netns, stdin="n\n")
        assert asked.returncode == 0, asked.stderr
        assert f"Connect to Çay ocağı at 127.0.0.1:{port}? [Y/n]" in asked.stdout
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=DEADLINE)
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()
    assert server.returncode == 0

    none = pisyedili(netns, "--discover")
    assert none.returncode == 0
    assert none.stdout == "No Pis Yedili server found on the LAN or on this machine.\n"
    lost = pisyedili(netns)
    assert lost.returncode == 1
    assert "pisyedili HOST" in lost.stderr and "pisyedili play" in lost.stderr
