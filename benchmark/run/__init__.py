"""The replay of a suite (`bench run`): the engine and everything it drives while a run is under way.

The engine (`engine.py`) asks the real language server (`session.py`, `local_sessions.py`) for every
(task, condition, sample), with the answers coming from an answer source (`answer_sources.py`: a recorded
run, the gold, the original, a live model behind `endpoint.py` / `balancer.py`, or vLLM started for the run,
`vllm.py`); it judges in the sandbox through the suite (`testrun.py` runs a solution's tests there; a judge may
add `lang_fidelity.py`'s numbers for non-Python answers), runs the optional necessity analysis
(`reference_free.py`) and appends one record per sample (`records.py`, `store.py`; runs recorded earlier are
read by `recorded.py`). `preflight.py` fails what would fail every sample before anything is written;
`progress.py` shows how far a run is. `cluster/` moves the sandbox runs and the server sessions onto a Ray
cluster.
"""
