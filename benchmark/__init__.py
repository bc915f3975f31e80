"""Benchmark replays of published code-editing suites through the edit-fidelity server."""
