"""Debian's `chromium` in headless mode: the DOM of a page after its scripts ran, and screenshots. Used by
the HTML report tests and tools/bench/bench_report.py (no browser download is possible here)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import urlencode

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions")
# virtual time: the DOM is dumped once the page's work is done, however loaded the machine (not for timing)
VIRTUAL = "--virtual-time-budget=5000"


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def url(page: Path, **params: str) -> str:
    return page.resolve().as_uri() + ("?" + urlencode(params) if params else "")


def _run(args: list[str], timeout: float, virtual: bool = True) -> subprocess.CompletedProcess[str]:
    exe = chromium()
    if exe is None:
        raise RuntimeError("chromium is not installed (Debian package `chromium`; scripts/setup installs it)")
    with tempfile.TemporaryDirectory(prefix="chromium-") as profile:  # a fresh profile: runs never share state
        return subprocess.run(
            [exe, *FLAGS, *([VIRTUAL] if virtual else []), f"--user-data-dir={profile}", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=True,
        )


def dump_dom(page: Path, timeout: float = 60, virtual: bool = True, **params: str) -> str:
    """The serialised DOM of `page` (with `?params`) once its scripts ran; `virtual=False` for real-time
    measurements (performance.now() then counts wall time)."""
    return _run(["--dump-dom", url(page, **params)], timeout, virtual).stdout


def screenshot(
    page: Path, out: Path, width: int = 1280, height: int = 2000, timeout: float = 60, **params: str
) -> Path:
    _run([f"--screenshot={out}", f"--window-size={width},{height}", "--hide-scrollbars", url(page, **params)], timeout)
    return out
