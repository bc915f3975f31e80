"""The necessity studies: is the reference-free excess (ddmin over units, the tests run in the sandbox) a
valid estimate of the gold-based one? `study.py` on the suites, `figures.py` its records and renderings,
`overedits.py` on the labelled over-edit corpus.
"""
