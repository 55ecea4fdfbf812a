"""Accounts: a name registered with a password, so only its owner can play under it.

Guests play under whatever name they typed. A guest may `register` the name it holds;
from then on that name and its look-alikes (`names.keys`) are reserved: a guest who asks
for one is given a suffixed name (as for a name another session holds), and only a
`login` gives the name back. A login turns the connection's session into the account's;
if the account already has a session (another device, or one restored after a
restart), the login takes that session over, seat and all, as a resume would: one
player, one session, the newest connection wins.

Secrets: a password is hashed with argon2id (`argon2-cffi`) on the reactor's thread pool,
never on the reactor thread, and is never logged, kept or sent back. A login answers
with a login token (32 random bytes, only its SHA-256 kept, as for resume tokens) that
the client remembers instead of the password; `logout` revokes it, `logout everywhere`
and `passwd` revoke them all. Passwords are limited per address, then slowed per account
(`LoginLimits`), so a password cannot be guessed at speed, yet its owner is never
locked out; a login token is not limited.

The registry of names and operators is held in memory (read at start, before anything
listens), so a `hello` is checked without waiting on the store; every change is
written through the store's thread (`Archive.use`). The store may change beside the
server (`pisyedili-server operator`): a login under a name the registry lacks asks the
store, and the operator flags are read again every `OPERATORS_EVERY` seconds. In a
cluster on one shared store the registry is each process's copy of it: a
registration is told to the other processes (`AccountsElsewhere.account_registered`,
through the cluster), and a login into an account whose session lives on another
process brings that session here first (`account_session`), so one account still
has one session.
"""

from __future__ import annotations

import ipaddress
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, cast

import argon2
from twisted.internet.defer import Deferred, DeferredSemaphore
from twisted.internet.interfaces import IAddress, IReactorTime
from twisted.internet.task import deferLater
from twisted.internet.threads import deferToThreadPool
from twisted.logger import Logger

from pisyedili.protocol import passwords
from pisyedili.protocol.errors import ProtocolError
from pisyedili.protocol.passwords import MIN_PASSWORD
from pisyedili.server import metrics
from pisyedili.server.clock import Clock
from pisyedili.server.people import names
from pisyedili.server.people.session import Session, Sessions
from pisyedili.server.store import Archive, Conflict, Store
from pisyedili.server.store.journal import token_hash
from pisyedili.server.table.effects import Message
from pisyedili.server.token_bucket import TokenBucket

log = Logger()
T = TypeVar("T")

BUSY_RETRY = 2.0
"""Seconds `server_busy` asks a client to wait: a queue of hashes drains in about that."""

OPERATORS_EVERY = 10.0
"""Seconds between two reads of the operator flags from the store (`refresh_operators`):
how long a flag changed by `pisyedili-server operator` takes to reach a running server."""


@dataclass(frozen=True)
class HashCost:
    """argon2id's cost. The default is argon2-cffi's (RFC 9106's second recommended
    profile: 64 MiB, 3 passes, 4 lanes: tens of milliseconds); tests may pass a cheap
    one explicitly."""

    time_cost: int = argon2.DEFAULT_TIME_COST
    memory_cost: int = argon2.DEFAULT_MEMORY_COST
    parallelism: int = argon2.DEFAULT_PARALLELISM

    def hasher(self) -> argon2.PasswordHasher:
        return argon2.PasswordHasher(time_cost=self.time_cost, memory_cost=self.memory_cost,
                                     parallelism=self.parallelism, type=argon2.Type.ID)


CHEAP = HashCost(time_cost=1, memory_cost=8, parallelism=1)
"""For tests only: the least argon2 allows, so a test's logins take microseconds."""


