"""`python -m benchmark.build.overedits make ...` (see the package docstring)."""

from __future__ import annotations

import sys

from benchmark.build.overedits import make


def main() -> int:
    argv = sys.argv[1:]
    if not argv or argv[0] != "make":
        print(
            "usage: python -m benchmark.build.overedits make --out FILE [--from overedit|canitedit|FILE.jsonl] ...",
            file=sys.stderr,
        )
        return 2
    return make.main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
