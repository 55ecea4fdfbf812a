"""Resume tokens kept on disk, one per server and name, so a player whose terminal closed
(or whose machine rebooted) gets their session, and their seat, back on the next
`pisyedili HOST --name NAME`, and another name on the same server is another session.

The file is JSON, `{key: {"token", "name", "saved_at", "holder", "host"}}` (and the logins
kept by `/login`, per server and account name:
`{"@logins": {server key: {name key: {"name", "token", "saved_at"}}}}`), in the per-user state
directory (`platformdirs.user_state_dir`). A token is a password to the session, so the
file is written readable by its owner alone (mode 0600) and never logged. On Windows the
mode bits mean little; the file lives in the user's own profile, which is private already.

Each change is a read and a write under the file's lock (`sessions.json.lock`), as two
terminals of one user may save at the same moment; the write goes to a temporary file
in the same folder and `os.replace`s the old one, so a crash mid-write leaves the
previous file whole. A file that cannot be read is ignored
with a warning (a lost token only costs a fresh session) and replaced by the next save.
Nothing here raises for a disk problem: the game goes on without the file.

`holder` and `host` name the client process using the session now (`in_use`), so a
second client of the same user and name asks before it takes the seat over; a holder
that has exited (a closed terminal, a crash) holds nothing.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from twisted.logger import Logger

from pisyedili.server.store.files import FileInUse, FileLock, private_dir

log = Logger()

APP_NAME = "pisyedili"
FILE_NAME = "sessions.json"
LOGINS = "@logins"
"""The file's key for remembered logins (server keys never start with `@`)."""


def default_path() -> Path:
    """Where the tokens live unless a caller says otherwise."""
    from platformdirs import user_state_dir

    return Path(user_state_dir(APP_NAME)) / FILE_NAME


@dataclass(frozen=True)
class Saved:
    """A session to resume: the server's token and the name it welcomed us with."""

    token: str
    name: str
    saved_at: float
    holder: int | None = None
    """The process id of the client using the session now, None once it let go."""
    host: str = ""
    """The machine `holder` runs on."""


def in_use(saved: Saved) -> bool:
    """Whether another client process may be using `saved` now: its holder is alive, or
    runs on another machine (a shared home folder), where this one cannot tell."""
    if saved.holder is None or saved.holder == os.getpid():
        return False
    if saved.host != socket.gethostname() or sys.platform == "win32":
        return True  # os.kill would not merely probe on Windows
    try:
        os.kill(saved.holder, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: alive, someone else's
        return True
    return True


class TokenStore:
    """The tokens file at `path`; each call reads it afresh, so two clients of the same
    user (to different servers) do not undo each other's saves."""

    def __init__(self, path: Path | None = None, shared: bool = True) -> None:
        """`shared`: other processes may change the file too (the user's sessions file),
        so each change takes its lock; a file one process owns already (an offline
        match's, under its journal's lock) needs none."""
        self.path = path if path is not None else default_path()
        self.shared = shared

    def load(self, server: str) -> Saved | None:
        entry = self._read().get(server)
        if not isinstance(entry, dict):
            return None
        token, name, saved_at = entry.get("token"), entry.get("name"), entry.get("saved_at")
        if not isinstance(token, str) or not token or not isinstance(name, str):
            return None
        holder, host = entry.get("holder"), entry.get("host")
        return Saved(token, name, float(saved_at) if isinstance(saved_at, int | float) else 0.0,
                     holder if isinstance(holder, int) else None,
                     host if isinstance(host, str) else "")

    def save(self, server: str, token: str, name: str, holder: int | None = None) -> None:
        """Keep `token` under `server` (its key); `holder`: the process using it now."""
        entry: dict[str, Any] = {"token": token, "name": name, "saved_at": time.time()}
        if holder is not None:
            entry.update(holder=holder, host=socket.gethostname())
        with self._changing() as data:
            data[server] = entry

    def delete(self, server: str, token: str | None = None) -> None:
        """Forget the session under `server`; with `token`, only if it is still that one
        (another client of the same name may have saved its own since)."""
        with self._changing() as data:
            entry = data.get(server)
            if entry is None or (token is not None and isinstance(entry, dict)
                                 and entry.get("token") != token):
                return
            del data[server]

    def release(self, server: str, token: str) -> None:
        """The client using the session under `server` lets go of it, keeping the token
        to come back with."""
        with self._changing() as data:
            entry = data.get(server)
            if (isinstance(entry, dict) and entry.get("token") == token
                    and entry.get("holder") == os.getpid()):
                entry.pop("holder", None)
                entry.pop("host", None)

    # A login is kept apart from the session: a session ends, a login lasts until it is
    # revoked (`/logout`, or a password change elsewhere). It is the server's login
    # token, never the password. Logins are kept per server and account name, so friends
    # sharing one computer (one home folder) each keep their own, and a client started
    # under one name never logs in to another's account.

    def logins(self, server: str) -> list[Login]:
        """Every login remembered for `server`, the most recently used first."""
        found = [login for entry in _logins_of(self._read(), server).values()
                 if (login := _login(entry)) is not None]
        return sorted(found, key=lambda login: login.saved_at, reverse=True)

    def load_login(self, server: str, name: str) -> Login | None:
        """The login remembered for `name` (or a name the server takes for it) on
        `server`."""
        return _login(_logins_of(self._read(), server).get(name_key(name)))

    def save_login(self, server: str, name: str, token: str) -> None:
        """Keep the login token of account `name`; a use of it counts as a save, so the
        entry's `saved_at` says when it was last used."""
        with self._changing() as data:
            _logins_of(data, server)[name_key(name)] = {
                "name": name, "token": token, "saved_at": time.time()}

    def delete_login(self, server: str, name: str) -> None:
        with self._changing() as data:
            _logins_of(data, server).pop(name_key(name), None)

    @contextmanager
    def _changing(self) -> Iterator[dict[str, Any]]:
        """The saved data to change in place, written back if it changed: read and
        written under the file's lock, so two clients of one user saving at the same
        moment each keep their entry (without it, the later write drops the other's)."""
        lock: FileLock | None = None
        try:
            if self.shared:
                private_dir(self.path.parent)
                lock = FileLock.wait(self.path)
        except (FileInUse, OSError) as exc:
            log.warn("cannot lock the saved sessions in {path}: {error}; saving anyway",
                     path=str(self.path), error=type(exc).__name__)
        try:
            data = self._read()
            before = json.dumps(data, sort_keys=True)
            yield data
            if json.dumps(data, sort_keys=True) != before:
                self._write(data)
        finally:
            if lock is not None:
                lock.release()

    def _read(self) -> dict[str, Any]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError) as exc:
            log.warn("cannot read the saved sessions in {path}: {error}; starting afresh",
                     path=str(self.path), error=type(exc).__name__)
            return {}
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            log.warn("the saved sessions file {path} is corrupt; ignoring it (the next save "
                     "replaces it)", path=str(self.path))
            return {}
        return data

    def _write(self, data: dict[str, Any]) -> None:
        folder = self.path.parent
        tmp = folder / f".{self.path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            # Created 0600 from the start: the token is never readable by others, even for
            # the moment before a chmod.
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    json.dump(data, out, ensure_ascii=False, indent=1, sort_keys=True)
                    out.flush()
                    os.fsync(out.fileno())  # a reboot right after must not leave it empty
                os.replace(tmp, self.path)
            except BaseException:
                tmp.unlink(missing_ok=True)
                raise
        except OSError as exc:
            log.warn("cannot save the session to {path}: {error}", path=str(self.path),
                     error=type(exc).__name__)


