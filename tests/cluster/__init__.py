"""The cluster tests: a real redis-server and real server processes."""
