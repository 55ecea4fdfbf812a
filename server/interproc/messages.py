"""Every kind of message between processes: its fields, their types, its version.

A message is a dict (it crosses Redis as msgpack) whose `k` names its kind and whose
`v` is the version of this set of schemas it was written to (`VERSION`; a message
without one was written by a process from before versions, whose messages are those
of version 1). Each kind is a `TypedDict` below, read through `decode`, which checks
the kind, the version and every field the kind requires, and refuses the rest with a
`Refused` that says why.

What a version may change: a kind's new optional field keeps the version (a reader
that does not know it ignores it, as `decode` lets unknown fields pass); a new kind,
a new required field, a field renamed or read differently make a new version. A
process reads the versions in `SPOKEN`, so two versions can run side by side while
a cluster is upgraded one process at a time only if each reads the other's
(docs/operating.md, "Running a cluster").
"""

import types
from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    NotRequired,
    TypedDict,
    Union,
    cast,
    get_args,
    get_origin,
    get_type_hints,
)

VERSION = 2
"""The version of the messages this process writes (2 adds the kind `held`)."""

SPOKEN: frozenset[int] = frozenset({1, 2})
"""The versions of the messages this process reads."""


class Refused(ValueError):
    """A message this process does not read: why, and of which kind and version."""

    def __init__(self, reason: str, kind: object = None, version: object = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind = kind
        self.version = version


# -- a player's requests and frames, between its home and its table's owner ----------


_Sent = TypedDict("_Sent", {"from": str})
"""The process that sent a message, where the receiver answers it or names it
(`from` is a Python keyword: hence this spelling)."""


class _Account(TypedDict):
    """The account a player is logged in to, on a store every process shares."""

    a: NotRequired[int]
    op: NotRequired[bool]
    bot: NotRequired[bool]


class Req(_Account, _Sent):
    """Home to owner: a client's request for the table there, already checked."""

    k: Literal["req"]
    v: NotRequired[int]
    p: str
    name: str
    features: list[str]
    type: str
    msg: dict[str, Any]
    rid: int | None
    n: NotRequired[int]
    """The home's number for this request, which its reply carries back (`Out.n`)."""


class Cmd(_Account, _Sent):
    """Home to owner: the visitor's connection dropped (`gone`), came back (`back`),
    or its player left (`leave`)."""

    k: Literal["cmd"]
    v: NotRequired[int]
    p: str
    c: str
    name: str
    features: list[str]


class Out(TypedDict):
    """Owner to home: one frame for the player, encoded as its connection writes it."""

    k: Literal["out"]
    v: NotRequired[int]
    p: str
    b: bytes
    n: NotRequired[int]
    """This frame is the reply to request `n` (`Req.n`)."""


class Held(_Sent):
    """Owner to home: the reply to request `rid` (`n`) is not written yet, but this
    process holds it (its journal, say, waits for the store): the home keeps waiting.
    Said every third of a lease until the reply goes."""

    k: Literal["held"]
    v: NotRequired[int]
    p: str
    rid: int
    n: NotRequired[int]


class Close(TypedDict):
    """Owner to home: the owner closed the player's link."""

    k: Literal["close"]
    v: NotRequired[int]
    p: str


class At(TypedDict):
    """Owner (or a taker) to home: the player sits at table `t` of `owner`, or at
    none (`t` None; `lost`: not of its own doing)."""

    k: Literal["at"]
    v: NotRequired[int]
    p: str
    t: int | None
    owner: NotRequired[str]
    back: NotRequired[bool]
    lost: NotRequired[str]


# -- a session that moves --------------------------------------------------------------


class Hand(_Sent):
    """New home to old home: hand over the session of token hash `h`."""

    k: Literal["hand"]
    v: NotRequired[int]
    p: str
    h: bytes
    features: list[str]


class Handed(_Account):
    """Old home to new home: the session handed (`ok`), with its table, or not (`to`:
    the process it went to already)."""

    k: Literal["handed"]
    v: NotRequired[int]
    p: str
    ok: bool
    to: NotRequired[str]
    name: NotRequired[str]
    t: NotRequired[int | None]
    owner: NotRequired[str]
    silent: NotRequired[bool]


class Adopt(_Account, _Sent):
    """A stopping process to a live one: hold this session from now on."""

    k: Literal["adopt"]
    v: NotRequired[int]
    p: str
    h: bytes
    name: str
    address: str
    t: int | None
    owner: NotRequired[str]


class Adopted(_Sent):
    """The answer to `adopt`: held (`ok`) once the journal has it, or not."""

    k: Literal["adopted"]
    v: NotRequired[int]
    p: str
    ok: NotRequired[bool]


class Homeless(_Sent):
    """To every process: the session of `p` was rebuilt on the sender, its home now
    (in an `ask`, each answers the table it seats `p` at, if any: `t` and `owner`; or
    `taking`, while it places the members of tables it took over)."""

    k: Literal["homeless"]
    v: NotRequired[int]
    p: str


# -- the store's and the operators' word, told to every process -------------------------


class AccountMsg(TypedDict):
    """An account registered through another process (a shared store)."""

    k: Literal["account"]
    v: NotRequired[int]
    a: int
    name: str
    op: bool
    bot: bool


class SanctionMsg(TypedDict):
    """A ban or mute put in force (`op` keep) or lifted (`op` lift) elsewhere: its
    fields as `people.moderation` keeps them."""

    k: Literal["sanction"]
    v: NotRequired[int]
    op: Literal["keep", "lift"]
    s: list[Any]


class Kick(TypedDict):
    """A kick (or a ban's `action`) of player `p` made through another process."""

    k: Literal["kick"]
    v: NotRequired[int]
    p: str
    reason: str
    action: NotRequired[str]
    by: NotRequired[str]
    spare: NotRequired[str | None]


class Announce(TypedDict):
    """An operator's announcement, `m` the frame each process sends its players."""

    k: Literal["announce"]
    v: NotRequired[int]
    m: dict[str, Any]


class CloseTable(TypedDict):
    """An operator closes table `t`, held by another process."""

    k: Literal["close_table"]
    v: NotRequired[int]
    t: int
    reason: NotRequired[str]


class Find(TypedDict):
    """An operator looks for player `name` (asked of every process only)."""

    k: Literal["find"]
    v: NotRequired[int]
    name: str


class Ask(_Sent):
    """An act `m` (of `ACTS`) asked of one process, round `r`: it answers."""

    k: Literal["ask"]
    v: NotRequired[int]
    r: int
    m: dict[str, Any]


class Answer(_Sent):
    """What a process did of round `r`'s act, in counts (`a`)."""

    k: Literal["answer"]
    v: NotRequired[int]
    r: int
    a: dict[str, Any]


Message = (Req | Cmd | Out | Held | Close | At | Hand | Handed | Adopt | Adopted | Homeless
           | AccountMsg | SanctionMsg | Kick | Announce | CloseTable | Find | Ask | Answer)

KINDS: dict[str, type[Any]] = {
    cast(str, get_args(get_type_hints(schema)["k"])[0]): schema
    for schema in get_args(Message)}
"""Each kind's schema, by its `k`."""

ACTS = frozenset({"sanction", "find", "kick", "announce", "close_table", "homeless"})
"""The kinds an `ask` may carry (`Ask.m`): an operator's acts, and `homeless` (which
table seats a session rebuilt on the asker)."""

def _fields(schema: type[Any]) -> tuple[dict[str, Any], frozenset[str]]:
    hints = get_type_hints(schema)
    required = cast(frozenset[str], schema.__required_keys__)
    return hints, required


FIELDS = {kind: _fields(schema) for kind, schema in KINDS.items()}
"""Each kind's fields with their types, and those it requires."""


def _fits(value: object, hint: Any) -> bool:
    """Whether `value`, as msgpack gives it back, is of type `hint`."""
    if hint is Any:
        return True
    origin = get_origin(hint)
    if origin is Union or origin is types.UnionType:
        return any(_fits(value, one) for one in get_args(hint))
    if origin is Literal:
        return value in get_args(hint)
    if origin is list:
        (item,) = get_args(hint)
        return isinstance(value, list) and all(_fits(one, item) for one in value)
    if origin is dict:
        return isinstance(value, dict) and all(isinstance(key, str) for key in value)
    if hint is type(None):
        return value is None
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, hint)


