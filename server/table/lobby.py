"""The lobby: the registry of tables, how they are found, and who hears of changes.

Tables live here from creation to close. The lobby validates what a `create_table`
asks for (rule set, seat count, the options of docs/rules.md) before a table exists, so a
table is never built from bad input; it keeps invite codes private (a private table
is listed, but joined only with its code); it caps how many tables are open, per
host, per address and in all; it answers with the table list one page at a time, so a
`lobby` frame stays within the frame limit however many tables there are; and it pushes
`lobby_update` deltas about every table to subscribed clients, only when a table's
lobby row really changed.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, replace
from typing import Any, Protocol

from twisted.logger import Logger

from pisyedili.protocol.limits import MAX_TABLE_NAME
from pisyedili.protocol.shapes import LOBBY_PAGE, SEAT_RANGE
from pisyedili.server.clock import Clock
from pisyedili.server.cluster import LOCAL, Cluster
from pisyedili.server.rules import Options, card_str, parse_card
from pisyedili.server.rules.cards import DECK_SIZE
from pisyedili.server.table.commands import MemberId
from pisyedili.server.table.core import (
    BOT_REFUSED,
    GUEST_REFUSED,
    TableCore,
    TableError,
    TableSettings,
    invite_code,
)
from pisyedili.server.table.effects import MatchOver, Message
from pisyedili.server.table.journal import NO_JOURNAL, Journal, SavedTable, Setup
from pisyedili.server.table.pairing import Pairing, QuickSetup
from pisyedili.server.table.runner import Deliver, TableRunner

log = Logger()

ENGINE_OPTIONS = frozenset({"ten", "empty_stock", "match_end", "decks"})
"""Table options that are rules (docs/rules.md, "Table options")."""

TURN_SECONDS_MAX = 3600


_KEPT_SETTINGS = ("turn_seconds", "grace_seconds", "bot_delay", "deal_pause",
                  "max_timeouts_before_bot", "stand_in_level", "chat_max_chars")
"""The table settings a table keeps over a restart (they shape its replay); how bots
search (thread, budget) is the restarted server's own."""


def _setup(core: TableCore, opener: str, address: str) -> Setup:
    settings = asdict(core.settings)
    setup: Setup = {"name": core.name, "options": asdict(core.options), "private": core.private,
                    "rated": core.rated, "code": core.code, "opener": opener,
                    "address": address,
                    "settings": {key: settings[key] for key in _KEPT_SETTINGS}}
    if core.deck is not None:  # a restart deals the same order
        setup["deck"] = list(core.deck)
    if not core.bot_accounts:  # (absent: they may sit, as at every older table)
        setup["bot_accounts"] = False
    if core.named_for is not None:
        setup["named_for"] = core.named_for
    if core.quick:  # (absent: a table opened by `create_table`)
        setup["quick"] = {"bots_at": core.bots_at, "level": core.bot_level}
    return setup


def stacked_deck(cards: Any, options: Options) -> tuple[int, ...]:
    """A `create_table.deck` (cards separated by spaces) as card ints: exactly the
    table's pack (`options.decks` decks, each card as many times), in any order; else
    `bad_field`."""
    if not isinstance(cards, str):
        raise TableError("bad_field", "deck must be a string of cards separated by spaces",
                         field="deck")
    order = []
    for i, text in enumerate(cards.split()):
        try:
            order.append(parse_card(text))
        except ValueError as e:
            raise TableError("bad_field", f"deck card {i + 1}: {e}", field="deck") from None
    size = DECK_SIZE * options.decks
    if len(order) != size:
        raise TableError("bad_field", f"deck must hold {size} cards (the table plays with "
                         f"{options.decks} deck(s) of 52), not {len(order)}", field="deck")
    counts = Counter(order)
    wrong = [c for c in range(DECK_SIZE) if counts[c] != options.decks]
    if wrong:
        card = wrong[0]
        raise TableError("bad_field", f"deck holds {card_str(card)} {counts[card]} time(s), "
                         f"not {options.decks}", field="deck")
    return tuple(order)


