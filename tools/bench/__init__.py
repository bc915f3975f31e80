"""Speed and acceptance scripts: `python -m tools.bench.<name>` from the repository root."""
