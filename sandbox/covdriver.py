"""Run a Python program under coverage.py inside the sandbox (copied next to a private coverage copy).

Usage: python covdriver.py REPORT.json PROGRAM.py [ARGS...]

Behaves like `coverage run PROGRAM.py` (same exit code, traceback on stderr) and then writes the
executed/missing/excluded lines of every measured file in the work dir to REPORT.json. Exclusions:
coverage's default `pragma: no cover` plus CanItEdit's `@(abc\\.)?abstractmethod`.
This file runs under the sandbox's interpreter, so it uses only the standard library and coverage.
"""

import json
import os
import runpy
import sys
import traceback

EXCLUDE = r"@(abc\.)?abstractmethod"


def main() -> int:
    report_path, program, *args = sys.argv[1:]
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "site"))
    import coverage

    del sys.path[0]
    workdir = os.getcwd()
    cov = coverage.Coverage(data_file=None, config_file=False, include=[os.path.join(workdir, "*")])
    cov.exclude(EXCLUDE)
    sys.argv = [program, *args]
    sys.path[0] = os.path.dirname(os.path.abspath(program))  # as `python PROGRAM.py` would
    code = 0
    cov.start()
    try:
        runpy.run_path(program, run_name="__main__")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if exc.code is not None and not isinstance(exc.code, int):
            print(exc.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 - what the interpreter would print
        traceback.print_exc()
        code = 1
    finally:
        cov.stop()
    files = {}
    for path in cov.get_data().measured_files():
        _, statements, excluded, missing, _ = cov.analysis2(path)
        missing_set = set(missing)
        files[os.path.relpath(path, workdir)] = {
            "executed": sorted(s for s in statements if s not in missing_set),
            "missing": sorted(missing),
            "excluded": sorted(excluded),
        }
    with open(report_path, "w", encoding="utf-8") as fh:
        json.dump(files, fh)
    sys.stdout.flush()
    sys.stderr.flush()
    return code


if __name__ == "__main__":
    sys.exit(main())
