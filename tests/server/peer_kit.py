"""A session's peer for tests that drive sessions and the lobby without a socket."""

from pisyedili.server.table.effects import Message


class Peer:
    """A session's connection (`session.Peer`) that records what it is sent, and
    whether a newer connection replaced it."""

    def __init__(self) -> None:
        self.sent: list[Message] = []
        self.was_replaced = False

    def send_message(self, msg: Message) -> None:
        self.sent.append(msg)

    def replaced(self) -> None:
        self.was_replaced = True
