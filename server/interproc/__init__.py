"""The messages the processes of a cluster send each other, as `protocol/` is for
clients: one typed schema per kind (`messages`), each message stamped with the
version of the set it belongs to, and read back only once it fits its schema
(`messages.decode`), so a process never acts on a message it does not understand.

The cluster (`cluster/`) carries them; the relay (`net/relay.py`) sends and handles
them. This package does no I/O and imports nothing else of the server.
"""