@dataclass(frozen=True)
class Login:
    """A remembered login: the account's name and the server's login token for it."""

    name: str
    token: str
    saved_at: float


def name_key(name: str) -> str:
    """What `name` is filed under: names the server takes for the same name (case,
    look-alike letters: `names.keys`) share it."""
    from pisyedili.protocol import names

    return names.keys(name)[0]


def _login(entry: object) -> Login | None:
    if not isinstance(entry, dict):
        return None
    name, token, saved_at = entry.get("name"), entry.get("token"), entry.get("saved_at")
    if not isinstance(name, str) or not isinstance(token, str) or not token:
        return None
    return Login(name, token, float(saved_at) if isinstance(saved_at, int | float) else 0.0)


def _logins_of(data: dict[str, Any], server: str) -> dict[str, Any]:
    """The logins of `server` in `data`, by name key, made in `data` if missing. A file
    from before logins were kept per name holds one per server,
    `{"name", "token", "saved_at"}` (its `token` a string, where the new form has only
    entries): it is moved under its account's name."""
    logins = data.get(LOGINS)
    if not isinstance(logins, dict):
        logins = data[LOGINS] = {}
    mine = logins.get(server)
    if isinstance(mine, dict) and isinstance(mine.get("token"), str):
        old = _login(mine)
        mine = {} if old is None else {name_key(old.name): mine}
        logins[server] = mine
    elif not isinstance(mine, dict):
        mine = logins[server] = {}
    return mine


@dataclass(frozen=True)
class ServerLogins:
    """The remembered logins of one server, and the name this client plays under (what
    the client app needs of the file)."""

    store: TokenStore
    server: str
    name: str
    """The player's name (`--name`): the only login this client uses by itself."""

    def mine(self) -> Login | None:
        """The login to log in with on connecting: the one of this client's own name."""
        return self.store.load_login(self.server, self.name)

    def load(self, name: str) -> Login | None:
        return self.store.load_login(self.server, name)

    def save(self, name: str, token: str) -> None:
        self.store.save_login(self.server, name, token)

    def delete(self, name: str) -> None:
        self.store.delete_login(self.server, name)
