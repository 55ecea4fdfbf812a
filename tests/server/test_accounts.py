"""Accounts over loopback: guests, registering, logging in and out, passwords, login
tokens and the login limits. A real server, real sockets, a real SQLite store; argon2
at its cheapest cost through the explicit setting (never mocked)."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from poll_kit import BACKSTOP, poll_until_async
from twisted.internet import reactor, task
from twisted.internet.defer import Deferred, ensureDeferred
from wireclient import Msg, Server, WireClient

from pisyedili.protocol.codec import frame
from pisyedili.server.people import names
from pisyedili.server.people.accounts import CHEAP, AccountSettings, HashCost, LoginLimits
from pisyedili.server.store import MEMORY, Archive, open_store
from pisyedili.server.store.journal import StoreJournal

PASSWORD = "correct horse battery"
ROOMY_LOGINS = LoginLimits(address_burst=1000, address_rate=1000, account_free=1000)


def archive(path: str = MEMORY) -> Archive:
    return Archive(lambda: open_store(path), reactor)


async def start(limits: LoginLimits = ROOMY_LOGINS, path: str | Path | None = None,
                clock: Any = None, cost: HashCost = CHEAP, **settings: object) -> Server:
    if path is None:
        return await Server.start(clock=clock, archive=archive(), accounts=AccountSettings(
            cost=cost, limits=limits, **settings))  # type: ignore[arg-type]
    return await Server.start(
        archive=archive(str(path)), journal=StoreJournal.open(path, reactor),
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
async def test_the_password_rules_nfc_controls_bidi_and_length(server: Server) -> None:
    guest = await server.connect("Deniz")
    for password, code in (
            (" " * 8, "weak_password"),
            ("s\u0327ifre12", "weak_password"),  # 8 code points typed, 7 characters in NFC
            ("correct\x00horse", "bad_password"),
            ("tab\tinside it", "bad_password"),
            ("abc\u202edef ghi", "bad_password"),  # a right-to-left override
            ("abc\u2066def ghi", "bad_password")):  # an isolate
        refused = await guest.request("register", password=password)
        assert refused["code"] == code, (password, refused)
    # Decomposed at registering, precomposed at login: one password.
    assert (await guest.request("register", password="s\u0327ifre123"))["type"] == "account"
    other = await server.connect("Other")
    assert (await other.request("login", name="Deniz", password="\u015fifre123"))["type"] \
        == "account"
    changed = await other.request("passwd", old="\u015fifre123", new="new\u200fpassword")
    assert changed["code"] == "bad_password"


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
    server = await start(LoginLimits(address_burst=3, address_rate=0.001))
    try:
        _, account = await registered(server, "Deniz")
        guest = await server.connect("Guest")
        codes = [(await guest.request("login", name="Deniz", password=f"guess {n:04}"))
                 for n in range(4)]
        # Registering cost the address one attempt: two guesses, then the limit.
        assert [c["code"] for c in codes] == ["bad_login", "bad_login", "too_many_logins",
                                              "too_many_logins"]
        assert codes[-1]["retry_after"] > 0
        # Even the right password waits; another address does not, nor a login token.
        limited = await guest.request("login", name="Deniz", password=PASSWORD)
        assert limited["code"] == "too_many_logins"
        by_token = await guest.request("login", name="Deniz", token=account["login"])
        assert by_token["type"] == "account"
        elsewhere = await server.connect("Elsewhere", source="127.0.0.2")
        ok = await elsewhere.request("login", name="Deniz", password=PASSWORD)
        assert ok["type"] == "account"
    finally:
        await server.stop()


DELAYS = LoginLimits(address_burst=3, address_rate=0.001, account_free=2, account_delay=10,
                     account_max_delay=40, account_half_life=600)


def answered(d: Deferred[Msg]) -> Msg | None:
    """The answer `d` carries, if it has one yet."""
    got: list[Msg] = []
    d.addCallback(lambda msg: got.append(msg) or msg)  # type: ignore[call-overload, func-returns-value]
    return got[0] if got else None


async def delay_begun(server: Server, count: int = 1) -> None:
    """Until `count` password checks wait out an account's delay on the server's clock:
    the server has read those logins. (A ping behind a login cannot tell: it is
    answered after the login.) Polled on the real reactor, with a backstop."""
    accounts = server.factory.accounts
    assert accounts is not None
    clock = server.factory.clock
    await poll_until_async(
        lambda: sum(due > clock.seconds() for due in accounts._checking.values()) >= count,
        BACKSTOP, lambda: f"{count} checks waiting: {accounts._checking}")


@pytest_twisted.ensureDeferred
async def test_failures_delay_an_accounts_next_check_and_the_owner_still_gets_in() -> None:
    clock = task.Clock()
    server = await start(DELAYS, clock=clock)
    try:
        _, account = await registered(server, "Ali")
        attackers = [await server.connect(f"A{n}", source=f"127.0.0.{n}") for n in range(2, 5)]
        first, second = attackers[0], attackers[1]
        # The first two failures cost no delay; spelt as look-alikes, they count as one
        # account's.
        for attacker, spelt in ((first, "Ali"), (second, "AIi")):  # a capital i for the l
            assert (await attacker.request("login", name=spelt, password="guess"))["code"] \
                == "bad_login"
        # The third waits 10 s (on the server's clock) before its password is checked,
        # and its address may not start another check on the account meanwhile.
        beside = await server.connect("A4 again", source="127.0.0.4")
        third = attackers[2].request("login", name="Ali", password="guess")
        await delay_begun(server)
        again = await beside.request("login", name="Ali", password="guess 2")
        assert again["code"] == "too_many_logins" and again["retry_after"] == 10
        assert answered(third) is None
        # A login token is never held back by others' guesses.
        owner = await server.connect("Owner", source="127.0.0.9")
        by_token = await owner.request("login", name="Ali", token=account["login"])
        assert by_token["type"] == "account"
        assert (await owner.request("logout"))["type"] == "account"
        clock.advance(10)
        assert (await third)["code"] == "bad_login"
        # Three failures: the owner's right password waits 20 s, then gets in; its
        # connection's later requests wait for that answer.
        attempt = owner.request("login", name="Ali", password=PASSWORD)
        await delay_begun(server)
        clock.advance(19)
        ping = owner.request("ping")
        await first.request("ping")  # a round trip on another connection meanwhile
        assert answered(attempt) is None and answered(ping) is None
        clock.advance(1)
        assert (await attempt)["type"] == "account"
        assert (await ping)["type"] == "pong"
        assert [m["type"] for m in owner.received[-2:]] == ["account", "pong"]
        # Failures fade: after an hour (six half-lives) the delay is gone.
        clock.advance(3600)  # the idle connections are closed meanwhile
        late = await server.connect("Late", source="127.0.0.2")
        quick = await late.request("login", name="Ali", password="guess 3")
        assert quick["code"] == "bad_login"
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_an_address_over_its_limit_costs_the_account_nothing() -> None:
    clock = task.Clock()
    server = await start(DELAYS, clock=clock)
    try:
        await registered(server, "Deniz")
        attacker = await server.connect("Attacker", source="127.0.0.2")
        beside = await server.connect("Beside", source="127.0.0.2")
        codes = [(await attacker.request("login", name="Deniz", password=f"guess {n}"))["code"]
                 for n in range(2)]
        third = attacker.request("login", name="Deniz", password="guess 2")  # delayed 10 s
        await delay_begun(server)
        codes += [(await beside.request("login", name="Deniz", password=f"guess {n}"))[
            "code"] for n in range(3, 20)]
        assert codes == ["bad_login"] * 2 + ["too_many_logins"] * 17
        clock.advance(10)
        assert (await third)["code"] == "bad_login"
        # Three failures counted, not twenty: the owner's login waits 20 s, not 40.
        owner = await server.connect("Owner", source="127.0.0.3")
        attempt = owner.request("login", name="Deniz", password=PASSWORD)
        await delay_begun(server)
        clock.advance(20)
        assert (await attempt)["type"] == "account"
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
async def test_a_logged_in_session_resumes_logged_in_after_a_crash(db: str) -> None:
    path = db
    first = await start(path=path)
    try:
        _, account = await registered(first, "Deniz")
    finally:
        journal = first.factory.journal
        assert isinstance(journal, StoreJournal)
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
    lan = await serverFromString(reactor, f"tcp:0:interface={address}").listen(  # type: ignore[no-untyped-call]
        server.factory)
    try:
        _, account = await registered(server, "Deniz")  # over loopback: taken
        client = await connectProtocol(  # type: ignore[no-untyped-call]
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
async def test_two_logins_in_one_write_are_answered_in_turn(server: Server) -> None:
    _, account = await registered(server, "Deniz")
    client = await server.connect("Guest")
    client.send_raw(frame({"type": "login", "name": "Deniz", "password": PASSWORD,
                           "id": 901})
                    + frame({"type": "login", "name": "Deniz", "token": account["login"],
                             "id": 902}))
    first, second = await client.wait_for_id(901), await client.wait_for_id(902)
    # The second is handled once the first is answered: the session is the account's.
    assert first["type"] == "account" and second["code"] == "logged_in"
    assert [m.get("id") for m in client.received if "id" in m][-2:] == [901, 902]


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
        archive=archive(str(path)), journal=StoreJournal.open(path, reactor),
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
async def test_an_account_keyed_by_an_older_folding_keeps_its_name(tmp_path: Path) -> None:
    """Keys stored before width forms were folded ("ｂob" kept as itself) still reserve
    the name once the server folds them: read back, the name's keys are recomputed."""
    path = tmp_path / "server.sqlite3"
    fullwidth = "\uff42ob"  # ｂob
    first = await start(path=path)
    try:
        _, account = await registered(first, fullwidth)
    finally:
        await first.stop()
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE account_keys SET key = ?", (fullwidth,))  # the old key
    conn.close()
    second = await start(path=path)
    try:
        guest = await second.connect("bob")
        assert guest.welcome["name"] == "bob 2"  # reserved by the account
        back = await guest.request("login", name="BOB", token=account["login"])
        assert back["type"] == "account" and back["name"] == fullwidth
    finally:
        await second.stop()


