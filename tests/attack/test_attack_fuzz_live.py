"""Fuzzing a live server: hypothesis-made frames and request sequences, over loopback
TCP, against a real server with a real SQLite store and journal.

Each example opens a few connections and interleaves on them valid maps with wrong
types, integers at msgpack's 64-bit edges, deep nesting, unknown fields and types,
binary where strings go, raw bodies, and requests out of order (moves before `hello`,
table requests at no table, `start` before `sit`), then checks what the protocol
promises: every request with an id gets exactly one reply, in the order of the
requests, or the connection ends on a documented closing error; nothing is logged as a
failure or an error; and a control table, whose player moves after every example,
plays on.
"""

from __future__ import annotations

import itertools
import os
import struct
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgpack
import pytest_twisted
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from twisted.internet import reactor, threads
from twisted.internet.defer import ensureDeferred
from twisted.internet.task import deferLater
from twisted.logger import LogEvent, LogLevel, formatEvent, globalLogPublisher
from wireclient import Msg, Server, WireClient, offers_moves

from pisyedili.protocol.codec import decode, refused_id
from pisyedili.protocol.errors import ERRORS, ProtocolError
from pisyedili.protocol.limits import CLIENT_FRAME_LIMITS, MAX_CLIENT_FRAME
from pisyedili.protocol.schema import MESSAGES, Direction
from pisyedili.protocol.version import FEATURES, PROTOCOL_VERSION
from pisyedili.server.net.limits import ServerLimits
from pisyedili.server.people.accounts import CHEAP, AccountSettings, LoginLimits
from pisyedili.server.store import Archive
from pisyedili.server.store.journal import StoreJournal
from pisyedili.server.store.sqlite import SqliteStore
from pisyedili.server.table.core import TableSettings

EXAMPLES = int(os.environ.get("PISYEDILI_FUZZ_EXAMPLES", "200"))
"""Examples per run: 10-30 s on a two-core machine, busy or not (a longer hunt sets
the variable; docs/bench.md has one of 2000)."""
SETTLE = 10.0
"""Seconds a connection may take to answer everything or close: a backstop."""
FUZZ_LIMITS = ServerLimits(rate=10_000, burst=10_000, max_per_address=1000,
                           max_sessions_per_address=100_000,
                           max_tables_per_address=100_000, max_tables_total=100_000)
FUZZ_TABLES = TableSettings(turn_seconds=0, grace_seconds=1, bot_delay=0, deal_pause=0)
"""A short grace, so the tables and sessions the fuzz leaves behind come and go."""
ROOMY_LOGINS = LoginLimits(address_burst=1000, address_rate=1000, account_free=1000)

REQUESTS = sorted(t for (d, t) in MESSAGES if d is Direction.TO_SERVER)
SERVER_TYPES = sorted(t for (d, t) in MESSAGES if d is Direction.TO_CLIENT)
FIELDS = {t: [f.name for f in MESSAGES[(Direction.TO_SERVER, t)].fields if f.name != "id"]
          for t in REQUESTS}
CLOSING = {code for code, spec in ERRORS.items() if spec.closes} | {"rate_limited"}
"""Codes a connection may end on (a flood is closed with `rate_limited`)."""

Plan = list[tuple[int, bool, list[tuple[int, Any]]]]
"""One example: [(connections, any hello, [(connection, frame)])]."""

FIRST_ID = 10**15
"""The fuzz's own request ids count from here, so that the ids of raw bodies (random,
small) do not pass for them."""

TOKENS: list[str] = []
"""Tokens the server handed out in earlier examples, so that `hello` resumes (and
takes over) real sessions."""


class Token:
    """A placeholder for a token of `TOKENS`, resolved when the frame is sent."""

    def __init__(self, index: int) -> None:
        self.index = index

    def __repr__(self) -> str:
        return f"Token({self.index})"


# -- strategies ---------------------------------------------------------------------------

