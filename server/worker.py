"""One ordered worker thread, for blocking work that must not run on the reactor.

The store and the mDNS announcer each need one: calls run one at a time in the order
they were made (a close comes after every write before it), and never queue behind
the reactor's shared pool, where `hard` bots search. The thread is a daemon, so a
server that dies without stopping its services still exits.
"""

from __future__ import annotations

import threading
from typing import Any

from twisted.python.threadpool import ThreadPool


class _DaemonThread(threading.Thread):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.daemon = True


def serial_pool(name: str, minthreads: int = 0) -> ThreadPool:
    """A pool of at most one daemon thread (`minthreads=1`: started with the pool)."""
    pool = ThreadPool(minthreads=minthreads, maxthreads=1, name=name)
    pool.threadFactory = _DaemonThread
    return pool
