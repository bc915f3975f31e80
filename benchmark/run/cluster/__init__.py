"""`bench run --ray ADDRESS [--ray-sessions N]`: a run's sandbox executions (`judge.py`) and language-server
sessions (`sessions.py`) on a Ray cluster. Ray is the optional extra `edit-fidelity[ray]`, imported only for
`--ray`."""
