"""The twistd dropin: `twistd pisyedili` runs the server (see pisyedili.server.service.tap)."""

from twisted.application.service import ServiceMaker

pisyedili = ServiceMaker(
    "Pis Yedili server",
    "pisyedili.server.service.tap",
    "A Pis Yedili (Dirty Seven) card game server.",
    "pisyedili",
)
