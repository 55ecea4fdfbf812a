"""LAN discovery, the server's side: what it announces, with real zeroconf on loopback.

Every zeroconf here is bound to 127.0.0.1 (or runs in a network namespace made for the
test, with only loopback), so no packet leaves this machine. Other servers may announce
on this loopback meanwhile (another test run), so each test looks for its own ports and
names only. Browsing is time-based by nature: the tests poll with a deadline.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from discovery_kit import DEADLINE, LOOPBACK, PEM, announced, network_namespace
from process_output import Output
from twisted.internet import reactor, threads
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol, serverFromString
from twisted.internet.protocol import Factory, Protocol
from wireclient import WireClient

from pisyedili.client.discovery import Found, browse
from pisyedili.protocol.version import PROTOCOL_VERSION, SUPPORTED_VERSIONS
from pisyedili.server.net.hello import server_version
from pisyedili.server.service import tap
from pisyedili.server.service.assembly import make_factory
from pisyedili.server.service.discovery import (
    Announcer,
    addresses_for,
    instance_base,
    listing_for,
    txt,
)
from pisyedili.server.service.server import ServerService


def machine(*addresses: str) -> Callable[[], list[Any]]:
    """A machine with these interface addresses (for the address rules alone)."""
    return lambda: [ipaddress.ip_address(a) for a in addresses]


async def browse_until(ports: set[int], check: Callable[[list[Found]], bool],
                       deadline: float = DEADLINE) -> list[Found]:
    """Browse loopback (in a thread: the reactor keeps serving) until what is found on
    `ports` passes `check`; returns that."""
    end = time.monotonic() + deadline
    while True:
        found: list[Found] = await threads.deferToThread(browse, 2.0, interfaces=LOOPBACK)
        mine = [f for f in found if f.address == "127.0.0.1" and f.port in ports]
        if check(mine) or time.monotonic() > end:
            return mine


# -- what is announced, without a network --------------------------------------------

def test_a_port_bound_to_one_address_announces_that_address_only() -> None:
    lan = machine("127.0.0.1", "192.0.2.7", "::1")
    assert addresses_for("127.0.0.1", False, lan) == ("127.0.0.1",)
    assert addresses_for("192.0.2.7", False, lan) == ("192.0.2.7",)
    assert addresses_for("::ffff:192.0.2.7", False, lan) == ("192.0.2.7",)


def test_a_wildcard_port_announces_every_address_but_loopback_unless_alone() -> None:
    lan = machine("127.0.0.1", "192.0.2.7", "198.51.100.3", "::1", "2001:db8::5")
    assert addresses_for("0.0.0.0", False, lan) == ("192.0.2.7", "198.51.100.3")
    assert addresses_for("::", False, lan) == ("2001:db8::5",)
    assert addresses_for("::", True, lan) == ("192.0.2.7", "198.51.100.3", "2001:db8::5")
    assert addresses_for("0.0.0.0", False, machine("127.0.0.1", "::1")) == ("127.0.0.1",)


def test_instance_names_are_one_dns_label() -> None:
    assert instance_base("Friday cards") == "Friday cards"
    assert instance_base("cards.example\t\n") == "cards-example"
    assert len(instance_base("Çay ocağı " * 20).encode()) <= 48
    assert instance_base("\x00\x01") == "Pis Yedili"


def test_txt_records() -> None:
    records = txt("Kahve", "1.2.3", True, 4)
    assert records == {"txtvers": "1", "name": "Kahve", "version": "1.2.3",
                       "protocol": ",".join(map(str, SUPPORTED_VERSIONS)), "tls": "1",
                       "tables": "4"}
    assert len(txt("ğ" * 300, "1", False, 0)["name"].encode()) <= 240


@pytest_twisted.ensureDeferred
async def test_listings_of_real_ports(tmp_path: Path) -> None:
    factory = Factory.forProtocol(Protocol)
    ports = [await serverFromString(reactor, desc).listen(factory) for desc in (  # type: ignore[no-untyped-call]
        "tcp:0:interface=127.0.0.1", f"ssl:0:interface=127.0.0.1:privateKey={PEM}",
        f"unix:{tmp_path / 's.sock'}")]
    try:
        plain, tls, unix = (listing_for(p) for p in ports)
        assert plain is not None and tls is not None and unix is None
        assert (plain.port, plain.tls, plain.addresses, plain.interfaces) == (
            ports[0].getHost().port, False, ("127.0.0.1",), ("127.0.0.1",))
        assert tls.tls and tls.addresses == ("127.0.0.1",)
    finally:
        for p in ports:
            await p.stopListening()


def test_announcing_is_on_by_default_and_no_announce_turns_it_off() -> None:
    def service(*argv: str) -> ServerService:
        options = tap.Options()
        options.parseOptions(["--listen", "tcp:0:interface=127.0.0.1", "--db", ":memory:",  # type: ignore[no-untyped-call]
                              *argv])
        return tap.makeService(options)

    assert service().announcer is not None
    assert service("--no-announce").announcer is None
    assert "--no-announce" in str(tap.Options())


# -- a real server, a real browser ------------------------------------------------------

@pytest_twisted.ensureDeferred
async def test_a_server_is_found_with_its_txt_its_tables_update_and_it_goes_on_stop() -> None:
    name = f"Kahve.evi {os.getpid()}"  # unique: another run may announce meanwhile
    factory = make_factory(reactor, name=name)
    service = ServerService(
        factory, ["tcp:0:interface=127.0.0.1", f"ssl:0:interface=127.0.0.1:privateKey={PEM}"],
        reactor, announce=True)
    # The real announcer, checking the table count more often than the default.
    service.announcer = Announcer(reactor, factory.name, server_version(),
                                  lambda: len(factory.lobby.tables()), interval=0.5)
    client: WireClient | None = None
    try:
        await announced(service)
        [plain] = [p.getHost().port for p in service.ports if p.factory is factory]
        [tls] = [p.getHost().port for p in service.ports if p.factory is not factory]
        instance = f"Kahve-evi {os.getpid()}"
        assert sorted(service.announcer.instances) == [instance, f"{instance} (port {tls})"]

        found = await browse_until({plain, tls}, lambda f: len(f) == 2)
        by_port = {f.port: f for f in found}
        assert set(by_port) == {plain, tls}, found
        for f in found:
            assert (f.name, f.address, f.version, f.protocols, f.tables) == (
                name, "127.0.0.1", server_version(), SUPPORTED_VERSIONS, 0)
        assert not by_port[plain].tls and by_port[tls].tls
        assert by_port[plain].instance == instance

        client = await connectProtocol(TCP4ClientEndpoint(reactor, "127.0.0.1", plain),  # type: ignore[no-untyped-call]
                                       WireClient())
        await client.request("hello", protocol=PROTOCOL_VERSION, name="ann")
        await client.ok("create_table", rules="classic", seats=2)
        found = await browse_until({plain, tls}, lambda f: [x.tables for x in f] == [1, 1])
        assert [x.tables for x in found] == [1, 1], found

        await service.stopService()
        assert await browse_until({plain, tls}, lambda f: not f) == []
    finally:
        if service.running:
            await service.stopService()
        if client is not None:
            await client.close()
        for session in service.factory.sessions.each():  # no expiry left on the reactor
            service.factory.sessions.forget(session)


@pytest_twisted.ensureDeferred
async def test_stopping_while_still_announcing_withdraws_the_service() -> None:
    factory = make_factory(reactor, name="Hasty")
    service = ServerService(factory, ["tcp:0:interface=127.0.0.1"], reactor,
                            announce=True)
    service.startService()
    assert service.ready is not None
    await service.ready
    port = service.ports[0].getHost().port
    await service.stopService()  # zeroconf may still be probing: stop waits, then goodbyes
    assert service.announced is not None
    await service.announced
    found = await threads.deferToThread(browse, 2.0, interfaces=LOOPBACK)
    assert [f for f in found if f.port == port] == []


# -- announcing fails: one warning, the server serves on ----------------------------------

@pytest.fixture
def netns() -> Iterator[str]:
    """A network namespace of the test's own, its loopback down (so mDNS cannot work)."""
    with network_namespace("pisy-srv", loopback_up=False) as name:
        yield name


