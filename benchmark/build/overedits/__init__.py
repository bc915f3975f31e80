"""A labelled corpus of over-edits: gold fixes with known unrequested changes on top.

    python -m benchmark.build.overedits make --from overedit|canitedit|FILE.jsonl --out corpus.jsonl
        [--limit N] [--seed S] [--per-task K] [--tests | --no-tests] [--workers W]
    python -m benchmark.build.overedits make --from codeeditorbench-cpp,codeeditorbench-java,canaicode-js,canaicode-ts ...
        (JavaScript, TypeScript, Java and C++ on tree-sitter: `lang_make.py`; classify adds a table per language)
    python -m benchmark.studies.overedits.classify corpus.jsonl
    python -m benchmark.studies.necessity.overedits corpus.jsonl   (ddmin over units, tests in the sandbox)

Each candidate is the gold edit of a task (original C -> gold G) plus 1 to 4 behaviour-preserving
changes nobody asked for (`transforms.py`), each recorded with its family, the kinds the classifier
must give it and its character spans in the candidate. With `--tests` every candidate's tests run in
the sandbox and only passing candidates are kept (results cached by content, so a second run costs
nothing). Choices are SHA-256 draws (`benchmark.build.corruptions.choice`): the same seed gives the same
corpus on any interpreter.
"""
