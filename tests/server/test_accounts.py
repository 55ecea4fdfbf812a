"""Accounts over loopback: guests, registering, logging in and out, passwords, login
tokens and the login limits. A real server, real sockets, a real SQLite store; argon2
at its cheapest cost through the explicit setting (never mocked)."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_twisted
from twisted.internet import reactor
from wireclient import Msg, Server, WireClient

from pisyedili.server import names
from pisyedili.server.accounts import CHEAP, AccountSettings, HashCost, LoginLimits
from pisyedili.server.journal import SqliteJournal
from pisyedili.server.store import MEMORY, Archive, SqliteStore

PASSWORD = "correct horse battery"
ROOMY_LOGINS = LoginLimits(address_burst=1000, address_rate=1000, account_burst=1000,
                           account_rate=1000)


def archive(path: str = MEMORY) -> Archive:
    return Archive(lambda: SqliteStore(path), reactor)


async def start(limits: LoginLimits = ROOMY_LOGINS, path: Path | None = None,
                **settings: object) -> Server:
    if path is None:
        return await Server.start(archive=archive(), accounts=AccountSettings(
            cost=CHEAP, limits=limits, **settings))  # type: ignore[arg-type]
    return await Server.start(
        archive=archive(str(path)), journal=SqliteJournal(path, reactor),
        community_from=str(path),
        accounts=AccountSettings(cost=CHEAP, limits=limits, **settings))  # type: ignore[arg-type]


@pytest_twisted.async_yield_fixture
async def server() -> AsyncIterator[Server]:
    started = await start()
    yield started
    await started.stop()


async def registered(server: Server, name: str) -> tuple[WireClient, Msg]:
    client = await server.connect(name)
    account = await client.request("register", password=PASSWORD)
    assert account["type"] == "account", account
    return client, account


@pytest_twisted.ensureDeferred
async def test_a_guest_plays_under_a_typed_name_and_registers_it(server: Server) -> None:
    guest = await server.connect("Deniz")
    assert guest.welcome["name"] == "Deniz"
    created = await guest.ok("create_table", rules="classic", seats=2)  # a guest plays
    assert created["type"] == "table"
    await guest.ok("leave_table")
    account = await guest.request("register", password=PASSWORD)
    assert account["type"] == "account"
    assert account["name"] == "Deniz" and account["registered"] is True
    assert account["player"] == guest.welcome["player"]
    assert account["operator"] is False
    assert len(account["login"]) >= 32 and account["login"] != account["token"]


@pytest_twisted.ensureDeferred
async def test_a_registered_name_and_its_look_alikes_are_refused_to_guests(
        server: Server) -> None:
    owner, _ = await registered(server, "Deniz")
    await owner.close()  # the name stays reserved with nobody playing under it
    await server.dropped(owner)
    for asked in ("Deniz", "DENIZ", "Dеniz"):  # the last one's 'е' is Cyrillic
        guest = await server.connect(asked)
        given = guest.welcome["name"]
        assert given != asked and not set(names.keys(given)) & {"deniz"}, given
    ali, _ = await registered(server, "Ali")
    await ali.close()
    await server.dropped(ali)
    imitation = await server.connect("AIi")  # a capital i for the l
    assert imitation.welcome["name"] != "AIi"
    assert (await imitation.request("login", name="AIi", password=PASSWORD))["name"] == "Ali"


@pytest_twisted.ensureDeferred
async def test_login_by_password_takes_over_the_accounts_session(server: Server) -> None:
    first, account = await registered(server, "Deniz")
    second = await server.connect("Someone")
    answer = await second.request("login", name="deniz", password=PASSWORD)
    assert answer["type"] == "account", answer
    assert answer["name"] == "Deniz" and answer["registered"] is True
    assert answer["player"] == account["player"]  # the account's session, taken over
    assert answer["token"] != account["token"]
    await first.wait_type("replaced")
    # The new resume token resumes it; the old one is dead.
    resumed = await server.connect("x", token=answer["token"])
    assert resumed.welcome["resumed"] is True and resumed.welcome["registered"] is True
    stale = await server.connect()
    refused = await stale.request("hello", protocol=2, name="x", token=account["token"])
    assert refused["code"] == "bad_token"


@pytest_twisted.ensureDeferred
async def test_a_wrong_password_or_an_unknown_name_is_bad_login(server: Server) -> None:
    await registered(server, "Deniz")
    guest = await server.connect("Guest")
    for name, password in (("Deniz", "not the password"), ("Nobody", PASSWORD)):
        refused = await guest.request("login", name=name, password=password)
        assert refused["type"] == "error" and refused["code"] == "bad_login", refused
        assert PASSWORD not in refused["message"]
    assert guest.welcome["name"] == "Guest"
    ok = await guest.request("login", name="Deniz", password=PASSWORD)
    assert ok["type"] == "account"


@pytest_twisted.ensureDeferred
async def test_short_passwords_and_double_registration_are_refused(server: Server) -> None:
    guest = await server.connect("Deniz")
    short = await guest.request("register", password="1234567")
    assert (short["code"], short["limit"]) == ("weak_password", 8)
    await guest.request("register", password=PASSWORD)
    again = await guest.request("register", password=PASSWORD)
    assert again["code"] == "logged_in"


@pytest_twisted.ensureDeferred
async def test_login_tokens_log_in_and_logout_revokes_them(server: Server) -> None:
    first, account = await registered(server, "Deniz")
    logged_out = await first.request("logout", token=account["login"])
    assert logged_out["type"] == "account" and logged_out["registered"] is False
    assert logged_out["name"] != "Deniz"  # back to a guest: the name stays reserved
    again = await first.request("logout")
    assert again["code"] == "not_logged_in"
    refused = await first.request("login", name="Deniz", token=account["login"])
    assert refused["code"] == "bad_login"
    by_password = await first.request("login", name="Deniz", password=PASSWORD)
    assert by_password["name"] == "Deniz"
    other = await server.connect("Other")
    by_token = await other.request("login", name="Deniz", token=by_password["login"])
    assert by_token["type"] == "account" and by_token["login"] == by_password["login"]


@pytest_twisted.ensureDeferred
async def test_logout_everywhere_and_passwd_revoke_every_login(server: Server) -> None:
    client, account = await registered(server, "Deniz")
    laptop = (await (await server.connect("b")).request("login", name="Deniz",
                                                          password=PASSWORD))["login"]
    client = server.clients[-1]
    changed = await client.request("passwd", old="wrong password", new="staple grammar")
    assert changed["code"] == "bad_login"
    changed = await client.request("passwd", old=PASSWORD, new="staple grammar")
    assert changed["type"] == "account" and changed["login"] not in (laptop,
                                                                     account["login"])
    probe = await server.connect("probe")
    for token in (laptop, account["login"]):
        assert (await probe.request("login", name="Deniz", token=token))["code"] == \
            "bad_login"
    assert (await probe.request("login", name="Deniz", password=PASSWORD))["code"] == \
        "bad_login"
    ok = await probe.request("login", name="Deniz", password="staple grammar")
    assert ok["type"] == "account"
    await probe.request("logout", everywhere=True)
    refused = await probe.request("login", name="Deniz", token=changed["login"])
    assert refused["code"] == "bad_login"


@pytest_twisted.ensureDeferred
async def test_login_attempts_are_limited_per_address() -> None:
    server = await start(LoginLimits(address_burst=3, address_rate=0.001,
                                     account_burst=1000, account_rate=1000))
    try:
        await registered(server, "Deniz")
        guest = await server.connect("Guest")
        codes = [(await guest.request("login", name="Deniz", password=f"guess {n:04}"))
                 for n in range(4)]
        # Registering cost the address one attempt: two guesses, then the limit.
        assert [c["code"] for c in codes] == ["bad_login", "bad_login", "too_many_logins",
                                              "too_many_logins"]
        assert codes[-1]["retry_after"] > 0
        # Even the right password waits; another address does not.
        limited = await guest.request("login", name="Deniz", password=PASSWORD)
        assert limited["code"] == "too_many_logins"
        elsewhere = await server.connect("Elsewhere", source="127.0.0.2")
        ok = await elsewhere.request("login", name="Deniz", password=PASSWORD)
        assert ok["type"] == "account"
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_login_attempts_are_limited_per_account_across_addresses() -> None:
    server = await start(LoginLimits(address_burst=1000, address_rate=1000,
                                     account_burst=2, account_rate=0.001))
    try:
        await registered(server, "Deniz")
        results = []
        for n in range(2, 6):
            guest = await server.connect(f"Guest {n}", source=f"127.0.0.{n}")
            results.append(await guest.request("login", name="deniz", password=f"guess {n}"))
        assert [r["code"] for r in results] == ["bad_login", "bad_login", "too_many_logins",
                                                "too_many_logins"]
        # Another account is not held back by this one's guesses.
        other = await server.connect("Ali", source="127.0.0.9")
        assert (await other.request("register", password=PASSWORD))["type"] == "account"
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_accounts_need_the_feature_and_a_store() -> None:
    plain = await Server.start()
    try:
        client = await plain.connect("Deniz")
        refused = await client.request("register", password=PASSWORD)
        assert refused["code"] == "accounts_unavailable"
    finally:
        await plain.stop()
    server = await start()
    try:
        client = await server.connect("Deniz", features=["chat"])
        refused = await client.request("register", password=PASSWORD)
        assert refused["code"] == "feature_not_negotiated"
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_tls_only_logins_still_take_loopback() -> None:
    strict = await start(tls_required=True)
    try:
        guest = await strict.connect("Deniz")  # loopback: nothing crosses a network
        assert (await guest.request("register", password=PASSWORD))["type"] == "account"
    finally:
        await strict.stop()


@pytest_twisted.ensureDeferred
async def test_accounts_and_logins_survive_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "server.sqlite3"
    first = await start(path=path)
    try:
        _, account = await registered(first, "Deniz")
    finally:
        await first.stop()
    second = await start(path=path)
    try:
        guest = await second.connect("Deniz")
        assert guest.welcome["name"] != "Deniz"  # still reserved, read back at start
        back = await guest.request("login", name="Deniz", token=account["login"])
        assert back["type"] == "account" and back["name"] == "Deniz"
        conn = sqlite3.connect(path)
        (stored,) = conn.execute("SELECT password FROM accounts").fetchone()
        conn.close()
        assert stored.startswith("$argon2id$") and PASSWORD not in stored
    finally:
        await second.stop()


@pytest_twisted.ensureDeferred
async def test_a_logged_in_session_resumes_logged_in_after_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "crash.sqlite3"
    first = await start(path=path)
    try:
        _, account = await registered(first, "Deniz")
    finally:
        journal = first.factory.journal
        assert isinstance(journal, SqliteJournal)
        journal.close()  # as a killed process: nothing more is written
        await first.stop()
    second = await start(path=path)
    try:
        back = await second.connect("whatever", token=account["token"])
        assert back.welcome["resumed"] is True and back.welcome["registered"] is True
        assert back.welcome["name"] == "Deniz"
        again = await back.request("register", password=PASSWORD)
        assert again["code"] == "logged_in"  # the session is still the account's
    finally:
        await second.stop()


def _lan_address() -> str | None:
    """An IPv4 address of this machine that is not loopback, if it has one."""
    import ifaddr

    for adapter in ifaddr.get_adapters():
        for ip in adapter.ips:
            if isinstance(ip.ip, str) and not ip.ip.startswith("127."):
                return ip.ip
    return None


@pytest_twisted.ensureDeferred
async def test_tls_only_logins_refuse_passwords_over_plain_tcp_from_the_network() -> None:
    from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol, serverFromString

    from pisyedili.protocol.version import FEATURES

    address = _lan_address()
    if address is None:
        pytest.skip("this machine has no non-loopback IPv4 address")
    server = await start(tls_required=True)
    lan = await serverFromString(reactor, f"tcp:0:interface={address}").listen(
        server.factory)
    try:
        _, account = await registered(server, "Deniz")  # over loopback: taken
        client = await connectProtocol(
            TCP4ClientEndpoint(reactor, address, lan.getHost().port), WireClient())
        server.clients.append(client)
        welcome = await client.request("hello", protocol=2, name="Remote",
                                       features=sorted(FEATURES))
        assert welcome["type"] == "welcome"
        for kind, fields in (("register", {"password": PASSWORD}),
                             ("login", {"name": "Deniz", "password": PASSWORD})):
            refused = await client.request(kind, **fields)
            assert refused["code"] == "tls_required", refused
        by_token = await client.request("login", name="Deniz", token=account["login"])
        assert by_token["type"] == "account"  # a token is no password
        refused = await client.request("passwd", old=PASSWORD, new="staple grammar")
        assert refused["code"] == "tls_required"
    finally:
        await server.stop()
        await lan.stopListening()


@pytest_twisted.ensureDeferred
async def test_two_logins_at_once_on_one_connection_get_one_answer_each(
        server: Server) -> None:
    await registered(server, "Deniz")
    client = await server.connect("Guest")
    first = client.request("login", name="Deniz", password=PASSWORD)
    second = client.request("login", name="Deniz", password=PASSWORD)
    answers = sorted(a.get("code", a["type"]) for a in [await first, await second])
    assert answers == ["account", "logged_in"]


@pytest_twisted.ensureDeferred
async def test_a_password_hashed_at_another_cost_is_hashed_again_at_login(
        tmp_path: Path) -> None:
    path = tmp_path / "cost.sqlite3"
    first = await start(path=path)
    try:
        await registered(first, "Deniz")
    finally:
        await first.stop()
    dearer = HashCost(time_cost=2, memory_cost=16, parallelism=1)
    second = await Server.start(
        archive=archive(str(path)), journal=SqliteJournal(path, reactor),
        community_from=str(path), accounts=AccountSettings(cost=dearer, limits=ROOMY_LOGINS))
    try:
        guest = await second.connect("Guest")
        assert (await guest.request("login", name="Deniz", password=PASSWORD))["type"] == \
            "account"
    finally:
        await second.stop()
    conn = sqlite3.connect(path)
    (stored,) = conn.execute("SELECT password FROM accounts").fetchone()
    conn.close()
    assert "$m=16,t=2,p=1$" in stored and not dearer.hasher().check_needs_rehash(stored)


@pytest_twisted.ensureDeferred
async def test_a_rated_table_is_still_rated_after_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "rated.sqlite3"
    first = await start(path=path)
    try:
        host, account = await registered(first, "Deniz")
        snap = await host.ok("create_table", rules="classic", seats=2, rated=True)
        assert snap["table"]["rated"] is True
    finally:
        journal = first.factory.journal
        assert isinstance(journal, SqliteJournal)
        journal.close()
        await first.stop()
    second = await start(path=path)
    try:
        back = await second.connect("whatever", token=account["token"])
        again = await back.wait(lambda m: m["type"] == "table")
        assert again["table"]["id"] == snap["table"]["id"] and again["table"]["rated"] is True
        lobby = await back.request("lobby_subscribe")
        assert [t.get("rated") for t in lobby["tables"]] == [True]
    finally:
        await second.stop()