@dataclass(frozen=True)
class LoginLimits:
    """How fast passwords may be tried (docs/operating.md, "Login limits").

    Per address, checked first: a token bucket, a burst of `address_burst` then one
    every `1 / address_rate` seconds, for every password `login`, `register` and
    `passwd` (each costs a hash). An address stopped there costs the account nothing.
    Per account (by name key, whether an account has it or not), no lock: its password
    is checked after a delay that grows with its recent failures, none for the first
    `account_free`, then `account_delay` doubling with each more, at most
    `account_max_delay`; failures fade by half every `account_half_life` seconds. So
    guesses from anywhere slow down, and the owner with the right password waits at
    most the longest delay. An address has one check on an account under way at a time.
    A login by token hashes nothing and cannot be guessed: it is not limited here.
    """

    address_burst: int = 10
    address_rate: float = 1 / 6
    account_free: int = 3
    account_delay: float = 1.0
    account_max_delay: float = 30.0
    account_half_life: float = 600.0

    def delay(self, failures: float) -> float:
        """Seconds an account with `failures` recent failures makes a check wait."""
        if failures < self.account_free:
            return 0.0
        return min(self.account_delay * 2 ** (failures - self.account_free),
                   self.account_max_delay)


@dataclass(frozen=True)
class AccountSettings:
    cost: HashCost = field(default_factory=HashCost)
    limits: LoginLimits = field(default_factory=LoginLimits)
    tls_required: bool = False
    """Refuse a password over a connection that is neither TLS nor loopback."""
    hashes: int = 2
    """argon2 hashes computed at once, server-wide: each holds `cost.memory_cost` KiB
    (64 MiB by default) and a core, so more at once only adds memory and latency."""
    hash_queue: int = 16
    """Password requests waiting for a hash beyond those; more are refused with
    `server_busy`."""
    operators: frozenset[str] = frozenset()
    """Account names that are operators by the server's configuration (`--operator`):
    each must name an account when the server starts (`Accounts.unknown_operators`)."""


@dataclass(frozen=True)
class Caller:
    """Who makes an account request, as plain values (no connection): its session,
    the address its limits count by, whether its channel may carry a password (TLS or
    loopback), and `holds`, which session its connection holds now (asked again after
    every wait: None once the connection let its session go)."""

    session: Session
    address: str
    secure: bool
    holds: Callable[[], Session | None]


@dataclass
class Account:
    id: int
    name: str
    operator: bool  # as the store says; `Accounts.is_operator` adds the configured ones
    bot: bool = False
    """A program's account, registered as a bot (`register.bot`): its seats, ladder rows
    and kept matches say so. Fixed at registration: a person's account never becomes a
    bot's, nor the other way, so what others were shown about it stays true."""


# -- the store's side (runs on the store's thread) ---------------------------------------

def load(store: Store) -> tuple[dict[int, Account], dict[str, int]]:
    """Every account and the name keys each holds: those stored, and those its name has
    by today's `names.keys`, so an account registered before the folding changed (width
    forms are folded since) is still found by, and still reserves, its name. A key
    another account stores stays that account's."""
    rows, keys = store.load_accounts()
    accounts = {row.id: Account(row.id, row.name, row.operator, row.bot) for row in rows}
    for account in accounts.values():
        for key in names.keys(account.name):
            keys.setdefault(key, account.id)
    return accounts, keys


def _set_password(store: Store, account: int, password: str, keep: bytes,
                  now: float) -> None:
    """A new password hash; every login token but `keep` (the new one) is revoked."""
    with store.transaction():
        store.set_password(account, password)
        store.revoke_logins(account, None)
        store.issue_login(account, keep, now)


def set_operator(store: Store, name: str, operator: bool) -> bool:
    """Make the account named `name` (or a look-alike) an operator, or not; False if
    there is no such account. For `pisyedili-server operator`, on the server's store."""
    account = store.find_account(names.keys(name))
    if account is None:
        return False
    store.set_operator(account, operator)
    return True


