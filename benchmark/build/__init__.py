"""Making benchmark data: `bench make-suite` (`make_suite.py`, its arguments in `make_suite_cli.py`, its output
in `suite_writer.py`), the corruption generator it uses (`corruptions/`), and the labelled over-edit corpus
(`overedits/`: `python -m benchmark.build.overedits make`)."""
