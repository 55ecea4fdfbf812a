"""The running service: options and start-up, logs, LAN discovery, recovery after a restart."""
