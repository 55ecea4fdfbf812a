"""Benchmarks (`pisyedili-bench`): never imported by the server at run time."""
