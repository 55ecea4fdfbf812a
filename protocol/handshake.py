"""Reading `hello` on the server: the version is checked before anything else.

A future version's `hello` may carry fields this schema would refuse; checking
`protocol` first means such a client always learns `unsupported_version` and the
versions spoken here, rather than a confusing `bad_field`. A `hello` without an
integer `protocol` is not a version problem but a malformed `hello`: `missing_field`
or `bad_field`, naming `protocol`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .errors import ProtocolError
from .schema import Direction, request_id, validate
from .version import SUPPORTED_VERSIONS


@dataclass(frozen=True)
class Hello:
    protocol: int
    name: str
    token: str | None
    client: str | None
    version: str | None
    features: tuple[str, ...] | None  # None: the client sent no `features`
    id: int | None


def parse_hello(msg: Mapping[str, Any]) -> Hello:
    """The `hello` in `msg`, or ProtocolError.

    `hello_required` if `msg` is not a `hello`; `missing_field` / `bad_field` (field
    `protocol`) if `protocol` is absent or not an integer; `unsupported_version` (with
    `versions`) if it is an integer not spoken here; then the schema's codes for the
    rest of the `hello`.
    """
    if msg.get("type") != "hello":
        raise ProtocolError("hello_required", "the first message must be 'hello'")
    if "protocol" not in msg:
        raise ProtocolError("missing_field", "protocol is required", field="protocol")
    protocol = msg["protocol"]
    if type(protocol) is not int:  # booleans and floats are not versions
        raise ProtocolError("bad_field", "protocol: must be an integer", field="protocol")
    if protocol not in SUPPORTED_VERSIONS:
        raise unsupported_version(protocol)
    valid = validate(msg, Direction.TO_SERVER)
    features = valid.get("features")
    return Hello(
        protocol=valid["protocol"],
        name=valid["name"],
        token=valid.get("token"),
        client=valid.get("client"),
        version=valid.get("version"),
        features=None if features is None else tuple(features),
        id=request_id(valid),
    )


def unsupported_version(requested: object) -> ProtocolError:
    """The refusal of a version not spoken here; it lists the versions that are."""
    shown = repr(requested)[:32]
    return ProtocolError(
        "unsupported_version",
        f"protocol {shown} is not spoken here; versions: "
        + ", ".join(map(str, SUPPORTED_VERSIONS)),
        versions=list(SUPPORTED_VERSIONS),
    )
