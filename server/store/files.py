"""Files that hold secrets, and the lock that makes a file one process's own.

The database, its backups and the offline journals hold password hashes, the hashes
of session and login tokens and the live deck order: each is created readable by its
owner alone (0600), SQLite's `-wal` and `-shm` files too (SQLite gives them the mode
of the database file, so a database created 0600 keeps them so), and a folder made
for them is 0700. A file an older version left readable to others is tightened when
it is opened. Windows has no such modes: there the chmod is skipped quietly (the
files live in the user's own profile).

`FileLock` is an OS lock on a sidecar `<file>.lock`, held for as long as the process
runs with the file: a second server (or a second `play`) on the same file is refused,
and told which process has it. The OS drops the lock when the process dies, however
it dies, so a crash never leaves a stale lock behind; the file itself stays, holding
the pid of the last holder.
"""

from __future__ import annotations

import os
import stat
import sys
import time
from pathlib import Path

from twisted.logger import Logger

log = Logger()

HAS_MODES = sys.platform != "win32"
"""Whether the platform has Unix permission bits to set."""
PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700
SQLITE_SIDECARS = ("-wal", "-shm", "-journal")
"""The files SQLite keeps beside a database."""
WINDOWS_LOCK_OFFSET = 1 << 30
"""Windows locks are mandatory: the byte locked lies far past the pid, which stays
readable to the process that is refused."""


def private_dir(path: str | os.PathLike[str]) -> Path:
    """The folder `path`, made (with its parents) if missing; each folder made is 0700
    (`mkdir(parents=True)` would give the parents the umask's default, 0755)."""
    folder = Path(path)
    if folder.is_dir():
        return folder
    if not folder.parent.is_dir():
        private_dir(folder.parent)
    try:
        folder.mkdir(mode=PRIVATE_DIR)
    except FileExistsError:
        return folder  # made meanwhile, by another process: its mode is its own
    _chmod(folder, PRIVATE_DIR)  # exactly 0700, whatever the umask took away
    return folder


def private_file(path: str | os.PathLike[str]) -> None:
    """Create `path` empty at 0600, or take the group's and others' bits off it."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE)
    except FileExistsError:
        tighten(path)
    else:
        os.close(fd)
        _chmod(Path(path), PRIVATE_FILE)


def private_database(path: str | os.PathLike[str]) -> None:
    """The SQLite file `path` and whatever SQLite keeps beside it, private (0600)."""
    private_file(path)
    for suffix in SQLITE_SIDECARS:
        sidecar = Path(f"{os.fspath(path)}{suffix}")
        if sidecar.exists():
            tighten(sidecar)


def tighten(path: str | os.PathLike[str]) -> None:
    """Take the group's and others' bits off an existing file (a warning if not ours)."""
    if not HAS_MODES:
        return
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
        if mode & 0o077:
            os.chmod(path, mode & 0o700)
    except FileNotFoundError:
        pass
    except PermissionError as e:
        log.warn("{path} is readable by others and cannot be made private ({error})",
                 path=os.fspath(path), error=str(e))


def _chmod(path: Path, mode: int) -> None:
    if HAS_MODES:
        os.chmod(path, mode)


def lock_path(path: str | os.PathLike[str]) -> Path:
    """The lock file of `path`: beside it, `<name>.lock`."""
    return Path(f"{os.fspath(path)}.lock")


class FileInUse(Exception):
    """Another process holds the lock on `path`."""

    def __init__(self, path: str, pid: int | None) -> None:
        self.path = path
        self.pid = pid
        by = f"process {pid}" if pid is not None else "another process"
        super().__init__(f"{path} is in use by {by}")


class FileLock:
    """An exclusive OS lock on `<path>.lock`, held until `release` or the process's end.

    `flock` on Linux and macOS, `msvcrt.locking` on Windows: both belong to an open
    file, are dropped by the OS when the process dies, and conflict even within one
    process, so a test can hold two at once and see the second refused.
    """

    def __init__(self, path: str, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, of: str | os.PathLike[str]) -> FileLock:
        """The lock of the file `of`, at once, or `FileInUse` naming the holder's pid."""
        path = lock_path(of)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_BINARY", 0),
                     PRIVATE_FILE)
        try:
            tighten(path)
            if not _try_lock(fd):
                raise FileInUse(os.fspath(of), _holder(fd))
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, f"{os.getpid()}\n".encode())
        except BaseException:
            os.close(fd)
            raise
        return cls(os.fspath(path), fd)

    @classmethod
    def wait(cls, of: str | os.PathLike[str], seconds: float = 10.0) -> FileLock:
        """The lock of `of`, waiting up to `seconds` for its holder: for a short
        read-modify-write that another process may be making at the same moment."""
        deadline = time.monotonic() + seconds
        while True:
            try:
                return cls.acquire(of)
            except FileInUse:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.005)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Let the file go (closing the lock file drops the lock); again: nothing."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


def _try_lock(fd: int) -> bool:
    if sys.platform == "win32":
        import msvcrt

        os.lseek(fd, WINDOWS_LOCK_OFFSET, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _holder(fd: int) -> int | None:
    """The pid the holder wrote into the lock file, if it did yet."""
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        text = os.read(fd, 32).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None
