"""`sandbox doctor`: which isolation levels and languages work here, and why the others do not."""

from __future__ import annotations

import os

import msgspec

from sandbox import config, envs, languages
from sandbox.core import Sandbox, detect
from sandbox.result import LEVELS, Level

HELLO = {
    "python": ("main.py", "print('hello')\n"),
    "javascript": ("main.js", "console.log('hello')\n"),
    "cpp": ("main.cpp", '#include <cstdio>\nint main(){std::puts("hello");}\n'),
    "java": ("Main.java", 'public class Main{public static void main(String[] a){System.out.println("hello");}}\n'),
}


class LevelReport(msgspec.Struct):
    level: Level
    works: bool
    reason: str = ""


class LanguageReport(msgspec.Struct):
    language: str
    works: bool
    detail: str = ""


class SuiteReport(msgspec.Struct):
    suite: str
    prepared: bool
    path: str
    stubs: dict[str, str] = {}
    pth_files: list[str] = []


class Report(msgspec.Struct):
    chosen: Level
    root: bool
    home: str
    uid_base: int
    base_python: str
    levels: list[LevelReport]
    languages: list[LanguageReport]
    suites: list[SuiteReport]


def diagnose() -> Report:
    found = detect(LEVELS)
    chosen: Level = next((lvl for lvl in LEVELS if found[lvl] is None), "none")
    langs = []
    with Sandbox(chosen, workers=1) as box:
        for name, (entry, source) in HELLO.items():
            lang = languages.LANGUAGES[name]
            if not languages.available(lang):
                langs.append(LanguageReport(name, False, f"{lang.tool} not installed"))
                continue
            res = box.run({entry: source}, timeout_s=30)
            ok = res.status == "ok" and res.stdout.strip() == "hello"
            langs.append(
                LanguageReport(
                    name,
                    ok,
                    f"{res.wall_s * 1000:.0f} ms" if ok else f"{res.status}: {(res.error or res.stderr)[-300:]}",
                )
            )
    suites = [
        SuiteReport(
            name,
            envs.is_prepared(name),
            str(envs.env_dir(name)),
            dict(s.stubs),
            envs.pth_files(name) if envs.is_prepared(name) else [],
        )
        for name, s in envs.SUITES.items()
        if s.requirements
    ]
    return Report(
        chosen=chosen,
        root=os.geteuid() == 0,
        home=str(config.home()),
        uid_base=config.uid_base(),
        base_python=config.base_python(),
        levels=[LevelReport(lvl, found[lvl] is None, found[lvl] or "") for lvl in LEVELS],
        languages=langs,
        suites=suites,
    )


def render(report: Report) -> str:
    lines = [
        f"isolation chosen: {report.chosen}" + ("  (NOT ISOLATED)" if report.chosen == "none" else ""),
        f"running as root: {report.root}; sandbox uids from {report.uid_base}; home {report.home}",
        f"base interpreter: {report.base_python}",
    ]
    docker = next((r for r in report.levels if r.level == "docker"), None)
    if docker is not None and report.chosen != "docker":
        lines.append(f"docker not used: {docker.reason}")
    lines.append("levels:")
    lines += [f"  {'ok ' if r.works else 'no '} {r.level:8} {r.reason}" for r in report.levels]
    lines.append("languages:")
    lines += [f"  {'ok ' if r.works else 'no '} {r.language:10} {r.detail}" for r in report.languages]
    lines.append("suites:")
    for s in report.suites:
        lines.append(
            f"  {'ok ' if s.prepared else 'no '} {s.suite:10} {s.path}"
            + ("" if s.prepared else f"  (run: edit-fidelity sandbox prepare --suite {s.suite})")
        )
        lines += [f"      stub {mod}: {why}" for mod, why in s.stubs.items()]
        if s.pth_files:
            lines.append(f"      .pth files run at start-up: {', '.join(s.pth_files)}")
    return "\n".join(lines)