class LobbyMember(Protocol):
    """A player as the lobby sees one: who opens a table, hears of every change and
    chats. The people's `Session` is one; the lobby asks no more of it, so the tables
    do not import the people who sit at them."""

    @property
    def player_id(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def account(self) -> int | None:
        """The account it is logged in to; None: a guest."""
        ...

    def send(self, msg: Message) -> None: ...


class TableCaps(Protocol):
    """How many tables may be open: the operator's limits (`ServerLimits`, with the
    network's) hold these with the rest."""

    @property
    def max_tables_per_player(self) -> int: ...

    @property
    def max_tables_per_address(self) -> int: ...

    @property
    def max_tables_total(self) -> int: ...


class Lobby:
    """Tables by id and by invite code, lobby subscribers and lobby chat."""

    def __init__(self, clock: Clock, rng_factory: Callable[[], random.Random],
                 settings: TableSettings, limits: TableCaps, deliver: Deliver,
                 on_left: Callable[[TableRunner, MemberId], None],
                 on_match: Callable[[MatchOver], object] | None = None,
                 journal: Journal = NO_JOURNAL, cluster: Cluster = LOCAL,
                 test_decks: bool = False,
                 watchers: Sequence[Callable[[TableRunner], None]] = ()) -> None:
        self._clock = clock
        self.test_decks = test_decks
        """`create_table` may stack the deck (`--test-decks`: a server for client authors'
        tests, never one people play on)."""
        self._cluster = cluster
        self._journal = journal
        self._rng_factory = rng_factory
        self._settings = settings
        self._limits = limits
        self._deliver = deliver
        self._on_left = on_left
        self._on_match = on_match  # a finished match goes to the store (if any)
        self._tables: dict[int, TableRunner] = {}  # in id order: the order they opened
        self._hosts: dict[int, tuple[str, str]] = {}  # table id -> (opener, their address)
        self._per_host: Counter[str] = Counter()
        self._per_address: Counter[str] = Counter()
        self._by_code: dict[str, TableRunner] = {}
        self._rows: dict[int, dict[str, Any]] = {}
        self._subscribers: dict[str, LobbyMember] = {}
        self._ids = itertools.count(1)
        self.pairing = Pairing(clock, self.tables)
        """`play_now`'s choice of a table, and what its quick tables do by themselves."""
        self._watchers = tuple(watchers)
        """Told of every change of a table, its close included (the invitations)."""

    # -- tables -------------------------------------------------------------------

    def tables(self) -> list[TableRunner]:
        return list(self._tables.values())

    def create(self, host: LobbyMember, rules: Any, seats: Any,
               options: Mapping[str, Any] | None = None, name: str | None = None,
               private: bool = False, *, address: str = "local",
               rated: bool = False, table_id: int | None = None,
               code: str | None = None, deck: Any = None, bot_accounts: bool = True,
               host_bot: bool = False, quick: QuickSetup | None = None) -> TableRunner:
        """Validate a table request and open the table; the caller then joins the host.

        `address` is the host connection's `address_key`: a new `hello` is a new
        player, so the per-player cap alone would not stop one machine. A `rated`
        table's matches change ratings: a guest, whom it would not seat, may not open one.
        In a cluster the id and a private table's code come claimed already. A `deck`
        (a test server's only) stacks every deal; such a table is private and unrated.
        Without `bot_accounts` bot accounts get no seat, so a host that is one
        (`host_bot`) may not open it. `quick`: a table `play_now` opens (`pairing.py`).
        """
        if host_bot and not bot_accounts:
            raise TableError("bot_account_refused", BOT_REFUSED)
        if deck is not None:
            self._check_stackable(rated, private)
        if rated and host.account is None:
            raise TableError("account_required", GUEST_REFUSED)
        self._check_caps(host.player_id, address)
        engine_options, settings = self._validate(rules, seats, dict(options or {}))
        order = stacked_deck(deck, engine_options) if deck is not None else None
        named_for = None
        if name is None or not name.strip():
            # In English for old clients; `named_for` lets a client word it in its own language.
            named_for = host.name
            name = f"{host.name}'s table"
        name = name.strip()[:MAX_TABLE_NAME]
        table_id = next(self._ids) if table_id is None else table_id
        rng = self._rng_factory()
        code = code if private else None
        while private and (code is None or code in self._by_code):
            code = invite_code(rng)
        core = TableCore(table_id, name, engine_options, private=private,
                         host=host.player_id, settings=settings, code=code, rated=rated,
                         deck=order, bot_accounts=bot_accounts)
        core.named_for = named_for
        if quick is not None:
            quick.apply(core, self._clock.seconds())
        self._journal.table_opened(table_id, self._clock.seconds(),
                                   _setup(core, host.player_id, address))
        table = self._add(core, rng, host.player_id, address)
        self.pairing.arm(table)
        log.info("table {table} opened by {player}: {rules}, {seats} seats, private={private}"
                 "{stacked}", table=table_id, player=host.player_id, rules=rules, seats=seats,
                 private=private, stacked=", stacked deck" if order is not None else "")
        # Announced to the lobby by the host's join (on_change), so the first row a
        # subscriber sees already shows the host in a seat.
        return table

    def _check_stackable(self, rated: bool, private: bool) -> None:
        if not self.test_decks:
            raise TableError("test_decks_off", "this server deals no stacked decks: "
                             "it was not started with --test-decks", field="deck")
        if rated:
            raise TableError("bad_field", "a table with a stacked deck is never rated",
                             field="rated")
        if not private:
            raise TableError("bad_field", "a table with a stacked deck is private",
                             field="private")

    def _add(self, core: TableCore, rng: random.Random, opener: str,
             address: str) -> TableRunner:
        table = TableRunner(core, self._clock, self._deliver, rng=rng,
                            on_change=self._on_change, on_close=self._on_close,
                            on_left=self._on_left, on_match=self._on_match,
                            journal=self._journal)
        self._tables[core.id] = table
        self._hosts[core.id] = (opener, address)
        self._per_host[opener] += 1
        self._per_address[address] += 1
        if core.code is not None:
            self._by_code[core.code] = table
        return table

    def rebuild(self, saved: SavedTable) -> TableRunner:
        """A table a restarted server read back: its core as it was opened (or at its
        latest deal's start: the snapshot) brought up to date by its commands. Its
        members are told nothing yet (nobody is connected); `Restored` then arms its
        timers."""
        setup = saved.setup
        settings = replace(self._settings, **setup["settings"])
        core = saved.core
        if core is None or core.id != saved.id:
            core = TableCore(saved.id, setup["name"], Options(**setup["options"]),
                             private=setup["private"], host=setup["opener"],
                             settings=settings, code=setup["code"],
                             rated=bool(setup.get("rated", False)),
                             deck=tuple(setup["deck"]) if "deck" in setup else None)
        core.settings = settings  # how bots search is this server's own
        core.rated = bool(setup.get("rated", False))  # the setup decides, snapshot or not
        core.bot_accounts = bool(setup.get("bot_accounts", True))
        core.named_for = setup.get("named_for")  # (a snapshot from before it was kept: none)
        if "quick" in setup:
            core.quick = True
            core.bots_at, core.bot_level = setup["quick"]["bots_at"], setup["quick"]["level"]
        table = self._add(core, self._rng_factory(), setup["opener"], setup["address"])
        table.replay(saved.commands)
        self.pairing.arm(table)
        # A table taken over from a process the cluster took for gone: this lobby's
        # subscribers were told it went with that process, or hold it still.
        listed = core.id in self._cluster.lobby_rows()
        self._rows[core.id] = self.summary(table)
        self._cluster.table_row(core.id, self._rows[core.id])
        if core.code is not None:  # the claim of the run that opened it ends with that run
            self._cluster.keep_code(core.code, core.id)
        if self._cluster.shared:  # (at a restart nobody here listens yet; the others do)
            self._delta({"op": "update" if listed else "add", "table": core.id,
                         "summary": self._rows[core.id]})
        return table

    def continue_ids(self, last_id: int) -> None:
        """Ids of new tables start after `last_id`: a restart never hands one out again."""
        self._ids = itertools.count(last_id + 1)

    def _check_caps(self, player_id: str, address: str) -> None:
        limits = self._limits
        caps = ((self._per_host[player_id], limits.max_tables_per_player,
                 "you may have at most {} open tables that you opened"),
                (self._per_address[address], limits.max_tables_per_address,
                 "at most {} open tables may be opened from one address"),
                (len(self._tables), limits.max_tables_total,
                 "the server has {} open tables, as many as it allows: join one"))
        for count, cap, message in caps:
            if count >= cap:
                raise TableError("too_many_tables", message.format(cap), limit=cap)

    def _validate(self, rules: Any, seats: Any,
                  options: dict[str, Any]) -> tuple[Options, TableSettings]:
        if rules not in SEAT_RANGE:
            raise TableError("bad_options", f"unknown rule set {rules!r}", field="rules")
        low, high = SEAT_RANGE[rules]
        if not isinstance(seats, int) or isinstance(seats, bool) or not low <= seats <= high:
            raise TableError("bad_options", f"{rules} tables have {low} to {high} seats",
                             field="seats")
        settings = self._settings
        turn_seconds = options.pop("turn_seconds", None)
        if turn_seconds is not None:
            if (not isinstance(turn_seconds, int) or isinstance(turn_seconds, bool)
                    or not 0 <= turn_seconds <= TURN_SECONDS_MAX):
                raise TableError("bad_options",
                                 f"turn_seconds must be 0 (untimed) to {TURN_SECONDS_MAX}",
                                 field="options.turn_seconds")
            settings = replace(settings, turn_seconds=float(turn_seconds))
        unknown = sorted(set(options) - ENGINE_OPTIONS)
        if unknown:
            raise TableError("bad_options", f"unknown table option {unknown[0]!r}",
                             field=f"options.{unknown[0]}")
        for key in sorted(options):  # each option alone first, so the refusal names it
            try:
                Options.make(rules, seats, **{key: options[key]})
            except (ValueError, TypeError) as e:
                raise TableError("bad_options", str(e), field=f"options.{key}") from None
        try:
            engine_options = Options.make(rules, seats, **options)
        except (ValueError, TypeError) as e:
            raise TableError("bad_options", str(e), field="options") from None
        return engine_options, settings

    def holds(self, table_id: Any = None, code: Any = None) -> bool:
        """Whether a `join_table` is this process's to answer: it names one of its
        tables, or nothing a table elsewhere could be (the refusals are `find`'s)."""
        if isinstance(code, str) and code:
            return code.strip().upper() in self._by_code or code.strip() in self._by_code
        return not isinstance(table_id, int) or isinstance(table_id, bool) \
            or table_id in self._tables

    def by_id(self, table_id: int) -> TableRunner | None:
        """Any open table, private or not (for operators)."""
        return self._tables.get(table_id)

    def find(self, table_id: Any = None, code: Any = None) -> TableRunner:
        """The table a `join_table` names: by invite code, or by id if public."""
        if isinstance(code, str) and code:
            table = self._by_code.get(code.strip().upper()) or self._by_code.get(code.strip())
            if table is None:
                raise TableError("no_such_table", "no table has that invite code")
            return table
        if not isinstance(table_id, int) or isinstance(table_id, bool):
            raise TableError("missing_field", "join_table needs a table id or an invite code",
                             field="table")
        table = self._tables.get(table_id)
        if table is None:
            raise TableError("no_such_table", f"there is no table {table_id}")
        if table.core.private:
            raise TableError("private_table", "this table is private: join it with its code")
        return table

    # -- lobby view and deltas ------------------------------------------------------

    def snapshot(self, offset: int = 0, limit: int | None = None) -> Message:
        """One page of the table list, oldest table first, and how long the list is.

        Pages of at most `LOBBY_PAGE` rows keep the frame within the frame limit, and
        only the page's rows are built: a page costs little however many tables are open.
        """
        size = LOBBY_PAGE if limit is None else max(0, min(limit, LOBBY_PAGE))
        offset = max(0, offset)
        elsewhere = self._cluster.lobby_rows()
        if elsewhere:  # every process's tables, in id order (ids are the cluster's)
            ids = sorted(self._tables.keys() | elsewhere.keys())
            rows = [self.summary(self._tables[i]) if i in self._tables else elsewhere[i]
                    for i in ids[offset:offset + size]]
            return {"type": "lobby", "tables": rows, "total": len(ids), "offset": offset}
        page = itertools.islice(self._tables.values(), offset, offset + size)
        return {"type": "lobby", "tables": [self.summary(t) for t in page],
                "total": len(self._tables), "offset": offset}

    def subscribe(self, session: LobbyMember, offset: int = 0,
                  limit: int | None = None) -> Message:
        """Subscribe (once: asking again only gets a page) and return the page asked."""
        self._subscribers.setdefault(session.player_id, session)
        return self.snapshot(offset, limit)

    def unsubscribe(self, session: LobbyMember) -> None:
        self._subscribers.pop(session.player_id, None)

    def subscriber_count(self) -> int:
        """How many sessions hear of every change: each `lobby_update` goes to each."""
        return len(self._subscribers)

    def _broadcast(self, msg: Message) -> None:
        for session in list(self._subscribers.values()):
            session.send(msg)

    def summary(self, table: TableRunner) -> dict[str, Any]:
        """The table's lobby row."""
        row = table.core.summary()
        if table.core.rated:
            row["rated"] = True
        return row

    def _push_row(self, table: TableRunner) -> None:
        row = self.summary(table)
        old = self._rows.get(table.id)
        if old == row:
            return
        self._rows[table.id] = row
        self._cluster.table_row(table.id, row)
        self._delta({"op": "add" if old is None else "update", "table": table.id,
                     "summary": row})

    def _on_change(self, table: TableRunner) -> None:
        if table.id in self._tables:
            self._push_row(table)
            self.pairing.changed(table)
            for watcher in self._watchers:
                watcher(table)

    def let_go(self, table: TableRunner) -> None:
        """A table another process took over: it goes from here writing nothing (the
        journal's rows, the cluster's keys and its lobby row are the new holder's)."""
        table.let_go()
        if self._forget(table):
            self._cluster.table_lost(table.id, table.core.code)

    def _on_close(self, table: TableRunner) -> None:
        if not self._forget(table):
            return
        self._journal.table_closed(table.id)
        self._cluster.table_closed(table.id, table.core.code)
        self._delta({"op": "remove", "table": table.id})
        for watcher in self._watchers:
            watcher(table)

    def _forget(self, table: TableRunner) -> bool:
        """No longer one of this lobby's tables (False: it was not)."""
        if self._tables.pop(table.id, None) is None:
            return False
        opener = self._hosts.pop(table.id, None)
        if opener is not None:
            for counter, key in ((self._per_host, opener[0]), (self._per_address, opener[1])):
                counter[key] -= 1
                if counter[key] <= 0:
                    del counter[key]
        self._rows.pop(table.id, None)
        if table.core.code is not None:
            self._by_code.pop(table.core.code, None)
        self.pairing.forget(table)
        return True

    def _delta(self, delta: dict[str, Any]) -> None:
        """A change of one of this process's tables: to its subscribers, and to the
        other processes' (`remote_delta` there)."""
        self._broadcast({"type": "lobby_update", **delta})
        if self._cluster.shared:
            self._cluster.publish_lobby(delta)

    def remote_delta(self, delta: dict[str, Any]) -> None:
        """A change of another process's table (or a line of lobby chat said there),
        for this process's subscribers."""
        if delta["op"] == "chat":
            self._broadcast(delta["chat"])
        else:
            self._broadcast({"type": "lobby_update", **delta})

    # -- chat -------------------------------------------------------------------------

    def chat(self, session: LobbyMember, text: str) -> None:
        """Lobby chat goes to every subscriber (and the speaker, as an echo)."""
        msg: Message = {"type": "chat", "scope": "lobby", "name": session.name,
                        "spectator": False, "text": text}
        self._broadcast(msg)
        if session.player_id not in self._subscribers:
            session.send(msg)
        if self._cluster.shared:  # and to every other process's subscribers
            self._cluster.publish_lobby({"op": "chat", "chat": msg})