def add_account(store: Store, name: str, password_hash: str, now: float, *,
                operator: bool = False) -> int:
    """A new account made on the server's store, not through a server (`pisyedili-server
    operator add`): `name` as `names.accept` gives it, `password_hash` argon2id's.
    `Conflict` if the name or a look-alike is registered already."""
    return store.create_account(name, names.keys(name), password_hash, now, operator)


# -- the reactor's side -------------------------------------------------------------------

class AccountsElsewhere(Protocol):
    """The other processes of a cluster on one shared store, as accounts reach them
    (`net/relay.py`)."""

    def account_registered(self, account: Account) -> None:
        """An account registered here: every other process learns it."""

    def account_session(self, account: int, caller: Session) -> Deferred[Session | None]:
        """The session another process holds for `account`, moved here for `caller`'s
        connection to take over, or None if no live process holds one."""


class Accounts:
    """The registry of accounts and the four requests on them."""

    def __init__(self, archive: Archive, sessions: Sessions, clock: Clock,
                 settings: AccountSettings | None = None,
                 loaded: tuple[dict[int, Account], dict[str, int]] | None = None,
                 *, ban_check: Callable[[int], ProtocolError | None] = lambda account: None,
                 elsewhere: AccountsElsewhere | None = None) -> None:
        """`loaded`'s name keys are the ones `sessions` keeps guests from (its
        `reserved`: the same mapping, given to both where they are made)."""
        self._archive = archive
        self._sessions = sessions
        self._clock = clock
        self.settings = settings or AccountSettings()
        self._hasher = self.settings.cost.hasher()
        self._dummy: str | None = None  # checked against when no account matches
        self.accounts, self.keys = loaded or ({}, {})
        self._flagged = {a.id for a in self.accounts.values() if a.operator}
        """The accounts flagged operator here: what `refresh_operators` compares with."""
        self._unread = False
        """Whether the last read of the operators failed (said once, not every time)."""
        self._configured, self.unknown_operators = self._resolve(self.settings.operators)
        self._by_address: dict[str, TokenBucket] = {}
        self._failures: dict[str, tuple[float, float]] = {}
        """Per name key: recent failed password checks (fading) and when last counted."""
        self._checking: dict[tuple[str, str], float] = {}
        """Per (name key, address): the check under way, and when its delay ends."""
        self._hashing = DeferredSemaphore(max(1, self.settings.hashes))
        self.ban_check = ban_check
        """Why the account may not log in now (moderation.py), or None."""
        self._elsewhere = elsewhere
        """The other processes on the same store (`relay.py`), if there are any."""

    def _resolve(self, configured: frozenset[str]) -> tuple[frozenset[int], list[str]]:
        """The accounts the configured operator names (`--operator`) name now, at start,
        and the names that name none. Resolved once: a name no account holds must not
        make an operator of whoever registers it first."""
        ids: set[int] = set()
        unknown: list[str] = []
        for name in sorted(configured):
            found = self.find(name)
            if found is None:
                unknown.append(name)
                log.warn("--operator {name!r} names no account: nobody is made operator by "
                         "it (create the account with `pisyedili-server operator add`)",
                         name=name)
            else:
                ids.add(found.id)
        return frozenset(ids), unknown

    # -- look-ups -----------------------------------------------------------------------

    def find(self, name: str) -> Account | None:
        """The account whose name `name` is, or looks like."""
        for key in names.keys(name):
            account = self.keys.get(key)
            if account is not None:
                return self.accounts.get(account)
        return None

    def learn(self, account: int, name: str, operator: bool, bot: bool = False) -> Account:
        """An account registered through another process of the cluster: from now on
        its name is reserved here too and a login finds it. A key another account
        holds here stays that account's."""
        known = self.accounts.get(account)
        if known is None:
            known = self.accounts[account] = Account(account, name, operator, bot)
            if operator:
                self._flagged.add(account)
            for key in names.keys(name):
                self.keys.setdefault(key, account)
        return known

    async def lookup(self, name: str) -> Account | None:
        """`find`, and the store itself when this copy does not know the name: an
        account registered through another process of a cluster it has not heard from
        yet, or made by `pisyedili-server operator add` while this server runs."""
        found = self.find(name)
        if found is not None:
            return found
        keys = names.keys(name)
        row = await self._store(lambda store: store.account_row(keys))
        return None if row is None else self.learn(row.id, row.name, row.operator, row.bot)

    async def refresh_operators(self) -> None:
        """The operator flags of the accounts known here, as the store holds them now:
        `pisyedili-server operator add|remove` changes them while the server runs (on a
        cluster's shared store, for every process). Called every `OPERATORS_EVERY`
        seconds; a store out of reach leaves the flags as they were, until the next."""
        try:
            flagged = await self._store(lambda store: store.operators())
        except Exception as e:  # a lost database: said once, and tried at each turn
            if not self._unread:
                log.warn("cannot read the operators from the store: {error}; the flags "
                         "stay as they were until it can", error=str(e))
            self._unread = True
            return
        if self._unread:
            log.info("the operators are read from the store again")
            self._unread = False
        operators = {found.id for name in flagged if (found := self.find(name)) is not None}
        for changed in sorted(operators ^ self._flagged):  # (not every account: a few)
            account = self.accounts[changed]
            account.operator = changed in operators
            log.info("account {account} ({name}) is {now} an operator, as the store says "
                     "now", account=account.id, name=account.name,
                     now="now" if account.operator else "no longer")
        self._flagged = operators

    def is_operator(self, account: int | None) -> bool:
        found = self.accounts.get(account) if account is not None else None
        if found is None:
            return False
        return found.operator or found.id in self._configured

    def is_bot(self, account: int | None) -> bool:
        """Whether `account` (None: a guest) is a bot's account."""
        found = self.accounts.get(account) if account is not None else None
        return found is not None and found.bot

    def session_of(self, account: int) -> Session | None:
        return next((s for s in self._sessions.each() if s.account == account), None)

    def describe(self, session: Session, login: str | None = None) -> Message:
        """The `account` message: who this connection now is."""
        msg: Message = {"type": "account", "player": int(session.player_id),
                        "name": session.name, "token": session.token,
                        "registered": session.account is not None,
                        "operator": self.is_operator(session.account)}
        if self.is_bot(session.account):
            msg["bot"] = True
        if login is not None:
            msg["login"] = login
        return msg

    # -- guards -------------------------------------------------------------------------

    def _check_channel(self, caller: Caller) -> None:
        if not self.settings.tls_required or caller.secure:
            return
        raise ProtocolError("tls_required", "this server takes passwords over TLS only: connect "
                    "with TLS")

    def _take(self, buckets: dict[str, TokenBucket], key: str, burst: int,
              rate: float) -> None:
        bucket = buckets.get(key)
        if bucket is None:
            if len(buckets) > 100_000:  # forget the full ones: they are as if new
                for k in [k for k, b in buckets.items() if b.retry_after() == 0]:
                    del buckets[k]
            bucket = buckets[key] = TokenBucket(rate, burst, self._clock)
        if not bucket.take():
            raise ProtocolError("too_many_logins", "too many password attempts; wait before trying "
                        "again", retry_after=round(min(bucket.retry_after(), 3600), 3))

    def _limit_address(self, address: str) -> None:
        limits = self.settings.limits
        self._take(self._by_address, address, limits.address_burst, limits.address_rate)

    def _recent_failures(self, key: str) -> float:
        count, at = self._failures.get(key, (0.0, 0.0))
        if not count:
            return 0.0
        elapsed = max(0.0, self._clock.seconds() - at)
        return float(count * 0.5 ** (elapsed / self.settings.limits.account_half_life))

    def _failed(self, key: str) -> None:
        """Count a failed password check against the account `key`."""
        if len(self._failures) > 100_000:  # forget the faded ones: they are as if new
            free = self.settings.limits.account_free
            for k in [k for k in self._failures if self._recent_failures(k) < free]:
                del self._failures[k]
        self._failures[key] = (self._recent_failures(key) + 1, self._clock.seconds())

    async def _turn(self, key: str, address: str) -> tuple[str, str]:
        """Wait for the account `key`'s delay before its password is checked; the
        returned slot (released by `_done`) keeps this address to one check on it at a
        time. The per-address limit is taken first, so an address over it waits for
        nothing here and counts for nothing."""
        self._limit_address(address)
        slot = (key, address)
        now = self._clock.seconds()
        busy = self._checking.get(slot)
        if busy is not None:
            raise ProtocolError("too_many_logins", "a password check on this account from your "
                                "address is under way; wait for its answer",
                                retry_after=round(min(max(busy - now, 1.0), 3600), 3))
        delay = self.settings.limits.delay(self._recent_failures(key))
        metrics.LOGIN_DELAY.observe(delay)
        self._checking[slot] = now + delay
        if delay > 0:
            try:
                await deferLater(cast(IReactorTime, self._clock), delay)
            except BaseException:
                self._done(slot)
                raise
        return slot

    def _done(self, slot: tuple[str, str]) -> None:
        self._checking.pop(slot, None)

    # -- hashing, off the reactor thread --------------------------------------------------

    def _thread(self, fn: Callable[..., Any], *args: Any) -> Deferred[Any]:
        """On the thread pool of the reactor the server runs on (not the store's thread:
        a hash must not hold up match writes)."""
        reactor = self._archive.reactor
        return deferToThreadPool(reactor, reactor.getThreadPool(), fn, *args)

    def _hashed(self, fn: Callable[..., Any], *args: Any) -> Deferred[Any]:
        """`fn` (a hash) on the thread pool once one of the server's `hashes` is free, so
        memory and CPU stay bounded whatever the load; past `hash_queue` waiting, refused
        with `server_busy`."""
        gate = self._hashing
        if gate.tokens == 0 and len(gate.waiting) >= self.settings.hash_queue:
            log.warn("too many password checks at once: refused one with server_busy",
                     waiting=len(gate.waiting))
            raise ProtocolError("server_busy", "the server is busy checking passwords; try "
                                "again shortly", retry_after=BUSY_RETRY)
        return gate.run(self._thread, fn, *args)

    def _hash(self, password: str) -> Deferred[str]:
        return self._hashed(self._hasher.hash, password)

    def _verify(self, hashed: str | None, password: str) -> Deferred[bool]:
        """Whether `password` matches; with no hash, a dummy is checked all the same, so
        an unknown name takes as long to refuse as a wrong password."""
        hasher = self._hasher

        def verify() -> bool:
            target = hashed
            if target is None:  # on this thread too: a hash is slow wherever it is made
                if self._dummy is None:
                    self._dummy = hasher.hash(secrets.token_urlsafe(16))
                target = self._dummy
            try:
                return hasher.verify(target, password)
            except (argon2.exceptions.VerificationError,
                    argon2.exceptions.InvalidHashError):
                return False

        return self._hashed(verify)

    async def _check(self, stored: str | None, given: str) -> tuple[bool, bool]:
        """Whether `given` is the password hashed in `stored`, and whether that hash is
        stale (another cost, or of a password set before passwords were NFC: such a one
        is tried as it was typed when its NFC form does not match)."""
        normal = passwords.normalise(given)
        if await self._verify(stored, normal):
            return True, stored is not None and self._hasher.check_needs_rehash(stored)
        if normal != given and await self._verify(stored, given):  # a dummy, unknown too
            return stored is not None, True
        return False, False

    def _store(self, fn: Callable[[Store], T]) -> Deferred[T]:
        """`fn(store)` on the store's thread."""
        return self._archive.use(fn)

    # -- requests -----------------------------------------------------------------------

    async def register(self, caller: Caller, password: str,
                       bot: bool = False) -> Message | TakeOver | None:
        """The caller's name registered as an account (a bot's, with `bot`), logged in;
        None: gone meanwhile."""
        session = caller.session
        self._check_channel(caller)
        if session.account is not None:
            raise ProtocolError("logged_in", "you are logged in to an account already")
        password = check_password(password)
        keys = names.keys(session.name)
        if self.find(session.name) is not None:
            raise ProtocolError("name_registered", "that name is registered already")
        self._limit_address(caller.address)
        hashed = await self._hash(password)
        if self._gone(caller):
            return None
        try:
            name, now = session.name, self._clock.seconds()
            account = await self._store(
                lambda store: store.create_account(name, keys, hashed, now, bot=bot))
        except Conflict:
            raise ProtocolError("name_registered", "that name is registered already") from None
        registered = self.accounts[account] = Account(account, session.name, False, bot)
        for key in keys:
            self.keys[key] = account
        if self._elsewhere is not None:
            self._elsewhere.account_registered(registered)
        login = await self._new_login(account)
        log.info("player {player} registered the name {name!r} as account {account} "
                 "(a bot's: {bot})", player=session.player_id, name=session.name,
                 account=account, bot=bot)
        return self._attach(session, account, login)

    async def login(self, caller: Caller, name: str, password: str | None,
                    token: str | None) -> Message | TakeOver | None:
        """The caller logged in to the account `name`; None: gone meanwhile."""
        session = caller.session
        if password is not None:
            self._check_channel(caller)
        if session.account is not None:
            raise ProtocolError("logged_in", "you are logged in to an account already: log out "
                        "first")
        if session.table is not None and not session.table.closed:
            raise ProtocolError("already_at_table", "leave your table before logging in")
        account = self.find(name)
        if token is not None:
            hashed_token, now = token_hash(token), self._clock.seconds()
            owner = await self._store(lambda store: store.login_account(hashed_token, now))
            if account is None and owner is not None:
                account = await self.lookup(name)
            ok = account is not None and owner == account.id
            login = token
        else:
            assert password is not None
            key = _limit_key(account, name)
            slot = await self._turn(key, caller.address)  # (before the store is asked)
            try:
                if self._gone(caller):
                    return None
                found = account = account or await self.lookup(name)
                stored = None if found is None else await self._store(
                    lambda store: store.password_of(found.id))
                ok, stale = await self._check(stored, password)
                ok = ok and account is not None
                if not ok:
                    self._failed(key)
            finally:
                self._done(slot)
            login = None
            if ok and account is not None and stale:
                # Hashed at another cost, or before passwords were NFC: hash it again
                # now that the password is at hand (when a hash is free: a busy server
                # leaves it to a later login rather than refuse this one).
                try:
                    rehashed = await self._hash(passwords.normalise(password))
                except ProtocolError:
                    rehashed = None
                if rehashed is not None:
                    again, account_id = rehashed, account.id
                    await self._store(lambda store: store.set_password(account_id, again))
        if not ok or account is None:
            log.info("a login as {name!r} from {address} was refused", name=name,
                     address=caller.address)
            raise ProtocolError("bad_login", "wrong name, password or login token")
        banned = self.ban_check(account.id)  # `banned`, or `kicked` for a while
        if banned is not None:
            raise banned
        if self._gone(caller):
            return None
        if login is None:
            login = await self._new_login(account.id)
            try:
                if self._gone(caller):
                    return None
            finally:
                if caller.holds() is not session or session.account is not None:
                    unused, account_id = token_hash(login), account.id
                    await self._store(lambda store: store.revoke_logins(account_id, unused))
        if self._elsewhere is not None and self.session_of(account.id) is None:
            await self._elsewhere.account_session(account.id, session)  # (taken over below)
            if caller.holds() is not session:
                return None
        log.info("player {player} logged in to account {account} from {address}",
                 player=session.player_id, account=account.id, address=caller.address)
        return self._attach(session, account.id, login)

    async def logout(self, session: Session, token: str | None,
                     everywhere: bool) -> Message | None:
        account = session.account
        if account is None:
            raise ProtocolError("not_logged_in", "you are not logged in")
        if session.table is not None and not session.table.closed:
            raise ProtocolError("already_at_table", "leave your table before logging out")
        if everywhere or token is not None:
            revoked = None if everywhere else token_hash(token or "")
            await self._store(lambda store: store.revoke_logins(account, revoked))
        if session.account != account:
            return None
        session.account = None
        self._sessions.rename(session, session.name)  # a guest's name: suffixed
        log.info("player {player} logged out of account {account} (everywhere={all})",
                 player=session.player_id, account=account, all=everywhere)
        return self.describe(session)

    async def passwd(self, caller: Caller, old: str, new: str) -> Message | None:
        """A new password for the caller's account, its other logins revoked."""
        session = caller.session
        self._check_channel(caller)
        account = session.account
        if account is None:
            raise ProtocolError("not_logged_in", "you are not logged in")
        new = check_password(new)
        key = _limit_key(self.accounts.get(account), session.name)
        slot = await self._turn(key, caller.address)
        try:
            stored = await self._store(lambda store: store.password_of(account))
            right = (await self._check(stored, old))[0]
            if not right:
                self._failed(key)
        finally:
            self._done(slot)
        if not right:
            raise ProtocolError("bad_login", "the old password is wrong")
        hashed = await self._hash(new)
        login = secrets.token_urlsafe(32)
        kept, now = token_hash(login), self._clock.seconds()
        await self._store(lambda store: _set_password(store, account, hashed, kept, now))
        log.info("account {account} changed its password; its other logins are revoked",
                 account=account)
        return self.describe(session, login) if session.account == account else None

    @staticmethod
    def _gone(caller: Caller) -> bool:
        """After a wait: whether the connection let the session go (nothing to answer);
        one that became another's or an account's meanwhile is told (a guard: a
        connection's requests are handled in turn, so two logins never overlap on one)."""
        holds = caller.holds()
        if holds is None:  # closed, or replaced by another connection
            return True
        if holds is not caller.session or caller.session.account is not None:
            raise ProtocolError("logged_in", "you are logged in to an account already")
        return False

    async def _new_login(self, account: int) -> str:
        login = secrets.token_urlsafe(32)
        hashed, now = token_hash(login), self._clock.seconds()
        await self._store(lambda store: store.issue_login(account, hashed, now))
        return login

    def _attach(self, session: Session, account: int, login: str) -> Message | TakeOver:
        """Make the session the account's and answer with who it is now; if the
        account has another session, the caller's connection is to take that one over."""
        other = self.session_of(account)
        if other is None or other is session:
            session.account = account
            self._sessions.rename(session, self.accounts[account].name, exact=True)
            return self.describe(session, login)
        return TakeOver(other, login)


@dataclass(frozen=True)
class TakeOver:
    """A login into an account that has a session already: the caller's connection
    takes `session` over (its own is forgotten), then is told who it is
    (`Accounts.describe`, with the `login` token)."""

    session: Session
    login: str


def _limit_key(account: Account | None, name: str) -> str:
    """What an account's login limit is kept under: the account itself, so every
    look-alike spelling of its name shares one; for a name no account has, its key."""
    return f"#{account.id}" if account is not None else names.keys(name)[0]


def is_local(peer: IAddress) -> bool:
    """A loopback or UNIX-socket peer: what it sends never crosses a network."""
    host = getattr(peer, "host", None)
    if not isinstance(host, str):
        return True  # UNIX sockets
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_password(password: str) -> str:
    """A new password, normalised (`protocol/passwords.py`), or the refusal."""
    password = passwords.normalise(password)
    refused = passwords.problem(password)
    if refused is not None:
        code, message = refused
        if code == "weak_password":
            raise ProtocolError("weak_password", message, limit=MIN_PASSWORD)
        raise ProtocolError("bad_password", message)
    return password