def test_a_server_that_cannot_announce_warns_once_and_serves(netns: str) -> None:
    server = subprocess.Popen(
        ["ip", "netns", "exec", netns, sys.executable, "-c",
         "from pisyedili.server.service.tap import main; main()",
         "--listen", "tcp:0:interface=127.0.0.1", "--log-format", "json", "--name", "Mute"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        encoding="utf-8")
    assert server.stdout is not None
    output = Output(server.stdout)
    try:
        output.wait_for("LAN discovery", timeout=DEADLINE)
        lines = list(output.seen)
        records = [json.loads(r) for r in lines if r.strip()]
        [port] = {int(m) for r in lines for m in re.findall(r"port=(\d+)", r)}
        [warning] = [r for r in records if "LAN discovery" in r["message"]]
        assert warning["level"] == "warn" and "cannot announce" in warning["message"]
        assert server.poll() is None  # still running

        subprocess.run(["ip", "netns", "exec", netns, "ip", "link", "set", "lo", "up"],
                       check=True)
        hello = subprocess.run(
            ["ip", "netns", "exec", netns, sys.executable, "-c", HELLO, str(port)],
            capture_output=True, text=True, timeout=DEADLINE)
        assert hello.stdout.strip() == "welcome Mute", hello.stderr

        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=DEADLINE) == 0
        output.rest(timeout=DEADLINE)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    records = [json.loads(r) for r in output.seen if r.strip()]  # every line is JSON: no raw stderr
    assert len([r for r in records if r["level"] == "warn"]) == 1, records
    assert not [r for r in records if "Traceback" in json.dumps(r)]


HELLO = """
import socket, struct, sys
from pisyedili.protocol.codec import decode, frame
from pisyedili.protocol.limits import SERVER_FRAME_LIMITS
from pisyedili.protocol.version import PROTOCOL_VERSION
with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10) as s:
    s.sendall(frame({"type": "hello", "protocol": PROTOCOL_VERSION, "name": "ann", "id": 1}))
    (size,) = struct.unpack(">I", s.recv(4, socket.MSG_WAITALL))
    msg = decode(s.recv(size, socket.MSG_WAITALL), SERVER_FRAME_LIMITS)
    print(msg["type"], msg["server"])
"""