EDGE_INTS = [0, -1, 2**31, 2**53, 2**53 + 1, 2**63 - 1, 2**63, 2**64 - 1, -(2**63),
             -(2**31) - 1]
_leaf = st.one_of(
    st.none(), st.booleans(), st.sampled_from(EDGE_INTS),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=24),
    st.binary(max_size=24))
hostile = st.recursive(
    _leaf, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                   st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=12)
"""Any value: wrong types, 64-bit edges, NaN, binary, nesting (deep or not)."""


def _deep(depth: int) -> Any:
    value: Any = 1
    for i in range(depth):
        value = [value] if i % 2 else {"x": value}
    return value


deep = st.integers(min_value=4, max_value=40).map(_deep)
cards = st.sampled_from(["7h", "Jh", "10d", "Ac", "2s", "Kd", "tc", "1x", "", "7H"])
moves = st.one_of(
    st.fixed_dictionaries({"kind": st.just("play"), "card": cards},
                          optional={"suit": st.sampled_from(["c", "d", "h", "s", "x"])}),
    st.fixed_dictionaries({"kind": st.sampled_from(["draw", "pass", "fly"])}),
    st.fixed_dictionaries({"kind": st.just("pick"), "position": st.integers(-2, 60)}),
)
texts = st.one_of(st.sampled_from(["", " ", "Ayşe", "bot (easy)", "AYŞE", "x" * 30]),
                  st.text(max_size=30))
small = st.one_of(st.integers(min_value=-2, max_value=60), st.sampled_from(EDGE_INTS))
PLAUSIBLE: dict[str, st.SearchStrategy[Any]] = {
    "protocol": st.sampled_from([PROTOCOL_VERSION, PROTOCOL_VERSION, 1, 3]),
    "name": texts,
    "token": st.one_of(st.integers(0, 50).map(Token), st.text(max_size=40)),
    "client": texts, "version": texts,
    "features": st.lists(st.sampled_from([*sorted(FEATURES), "teleport"]), max_size=6),
    "rules": st.sampled_from(["classic", "cardiva", "Classic", ""]),
    "seats": st.integers(-1, 7),
    "options": st.fixed_dictionaries({}, optional={
        "match_end": st.sampled_from(["deals:1", "points:5", "deals:0", "deals:101", "x"]),
        "turn_seconds": st.sampled_from([0, 1, 5, -1, 10**9]),
        "ten": st.sampled_from(["reverse", "skip", "x"]),
        "decks": st.integers(0, 3), "teleport": st.booleans()}),
    "table": st.integers(0, 30), "match": st.integers(0, 30), "code": texts,
    "seat": st.integers(-1, 6), "level": st.sampled_from(["easy", "medium", "x"]),
    "move": moves, "text": texts, "scope": st.sampled_from(["table", "lobby", "x"]),
    "of": st.sampled_from(["mine", "player", "recent", "x"]),
    "offset": small, "limit": small, "deal": small, "from": small, "minutes": small,
    "password": texts, "old": texts, "new": texts, "reason": texts,
    "network": st.sampled_from(["10.0.0.0/8", "::1", "300.1.1.1", "x"]),
}
_booleans = {"ready", "agree", "private", "rated", "spectate", "everywhere"}


def field_value(name: str) -> st.SearchStrategy[Any]:
    plausible = st.booleans() if name in _booleans else PLAUSIBLE.get(name, texts)
    return st.one_of(plausible, plausible, plausible, hostile, deep)


@st.composite
def request(draw: st.DrawFn) -> dict[str, Any]:
    """A map: mostly a request of the schema with plausible or hostile fields, sometimes
    a server message's type or one that does not exist; unknown fields mixed in."""
    kind = draw(st.one_of(st.sampled_from(REQUESTS), st.sampled_from(REQUESTS),
                          st.sampled_from(REQUESTS), st.sampled_from(SERVER_TYPES),
                          st.text(max_size=12)))
    names = FIELDS.get(kind, [])
    fields = draw(st.fixed_dictionaries({}, optional={n: field_value(n) for n in names}))
    extra = draw(st.dictionaries(st.text(max_size=8).filter(lambda k: k not in ("type", "id")),
                                 hostile, max_size=2))
    return {"type": kind, **extra, **fields}