@pytest_twisted.ensureDeferred
async def test_a_password_set_before_nfc_still_logs_in_and_is_hashed_again_as_nfc(
        tmp_path: Path) -> None:
    path = tmp_path / "nfc.sqlite3"
    first = await start(path=path)
    try:
        await registered(first, "Deniz")
    finally:
        await first.stop()
    decomposed = "s\u0327ifre123"  # as an older server hashed it: as typed
    conn = sqlite3.connect(path)
    conn.execute("UPDATE accounts SET password = ?", (CHEAP.hasher().hash(decomposed),))
    conn.commit()
    conn.close()
    second = await start(path=path)
    try:
        guest = await second.connect("Guest")
        assert (await guest.request("login", name="Deniz", password=decomposed))["type"] == \
            "account"
    finally:
        await second.stop()
    conn = sqlite3.connect(path)
    (stored,) = conn.execute("SELECT password FROM accounts").fetchone()
    conn.close()
    assert CHEAP.hasher().verify(stored, "\u015fifre123")


@pytest_twisted.ensureDeferred
async def test_hashes_in_flight_are_bounded_and_the_rest_told_server_busy() -> None:
    # Every check waits 10 s on the server's clock, so that six from six connections
    # (one each: a connection's requests are handled in turn) all want a hash at once.
    clock = task.Clock()
    waits = LoginLimits(address_burst=1000, address_rate=1000, account_free=0,
                        account_delay=10, account_max_delay=10)
    server = await start(waits, clock=clock, hashes=1, hash_queue=2)
    try:
        guests = [await server.connect(f"Guest {n}") for n in range(7)]
        attempts = [guest.request("login", name=f"nobody {n}", password=PASSWORD)
                    for n, guest in enumerate(guests[:6])]
        await delay_begun(server, count=6)
        # Each check asks the store for its name after the delay, and those answers
        # come one by one: a hash begun meanwhile would end and free its place before
        # the last check is admitted. The hashes' thread pool is kept busy until all
        # six were admitted or refused, so none ends in between.
        pool, hold = reactor.getThreadPool(), threading.Event()
        for _ in range(pool.max):
            reactor.callInThread(hold.wait, BACKSTOP)
        try:
            clock.advance(10)
            await poll_until_async(lambda: sum(a.called for a in attempts) == 3, BACKSTOP,
                                   lambda: "three checks refused at once")
        finally:
            hold.set()
        answers = [await attempt for attempt in attempts]
        assert sorted(a["code"] for a in answers) == ["bad_login"] * 3 + ["server_busy"] * 3
        assert all(a["retry_after"] > 0 for a in answers if a["code"] == "server_busy")
        # Once the queue drained, hashing goes on.
        late = guests[6].request("login", name="nobody 9", password=PASSWORD)
        await delay_begun(server)
        clock.advance(10)
        assert (await late)["code"] == "bad_login"
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_the_owner_gets_in_while_others_guess_at_argon2s_real_cost() -> None:
    # The default argon2 cost (64 MiB); small address bursts and short account delays,
    # so the test takes seconds, not the defaults' minutes.
    limits = LoginLimits(address_burst=2, account_delay=0.05, account_max_delay=0.5)
    server = await start(limits, cost=HashCost())
    try:
        _, account = await registered(server, "Deniz")
        attackers = [await server.connect(f"A{n}", source=f"127.0.0.{n}")
                     for n in range(2, 5)]
        stop = False
        seen: list[str] = []

        async def guess(attacker: WireClient) -> None:
            n = 0
            while not stop:
                n += 1
                answer = await attacker.request("login", name="deniz", password=f"guess {n}")
                seen.append(answer["code"])
                if answer["code"] != "bad_login":
                    await task.deferLater(reactor, 0.05)

        attacks = [ensureDeferred(guess(a)) for a in attackers]
        try:
            # Until the account's delay has begun and an address is at its limit.
            await poll_until_async(
                lambda: seen.count("bad_login") >= 5 and "too_many_logins" in seen,
                4 * BACKSTOP, "the account's delay and an address at its limit", 0.05)
            owner = await server.connect("Owner", source="127.0.0.9")
            owner.send({"type": "login", "name": "Deniz", "password": PASSWORD, "id": 900})
            # A backstop only: it waits for the delay and the hashes ahead of it.
            by_password = await owner.wait(lambda m: m.get("id") == 900, timeout=60)
            assert by_password["type"] == "account", by_password
            await owner.request("logout")
            by_token = await owner.request("login", name="Deniz", token=account["login"])
            assert by_token["type"] == "account", by_token
        finally:
            stop = True
            for attack in attacks:
                await attack
        assert "too_many_logins" in seen  # the addresses were held back meanwhile
        assert "server_busy" not in seen  # a bounded queue, never full at this rate
    finally:
        await server.stop()


