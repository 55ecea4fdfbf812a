"""`pisyedili-server`'s subcommands, which work on the store or the cluster rather
than run a server: `backup`, `operator` and `status`."""

from __future__ import annotations

import getpass
import sys
import time
from pathlib import Path
from typing import IO, Any, ClassVar

from twisted.python import usage

from pisyedili.protocol import passwords
from pisyedili.server.cluster import ClusterAddress
from pisyedili.server.people import accounts as accounts_
from pisyedili.server.people import names
from pisyedili.server.people.accounts import OPERATORS_EVERY
from pisyedili.server.service import status as status_
from pisyedili.server.store import (
    MEMORY,
    Conflict,
    Store,
    StoreError,
    backup_file,
    default_path,
    is_url,
    open_store,
    pg_dump_command,
    public,
)


class StoreCommandOptions(usage.Options):
    """The options of a subcommand that works on the store's file, not a server."""

    synopsis = ""
    optParameters: ClassVar[list[list[Any]]] = [
        ["db", None, None, "The server's database (default: the one the server uses by "
         "default, in the per-user data directory)."],
    ]

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]

    def getSynopsis(self) -> str:
        """The subcommand's own usage line (usage would prefix all the server's)."""
        return f"Usage: pisyedili-server {self.synopsis}"

    @property
    def path(self) -> str:
        """The database this subcommand works on."""
        return str(self["db"] or default_path())


class BackupOptions(StoreCommandOptions):
    """`pisyedili-server backup [--db PATH|URL] DEST`: copy the store, server running or not."""

    synopsis = "backup [--db PATH|URL] DEST"

    def parseArgs(self, *args: str) -> None:
        if len(args) != 1:
            raise usage.UsageError("name one destination file (or, for PostgreSQL, "
                                   "database)")
        self["dest"] = args[0]


def backup(options: BackupOptions) -> None:
    """Copy the database, consistent while the server writes: a SQLite file through
    SQLite's online backup; a PostgreSQL database into another, empty one (COPY from one
    snapshot). To a file, PostgreSQL's own pg_dump does it: the command is printed."""
    source = options.path
    dest = options["dest"]
    if source == MEMORY:
        print(f"{sys.argv[0]} backup: an in-memory database has nothing to back up",
              file=sys.stderr)
        raise SystemExit(2)
    if is_url(source) and not is_url(dest):
        print(f"{sys.argv[0]} backup: a PostgreSQL database is backed up to a file with "
              f"pg_dump:\n  {pg_dump_command(source, dest)}\n(or name an empty "
              "database, postgresql://..., to copy it into)", file=sys.stderr)
        raise SystemExit(2)
    try:
        if is_url(source):
            store = open_store(source)
            try:
                store.backup(dest)
            finally:
                store.close()
        else:
            backup_file(source, dest)
    except (OSError, StoreError, RuntimeError) as e:
        print(f"{sys.argv[0]} backup: {e}", file=sys.stderr)
        raise SystemExit(1) from None
    print(f"backed up {public(source)} to {public(dest)}")


class OperatorOptions(StoreCommandOptions):
    """`pisyedili-server operator [--db PATH] add|remove NAME | list`."""

    synopsis = "operator [--db PATH|URL] add NAME | remove NAME | list"

    def parseArgs(self, *args: str) -> None:
        if args[:1] == ("list",) and len(args) == 1:
            self["action"], self["name"] = "list", None
        elif args[:1] in (("add",), ("remove",)) and len(args) == 2:
            self["action"], self["name"] = args
        else:
            raise usage.UsageError("say add NAME, remove NAME or list")


def operator(options: OperatorOptions, stdin: IO[str] | None = None) -> None:
    """Flag accounts as operators in the store, whether the server runs or not (the
    running server reads the flags every `OPERATORS_EVERY` seconds, and an account new
    to it at its first login; `--operator` needs a restart).
    `add` creates the account when none has the name, asking for its password."""
    path = options.path
    adding = options["action"] == "add"
    if path == MEMORY or not (adding or is_url(path) or Path(path).is_file()):
        print(f"{sys.argv[0]} operator: no database at {path}", file=sys.stderr)
        raise SystemExit(1)
    name = options["name"]
    created = False
    try:
        if adding and not is_url(path):
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        store = open_store(path)
        try:
            if options["action"] == "list":
                for listed in store.operators():
                    print(listed)
                return
            if not accounts_.set_operator(store, name, adding):
                if not adding:
                    print(f"{sys.argv[0]} operator: no account is named {name!r}",
                          file=sys.stderr)
                    raise SystemExit(1)
                name = _new_operator(store, name, sys.stdin if stdin is None else stdin)
                created = True
        finally:
            store.close()
    except (OSError, StoreError, RuntimeError) as e:
        print(f"{sys.argv[0]} operator: {e}", file=sys.stderr)
        raise SystemExit(1) from None
    done = "a new account, now an operator" if created else \
        "now an operator" if adding else "no longer an operator"
    print(f"{name}: {done} (a running server reads it within {OPERATORS_EVERY:g} s)")


def _new_operator(store: Store, name: str, stdin: IO[str]) -> str:
    """Create the account `name` as an operator, its password read from the terminal
    (twice, unechoed) or, when stdin is no terminal, one line of stdin (for scripts).
    Exits with status 1 on a name or password the server would refuse."""
    me = f"{sys.argv[0]} operator"
    try:
        name = names.accept(name)
    except names.BadName as e:
        print(f"{me}: the name {e}", file=sys.stderr)
        raise SystemExit(1) from None
    print(f"{me}: no account is named {name!r}: creating it", file=sys.stderr)
    if stdin.isatty():
        password = getpass.getpass(f"Password for {name}: ")
        if getpass.getpass("Again: ") != password:
            print(f"{me}: the two passwords differ; nothing was changed", file=sys.stderr)
            raise SystemExit(1)
    else:
        password = stdin.readline().removesuffix("\n").removesuffix("\r")
    password = passwords.normalise(password)
    refused = passwords.problem(password)
    if refused is not None:
        print(f"{me}: {refused[1]}; nothing was changed", file=sys.stderr)
        raise SystemExit(1)
    hashed = accounts_.HashCost().hasher().hash(password)  # the server's cost
    try:
        accounts_.add_account(store, name, hashed, time.time(), operator=True)
    except Conflict:  # registered meanwhile, by a look-alike
        print(f"{me}: the name {name!r} was registered meanwhile; run this again",
              file=sys.stderr)
        raise SystemExit(1) from None
    return name


class StatusOptions(StoreCommandOptions):
    """`pisyedili-server status [--db PATH|URL] [--cluster URL] [--json]`."""

    synopsis = "status [--db PATH|URL] [--cluster redis://HOST:PORT/N] [--json]"
    optParameters: ClassVar[list[list[Any]]] = [
        *StoreCommandOptions.optParameters,
        ["cluster", None, None, "The cluster's Redis: its live processes, with what each "
         "holds (without it, the store alone cannot tell whether a server runs)."],
    ]
    optFlags: ClassVar[list[list[Any]]] = [["json", None, "Print JSON, for scripts."]]

    def postOptions(self) -> None:
        if self["cluster"] is not None:
            try:
                ClusterAddress.parse(self["cluster"])
            except ValueError as e:
                raise usage.UsageError(f"--cluster: {e}") from None


def status(options: StatusOptions) -> None:
    """The cluster's live processes (with `--cluster`) and the store's open tables and
    sessions (with `--db`, or without `--cluster`: the default store)."""
    path = options.path if options["db"] or options["cluster"] is None else None
    status_.status(options["cluster"], path, bool(options["json"]))
