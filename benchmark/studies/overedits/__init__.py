"""What the server flags, measured on over-edits whose changes are known:

    python -m benchmark.studies.overedits.classify CORPUS.jsonl    the core's units per kind on the labelled corpus
    python -m benchmark.studies.necessity.overedits CORPUS.jsonl   reference-free against gold-based excess
    python -m benchmark.studies.overedits.real [LABELS]            real model edits against human labels
    python -m benchmark.studies.overedits.models [ARCHIVES...]     recorded CanItEdit runs, per model and kind

The corpus comes from `python -m benchmark.build.overedits make`; `replay.py` sends recorded completions to the
real language server for `real` and `models`.
"""
