"""`python -m benchmark.suites.codeeditorbench download | check`: see `cli`."""

import sys

from benchmark.datadir import run_script
from benchmark.suites.codeeditorbench.cli import main

sys.exit(run_script(main))
