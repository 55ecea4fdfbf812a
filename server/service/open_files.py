"""Room for a socket per connection: the process's limit on open files.

Every connection is a file descriptor, and a shell's default soft limit (1,024 on most
Linux systems) is about the server's default `--max-connections`: past it `accept`
fails with EMFILE and new players are turned away with no error of ours. So, at start,
the soft limit is raised as far as the hard limit allows, and what is still short is
said once, with the fix. Off Unix (no `resource` module) there is nothing to do.
"""

from __future__ import annotations

from twisted.logger import Logger

log = Logger()

RESERVE = 64
"""Descriptors beside the connections: the listening ports, the store and its journal,
the Redis and PostgreSQL links, the reactor's own, logs."""


def fit_open_files(max_connections: int) -> None:
    """Raise the soft limit on open files to what `max_connections` needs (up to the
    hard limit), warning if that is not enough."""
    try:
        import resource
    except ImportError:  # Windows
        return
    wanted = max_connections + RESERVE
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    now = soft
    if target > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            now = target
        except (ValueError, OSError) as e:
            log.warn("could not raise the limit on open files from {soft} to {target}: "
                     "{error}", soft=soft, target=target, error=str(e))
    if now < wanted:
        log.warn("only {now} open files are allowed (RLIMIT_NOFILE, hard limit {hard}), "
                 "fewer than --max-connections {connections} needs ({wanted}): players "
                 "past it are turned away. Raise the limit (ulimit -n, or LimitNOFILE= in "
                 "the unit) or lower --max-connections.", now=now, hard=hard,
                 connections=max_connections, wanted=wanted)
    else:  # (soft was short of it: raised)
        log.info("raised the limit on open files from {soft} to {now} for --max-connections "
                 "{connections}", soft=soft, now=now, connections=max_connections)