raw_bodies = st.one_of(
    st.binary(max_size=64),
    st.integers(min_value=1, max_value=3000).map(lambda n: b"\x91" * n + b"\xc0"),
    st.just(b"\xdf\xff\xff\xff\xff"),  # a map that claims four billion pairs
    st.just(b"\xdd\xff\xff\xff\xff"),  # an array likewise
    st.binary(min_size=8, max_size=8).map(lambda b: b"\x82\xa4type\xa4ping\xa2id\xcf" + b),
    st.binary(min_size=8, max_size=8).map(lambda b: b"\x82\xa4type\xa4ping\xa2id\xd3" + b),
    st.binary(max_size=12).map(lambda b: b"\x81\xa4type\xc4" + bytes([len(b)]) + b),
    st.just(b"\x81\xa4type\xd4\x05\x00"),  # an extension type
)

# A frame: ("msg", map, id kind) or ("raw", body) or ("huge",): a length prefix over
# the limit. Id kinds: "id" a fresh valid id, "none" no id, "bad" a hostile id.
frames = st.one_of(
    st.tuples(st.just("msg"), request(),
              st.sampled_from(["id", "id", "id", "id", "none", "bad"]), hostile),
    st.tuples(st.just("msg"), request(),
              st.sampled_from(["id", "id", "id", "id", "none", "bad"]), hostile),
    st.tuples(st.just("raw"), raw_bodies),
    st.just(("huge",)),
)


@st.composite
def scenario(draw: st.DrawFn) -> Plan:
    """Connections (each maybe starting with a valid `hello`) and the frames sent on
    them, interleaved: [(connections, hello per connection, [(connection, frame)])]."""
    n = draw(st.integers(1, 3))
    hellos = [draw(st.sampled_from([True, True, True, True, False])) for _ in range(n)]
    sent = draw(st.lists(st.tuples(st.integers(0, n - 1),
                                   st.one_of(frames, frames, frames,
                                             st.tuples(st.just("msg"), request(),
                                                       st.just("id"), st.none()))),
                         min_size=1, max_size=12))
    return [(n, any(hellos), [(-1 - i, h) for i, h in enumerate(hellos)] + sent)]


# -- running an example -------------------------------------------------------------------


