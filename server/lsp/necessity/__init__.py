"""Necessity analysis in the editor (`editFidelity.analyzeNecessity`): the analysis (`analysis.py`), the
environment its test runs use (`environment.py`) and what the editor shows of it (`views.py`).
"""