def encode(message: Mapping[str, Any]) -> dict[str, Any]:
    """`message` as it is sent: stamped with this process's `VERSION`."""
    return {**message, "v": VERSION}


def decode(message: object) -> Message:
    """`message` as it came from another process, if this process reads it: of a
    version in `SPOKEN` and a known kind, with every field its kind requires, each of
    its type (an unknown field is let pass: a later version's optional one).
    Raises `Refused` otherwise."""
    if not isinstance(message, dict):
        raise Refused(f"not a message but {type(message).__name__}")
    kind, version = message.get("k"), message.get("v", 1)
    if not _fits(version, int) or version not in SPOKEN:
        raise Refused(f"of version {version!r}, where this process reads "
                      f"{', '.join(map(str, sorted(SPOKEN)))}", kind, version)
    if not isinstance(kind, str) or kind not in KINDS:
        raise Refused(f"of an unknown kind {kind!r}", kind, version)
    hints, required = FIELDS[kind]
    missing = sorted(required - message.keys())
    if missing:
        raise Refused(f"a {kind!r} without {', '.join(missing)}", kind, version)
    for field, hint in hints.items():
        if field in message and not _fits(message[field], hint):
            raise Refused(f"a {kind!r} whose {field!r} is not of type {_named(hint)}",
                          kind, version)
    if kind == "ask":
        decode_act(message["m"])
    return cast(Message, message)


def decode_act(act: object) -> Message:
    """An operator's act asked of this process (`Ask.m`): a message of one of `ACTS`."""
    decoded = decode(act)
    if decoded["k"] not in ACTS:
        raise Refused(f"an act of kind {decoded['k']!r}, which is not an operator's",
                      decoded["k"], decoded.get("v", 1))
    return decoded


def _named(hint: Any) -> str:
    return getattr(hint, "__name__", None) or str(hint).replace("typing.", "")
