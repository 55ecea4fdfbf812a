"""The keys' prefix and the Lua scripts the cluster runs in Redis: each changes or
reads several keys in one step, as no other client's command can come between."""

PREFIX = "pisyedili:"


def ms(seconds: float) -> int:
    """A TTL in Redis's milliseconds: never 0, which Redis refuses."""
    return max(1, int(seconds * 1000))


CLAIM = """
for i, key in ipairs(KEYS) do
  local holder = redis.call('GET', key)
  if holder and holder ~= ARGV[1] then return 0 end
end
for i, key in ipairs(KEYS) do redis.call('SET', key, ARGV[1], 'PX', ARGV[2]) end
return 1
"""
"""Every key of a name for one player, or none."""

RELEASE = """
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then redis.call('DEL', key) end
end
return 1
"""
"""A player's keys go; another's (claimed since they expired) stay."""

COUNT = """
redis.call('HINCRBY', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
local total = 0
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields, 2 do
  if fields[i] == ARGV[1] or redis.call('EXISTS', ARGV[4] .. fields[i]) == 1 then
    total = total + tonumber(fields[i + 1])
  else
    redis.call('HDEL', KEYS[1], fields[i])
  end
end
return total
"""
"""One address's connections over the processes still alive (a dead one's are dropped)."""


TAKE = """
local holder = redis.call('HGET', KEYS[1], 'process')
if holder and holder ~= ARGV[1] and redis.call('EXISTS', ARGV[3] .. holder) == 1 then
  return holder
end
redis.call('HSET', KEYS[1], 'process', ARGV[1])
if ARGV[5] then redis.call('HSET', KEYS[1], 'summary', ARGV[5]) end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[4])
return 1
"""
"""A table whose holder's lease ran out (or that none holds) for this process (and
its lobby row, when one is given): the table's lease is its `table:ID` key, renewed
with the process's own. Refused, it names the live process that holds it."""

FORWARD = """
local now = tonumber(redis.call('GET', KEYS[1]) or '0')
if now < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end
return 1
"""
"""A counter set to at least a value: a Redis that restarted empty hands out no id
this process has seen."""

KEEP = """
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
"""
"""A hash's fields written and given its TTL, at once."""

RENEW = """
for _, key in ipairs(KEYS) do redis.call('PEXPIRE', key, ARGV[1]) end
return #KEYS
"""
"""Many keys' TTL renewed in one command: a beat of a process holding thousands of
sessions is a few replies to read, not one a key (which stalled its tables' moves)."""

RENEW_CHUNK = 500
"""Keys a `RENEW` takes: Redis runs a script alone, so a long one would hold up the
other processes' commands."""

HOLDER = """
local holder = redis.call('HGET', KEYS[1], 'process')
if holder and redis.call('EXISTS', ARGV[1] .. holder) == 1 then return holder end
return false
"""
"""The process holding a session, if its lease is alive."""

TAKE_SESSION = """
local holder = redis.call('HGET', KEYS[1], 'process')
if holder and holder ~= ARGV[1] and redis.call('EXISTS', ARGV[3] .. holder) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], 'player', ARGV[4], 'name', ARGV[5], 'process', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
"""
"""A session whose holder's lease ran out (or that none holds) for this process."""

LEASE = """
local held = redis.call('EXISTS', KEYS[1])
redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
return held
"""
"""This process's lease renewed; 0 if it had run out (the process was paused, or
stalled, for longer than a lease): the others may have taken it for dead since."""

HOLD = """
local holder = redis.call('HGET', KEYS[1], 'process')
if holder and holder ~= ARGV[1] then return holder end
redis.call('HSET', KEYS[1], 'process', ARGV[1])
if ARGV[4] then redis.call('HSET', KEYS[1], 'summary', ARGV[4]) end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[3])
return 1
"""
"""A table of this process written (with its lobby row, when one is given) unless
another process holds it now, alive or not: that one took it over while this one was
taken for dead, and the journal's fence, which is that one's now, lets this one's copy
go at its next write. Refused, it names the holder. (`TAKE` is for a table nobody
holds alive; this is for one this process already holds.)"""

KEEP_SESSION = """
local holder = redis.call('HGET', KEYS[1], 'process')
if holder and holder ~= ARGV[2] and redis.call('EXISTS', ARGV[3] .. holder) == 1 then
  return holder
end
redis.call('HSET', KEYS[1], unpack(ARGV, 4))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
"""
"""A session of this process written again, unless another live process holds it now
(it took the session over while this one was taken for dead): refused, it names it."""

REWRITE_SESSION = """
local holder = redis.call('HGET', KEYS[1], 'process')
if holder and holder ~= ARGV[2] and holder ~= ARGV[3]
    and redis.call('EXISTS', ARGV[4] .. holder) == 1 then
  return holder
end
redis.call('HSET', KEYS[1], unpack(ARGV, 5))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
"""
"""A session handed to this process by its old home (`ARGV[2]`), whose record may
still name that home: written for this one, unless another live process holds it now
(it took the session over meanwhile): refused, it names it."""

CLOSE = """
local holder = redis.call('HGET', KEYS[1], 'process')
if holder and holder ~= ARGV[1] then return holder end
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[2])
if KEYS[3] and redis.call('GET', KEYS[3]) == ARGV[2] then redis.call('DEL', KEYS[3]) end
return 1
"""
"""A table's keys deleted (its lease, its place in the list, its invite code) only
while its `process` is still this one: a process taken for dead that closes or lets go
of its copy must not delete the lease of the process that took the table over."""

KEEP_CODE = """
local held = redis.call('GET', KEYS[1])
if held and held ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""
"""The invite code of a table this process took over, written for it unless another
table holds the code (claimed since the old holder's key ran out): that key, if it is
still alive, names this same table and is this process's to renew from now on."""

DROP_SESSION = """
local holder = redis.call('HGET', KEYS[1], 'process')
if holder and holder ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
for i = 2, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[2] then redis.call('DEL', KEYS[i]) end
end
return 1
"""
"""A session's key deleted, and its name's keys (those still its player's), only while
its `process` is still this one: a process that took a table over restores its
members' sessions under the same player ids, so a name key's value alone cannot tell
whose it is now."""


GONE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local heard = redis.call('PUBSUB', 'NUMSUB', ARGV[1])
if tonumber(heard[2]) > 0 then return 0 end
redis.call('DEL', KEYS[1])
return 1
"""
"""A process's lease deleted if nobody listens on its channel now (its connections to
Redis closed: it died): 1; 0 if it listens again; -1 if its lease had gone already."""