def _peak_rss_mib(pid: int) -> float:
    """The process's peak resident memory so far (VmHWM), in MiB."""
    status = Path(f"/proc/{pid}/status").read_text(encoding="ascii")
    (kib,) = [int(line.split()[1]) for line in status.splitlines()
              if line.startswith("VmHWM:")]
    return kib / 1024


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="reads /proc")
@pytest_twisted.ensureDeferred
async def test_a_flood_of_logins_keeps_a_real_servers_memory_flat(tmp_path: Path) -> None:
    import subprocess
    import sys

    from process_output import Output
    from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol

    from pisyedili.protocol.version import FEATURES, PROTOCOL_VERSION

    proc = subprocess.Popen(
        [sys.executable, "-c", "from pisyedili.server.service.tap import main; main()",
         "--listen", "tcp:0:interface=127.0.0.1", "--db", str(tmp_path / "db.sqlite3"),
         "--no-announce"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        encoding="utf-8")
    assert proc.stdout is not None
    clients: list[WireClient] = []

    async def connect(source: str, name: str) -> WireClient:
        client = await connectProtocol(TCP4ClientEndpoint(  # type: ignore[no-untyped-call]
            reactor, "127.0.0.1", port, bindAddress=(source, 0)), WireClient())
        clients.append(client)
        welcome = await client.request("hello", protocol=PROTOCOL_VERSION, name=name,
                                       features=sorted(FEATURES))
        assert welcome["type"] == "welcome", welcome
        return client  # type: ignore[no-any-return]

    try:
        port = int(Output(proc.stdout).wait_for(r"port=(\d+)").group(1))
        owner = await connect("127.0.0.1", "Deniz")
        _, account = owner, await owner.request("register", password=PASSWORD)
        assert account["type"] == "account", account
        before = _peak_rss_mib(proc.pid)
        # 20 addresses, 3 password logins each, all at once, on names nobody has: more
        # than the hashing queue holds at every moment until the last round.
        floods = [await connect(f"127.0.1.{n}", f"Flood {n}") for n in range(1, 21)]
        for n, flood in enumerate(floods):
            for k in range(3):
                flood.send({"type": "login", "name": f"nobody {n} {k}", "password": PASSWORD,
                            "id": 100 + k})
        # Waited on with a backstop only: on a busy machine the queue drains slowly.
        answers = [flood.wait(lambda m, k=k: m.get("id") == 100 + k, 120, consume=False)  # type: ignore[misc]
                   for flood in floods for k in range(3)]
        # The owner, meanwhile, by password: queued, or told to come back shortly (busy,
        # or, once busy answers spent its address's attempts, too many logins). Each
        # flooding connection's next login waits for its last one's answer, so the
        # queue stays full until the flood is over.
        owner_again = await connect("127.0.0.2", "Owner")
        for n in range(60):  # a backstop: the queue is short, each wait is long
            owner_again.send({"type": "login", "name": "Deniz", "password": PASSWORD,
                              "id": 1000 + n})
            got = await owner_again.wait(lambda m, n=n: m.get("id") == 1000 + n, timeout=60)  # type: ignore[misc]
            if got.get("code") not in ("server_busy", "too_many_logins"):
                break
            # Real time, as a client must: the server said when to ask again.
            await task.deferLater(reactor, got["retry_after"])
        assert got["type"] == "account", got
        codes = [(await a)["code"] for a in answers]
        assert set(codes) <= {"bad_login", "server_busy"} and "server_busy" in codes
        grown = _peak_rss_mib(proc.pid) - before
        # Two 64 MiB hashes at a time, and allocator slack: far from ten at a time.
        assert grown < 256, f"peak memory grew by {grown:.0f} MiB"
    finally:
        for client in clients:
            await client.close()
        proc.terminate()
        proc.wait(timeout=60)


@pytest_twisted.ensureDeferred
async def test_a_rated_table_is_still_rated_after_a_crash(db: str) -> None:
    path = db
    first = await start(path=path)
    try:
        host, account = await registered(first, "Deniz")
        snap = await host.ok("create_table", rules="classic", seats=2, rated=True)
        assert snap["table"]["rated"] is True
    finally:
        journal = first.factory.journal
        assert isinstance(journal, StoreJournal)
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
