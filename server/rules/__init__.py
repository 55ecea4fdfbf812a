"""The rules engine: I/O-free, deterministic under a seeded random.Random."""
