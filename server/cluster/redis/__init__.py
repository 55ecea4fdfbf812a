"""The cluster's shared state in Redis, through txredisapi on the reactor.

txredisapi speaks Redis on the reactor itself: a claim in a `hello` is one more
Deferred in the flow the handlers already have (`Connection.wait_for`), with no
thread to hand results back from, and pub/sub (the next step: requests and updates
between processes) is a protocol on the same reactor. redis-py would need a thread
per blocking subscriber and a hop back to the reactor for every answer.

Keys (all under `pisyedili:`), each with a TTL, so a process that dies leaves
nothing behind for longer than its lease (`--cluster-lease`) or a session's grace:

- `ids:player`, `ids:table`, `ids:process`: counters (INCR);
- `process:P`: this process is alive (its lease, renewed three times a lease);
- `name:KEY`: the player id holding a name key (`names.keys`, SET NX-like, all or none);
- `session:HASH`: a hash (player, name, process) by the token's hash;
- `code:CODE`: the table id of an invite code (SET NX; the process that takes the
  table over holds it from then on, `KEEP_CODE`);
- `table:ID`: a hash, the lobby row (`summary`, JSON) and its `process`;
- `conns:ADDRESS`: a hash, connections from that address by process;
- `tables`: the set of open table ids (a row that expired is dropped from it on read).

Channels (per database): `DB:lobby` carries every table's lobby deltas to every
process (and, op `tell`, a message for all of them: an account registered, a kick's
word to its table); `DB:to:P` the messages for process P (requests to its tables,
updates for its players, an operator's act asked of it and its answer). Payloads are
msgpack. Each process publishes on one link,
so what it publishes arrives in that order.

A connected session's keys and this process's tables and counts are live: renewed
with the lease. A dropped session's keys get its grace as their TTL instead.

Redis may go away (a restart, the network) and come back empty. Every key above is
also held here, in memory, with what it says: while Redis is out of reach the tables
held here play on, the answers that decide fail at once (`base.unavailable`) and
the writes that tell only update that memory; once both links are back, the whole of
it is written again in one go (ids only ever forward, each table and session only if
no other process took it over meanwhile: `HOLD`, `KEEP_SESSION`), before anything
else on the link. The other processes' liveness is judged again only a lease later,
once each of them had the time to write its own keys back. The counters also go on
above the ids the store holds (`count_from`): read before the process joins, and
again each time Redis is back, with no id handed out until that read is in.

A process whose lease ran out while its link stayed up (paused, a stopped VM, or
stalled for longer than a lease) may have been taken for dead: the beat that finds
its lease gone checks every key the same way before renewing any. What another
process holds now is let go here (no longer renewed, written or deleted: a table
`disputed` in `holdings`, `_disowned` keys), and every delete, as a table closes or
the process stops, is a compare-and-delete (`CLOSE`, `DROP_SESSION`): a key goes only
while it names this process, so a woken process never deletes the keys of the one that took over.

A process that dies is seen before its lease runs out: its kernel closes its links to
Redis at once, and with them its subscription to its own channel. Every tick, each
process asks how many listen on the channels of the processes it cares about (those
whose tables it lists, or that it waits on: `watch`), and one publish that reached
nobody asks at once; a process found unsubscribed for a moment (`DeathWatch`) has its
lease deleted, if it is still unsubscribed then (`GONE`, in one step), and `gone` told
for it, as a process that stops tells it: the others take its tables over at once.
A paused process keeps its links, so it waits for its lease; a wrong guess is made
safe by the journal's fence, as a pause past the lease is.

A pause is seen as it ends: the reactor's clock, read once a second, jumped (`_ticked`).
It is said once, and what it made overdue (Redis replies that came while nobody read
them, and the link their timeout drops) is said as its consequence, with no traceback
and no word of a lost Redis, which never went away.

The package: `scripts` (the keys' prefix and the Lua scripts), `links` (the links to
Redis), `state` (what a process holds and knows), `reassertion` (Redis away and back),
`registries` (ids, names, codes, connections, sessions, tables) and `cluster` (the
process's life, the others', the lobby and the messages: `RedisCluster`).
"""

from pisyedili.server.cluster.redis.cluster import RedisCluster
from pisyedili.server.cluster.redis.scripts import GONE, PREFIX
from pisyedili.server.cluster.redis.state import LEASE_SECONDS

__all__ = ["GONE", "LEASE_SECONDS", "PREFIX", "RedisCluster"]
