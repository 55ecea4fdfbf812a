"""The network: connections, TCP framing, the WebSocket, request handlers and abuse limits."""