class Faults:
    """What went wrong in one example, as readable lines."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, line: str) -> None:
        self.lines.append(line)


def framed(body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + body


class Fuzzer:
    """One server, one control table, and the fuzz connections of the current example."""

    def __init__(self, server: Server, control: WireClient) -> None:
        self.server = server
        self.control = control
        self.ids = itertools.count(FIRST_ID)
        self.names = itertools.count()
        self.examples = 0
        self.logged: list[LogEvent] = []
        self.stray: set[int] = set()
        """Ids drawn at random that may be valid: their replies are not counted."""

    def observe(self, event: LogEvent) -> None:
        level = event.get("log_level")
        if event.get("log_failure") is not None or level in (LogLevel.error,
                                                              LogLevel.critical):
            self.logged.append(event)

    def resolve(self, value: Any) -> Any:
        if isinstance(value, Token):
            return TOKENS[value.index % len(TOKENS)] if TOKENS else "no-token-yet"
        if isinstance(value, dict):
            return {k: self.resolve(v) for k, v in value.items()}
        return value

    def encode(self, frame: Any, sent: list[tuple[int, str]]) -> bytes:
        """The bytes of one generated frame; a fresh valid id is noted in `sent`."""
        if frame[0] == "huge":
            return struct.pack(">I", MAX_CLIENT_FRAME + 1)
        if frame[0] == "raw":
            return framed(frame[1])
        _, msg, id_kind, bad_id = frame
        msg = self.resolve(msg)
        rid = None
        if id_kind == "id":
            rid = next(self.ids)
            msg = {**msg, "id": rid}
        elif id_kind == "bad":
            msg = {**msg, "id": bad_id}
            if type(bad_id) is int:  # it may be a valid id after all
                self.stray.add(bad_id)
        body = msgpack.packb(msg, use_bin_type=True)
        try:
            decode(body, CLIENT_FRAME_LIMITS)
        except ProtocolError:  # refused: its error carries the id where one can be read
            rid = refused_id(body)
        if rid is not None and msg["type"] == "pong":  # an answer: none back, but before
            self.stray.add(rid)  # `hello` it is refused like anything else
        elif rid is not None:
            sent.append((rid, msg["type"]))
        return framed(body)

    def hello(self) -> dict[str, Any]:
        return {"type": "hello", "protocol": PROTOCOL_VERSION,
                "name": f"fuzz{next(self.names)}", "features": sorted(FEATURES)}

    async def run(self, plan: Plan) -> None:
        ((n, _, steps),) = plan
        self.examples += 1
        faults = Faults()
        clients = [await self.server.connect() for _ in range(n)]
        sent: list[list[tuple[int, str]]] = [[] for _ in range(n)]
        for who, frame in steps:
            if who < 0:  # the opening hello of connection -1 - who
                if frame:
                    rid = next(self.ids)
                    sent[-1 - who].append((rid, "hello"))
                    clients[-1 - who].send({**self.hello(), "id": rid})
                continue
            client = clients[who]
            if not client.is_closed:
                client.send_raw(self.encode(frame, sent[who]))
            await deferLater(reactor, 0, lambda: None)  # let the server read in between
        for i, client in enumerate(clients):
            await self.settle(client, sent[i], faults)
        for client in clients:
            for msg in client.received:
                if msg["type"] == "welcome":
                    TOKENS.append(msg["token"])
            await client.close()
            await self.server.dropped(client)
            self.server.lost.pop(client.address, None)  # its port will come round again
        self.server.clients = [c for c in self.server.clients if c not in clients]
        await self.control_plays(faults)
        for event in self.logged:
            faults.add(f"logged: {formatEvent(event)} "
                       f"{event['log_failure'].getTraceback() if event.get('log_failure') else ''}")
        self.logged.clear()
        assert not faults.lines, "\n".join(faults.lines) + f"\nframes: {steps!r}"

    async def settle(self, client: WireClient, sent: list[tuple[int, str]],
                     faults: Faults) -> None:
        """A last ping; once every request is answered (or the connection is gone),
        check each request's replies, their order, and how the connection ended."""
        if not client.is_closed:
            rid = next(self.ids)
            sent.append((rid, "ping"))
            client.send({"type": "ping", "id": rid})
            wanted = {r for r, _ in sent}

            def all_answered(_: Msg) -> bool:
                return wanted <= {m.get("id") for m in client.received
                                  if m["type"] != "ping"}

            try:
                if not all_answered({}):
                    await client.wait(all_answered, SETTLE, consume=False)
            except ConnectionError:
                pass
            except Exception as e:  # the timeout
                faults.add(f"not every request answered within {SETTLE} s ({e!r}); "
                           f"got {client.types()}")
                return
        for msg, why in client.invalid:
            faults.add(f"message the schema refuses ({why}): {msg!r}")
        client.invalid.clear()
        replies: dict[int, list[Msg]] = {}
        order: list[int] = []
        for msg in client.received:
            if msg["type"] == "ping":
                continue
            if "id" in msg:
                replies.setdefault(msg["id"], []).append(msg)
                order.append(msg["id"])
            if msg["type"] == "error":
                if msg["code"] not in ERRORS:
                    faults.add(f"undocumented error code: {msg!r}")
                if msg["code"] == "internal_error":
                    faults.add(f"internal error: {msg!r}")
        ids = [r for r, _ in sent]
        for rid in replies:  # raw bodies carry ids of their own, below FIRST_ID
            if isinstance(rid, int) and rid >= FIRST_ID and rid not in ids \
                    and rid not in self.stray:
                faults.add(f"a reply to an id never sent: {replies[rid]!r}")
        closed = client.is_closed
        for rid, kind in sent:
            got = replies.get(rid, [])
            if len(got) > 1 or (not closed and len(got) != 1):
                faults.add(f"{kind} {rid}: {len(got)} replies {got!r}")
        answered = [r for r in order if r in ids]
        if answered != sorted(answered, key=ids.index):
            faults.add(f"replies out of the order of requests: sent {sent}, "
                       f"answered {order}")
        if closed:
            last = client.received[-1] if client.received else None
            welcomed = any(m["type"] == "welcome" for m in client.received)
            # A refused `hello` is answered with an error and a close, whatever its code.
            if last is None or not (last["type"] == "replaced" or (
                    last["type"] == "error" and (last["code"] in CLOSING or not welcomed))):
                faults.add(f"closed without a closing error; last message {last!r}")

    async def control_plays(self, faults: Faults) -> None:
        """The control table goes on: its player is offered a move and it is taken."""
        control = self.control
        pong = await control.request("ping")
        if pong["type"] != "pong":
            faults.add(f"control ping answered with {pong!r}")
        decision = control.decision()
        if decision is None and match_ended(control):  # a long hunt outlasts a match
            await control.ok("rematch", agree=True)
        if decision is None:
            decision = await control.wait(offers_moves, SETTLE)
        reply = await control.request("move", move=decision["moves"][0])
        if reply["type"] != "ok":
            faults.add(f"control move refused: {reply!r}")
        control.cursor = len(control.received)


