"""Development tools, not shipped (pyproject's packages are server, benchmark and sandbox):
speed scripts (`tools/bench`, `make bench`) and test doubles (`tools/doubles`) shared by the tests and
those scripts. Run from the repository root: `python -m tools.bench.<name>`."""
