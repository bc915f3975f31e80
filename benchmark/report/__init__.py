"""Reading a run back: its summary (`summary.py`, `bench report` / `bench compare` as text and JSON), the
metrics every suite's summary shares (`metrics.py`), and the self-contained HTML pages (`html.py` for a run,
`compare.py` for several; `charts.py`, `browser.py`, `kinds.py` and the jinja2 `templates/` through
`templating.py`)."""