def match_ended(client: WireClient) -> bool:
    """Whether the last `update` `client` got ended its match."""
    for msg in reversed(client.received):
        if msg["type"] == "update":
            return any(e["event"] == "match_end" for e in msg["events"])
    return False


async def start_server(path: Path) -> Fuzzer:
    """The server on a real SQLite file, its control table started."""
    archive = Archive(lambda: SqliteStore(str(path)), reactor)
    server = await Server.start(
        settings=FUZZ_TABLES, limits=FUZZ_LIMITS, journal=StoreJournal.open(path, reactor),
        archive=archive, community_from=str(path),
        accounts=AccountSettings(cost=CHEAP, limits=ROOMY_LOGINS))
    control = await server.connect("control")
    await control.ok("create_table", rules="classic", seats=2,
                     options={"match_end": "deals:100"})
    await control.ok("add_bot", seat=1, level="easy")
    await control.ok("start")
    return Fuzzer(server, control)


@pytest_twisted.async_yield_fixture
async def fuzzer(tmp_path: Path) -> AsyncIterator[Fuzzer]:
    started = await start_server(tmp_path / "fuzz.sqlite3")
    globalLogPublisher.addObserver(started.observe)  # type: ignore[arg-type]
    try:
        yield started
    finally:
        globalLogPublisher.removeObserver(started.observe)  # type: ignore[arg-type]
        await started.server.stop()


def hypothesis_run(fuzzer: Fuzzer) -> None:
    """Hypothesis on a worker thread (it is synchronous); each example runs on the
    reactor's thread and this one waits for it."""

    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(scenario())
    def example(plan: Plan) -> None:
        threads.blockingCallFromThread(reactor, lambda: ensureDeferred(fuzzer.run(plan)))  # type: ignore[arg-type]

    example()


@pytest_twisted.ensureDeferred
async def test_fuzzed_frames_get_one_reply_each_and_the_control_table_plays_on(
        fuzzer: Fuzzer) -> None:
    await threads.deferToThread(hypothesis_run, fuzzer)
    assert fuzzer.examples >= EXAMPLES
