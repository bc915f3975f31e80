"""How each language is compiled and run inside the sandbox: argv builders, no execution here."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath

from sandbox.config import Limits

# Paths of the tools on the host; the sandbox sees /usr read-only, so the same paths work inside.
NODE = "/usr/bin/node"
GXX = "/usr/bin/g++"
JAVAC = "/usr/bin/javac"
JAVA = "/usr/bin/java"

Argv = list[str]
PYTHON_FLAGS = ("-E", "-s", "-B")


@dataclass(frozen=True)
class Plan:
    """The commands for one program: an optional compile step, then the run step."""

    run: Argv
    compile: Argv | None = None
    # RLIMIT_AS for each step in MiB. The JVM and V8 reserve gigabytes of address space at start-up
    # (node 20 does not start under 1 GiB, java under 2 GiB), so their heaps are capped by their own
    # flags and the address-space ceiling gets a fixed allowance on top.
    run_as_mb: int = 0
    compile_as_mb: int = 0


@dataclass(frozen=True)
class Language:
    name: str
    extensions: tuple[str, ...]
    tool: str  # the binary whose presence decides whether the language works here
    plan: Callable[[str, Limits, str], Plan]  # (entry file, limits, python interpreter)


def _python(entry: str, limits: Limits, python: str) -> Plan:
    # -E -s: no PYTHON* variables, no user site (what -I does, minus -P: multi-file programs need
    # their own dir on sys.path); -B: no .pyc writes into the work dir.
    return Plan(run=[python, *PYTHON_FLAGS, entry], run_as_mb=limits.memory_mb)


def _javascript(entry: str, limits: Limits, python: str) -> Plan:
    heap = max(limits.memory_mb, 16)
    return Plan(run=[NODE, f"--max-old-space-size={heap}", entry], run_as_mb=heap + 2048)


def _cpp(entry: str, limits: Limits, python: str) -> Plan:
    return Plan(
        compile=[GXX, "-std=c++17", "-O2", "-pipe", "-o", "main.out", entry],
        run=["./main.out"],
        compile_as_mb=2048,
        run_as_mb=limits.memory_mb,
    )


def _java(entry: str, limits: Limits, python: str) -> Plan:
    main_class = PurePosixPath(entry).stem
    jvm = ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-XX:-UsePerfData"]
    return Plan(
        compile=[JAVAC, "-J-Xmx512m", *(f"-J{o}" for o in jvm), "-encoding", "UTF-8", "-d", ".", entry],
        run=[JAVA, f"-Xmx{max(limits.memory_mb, 32)}m", *jvm, "-cp", ".", main_class],
        compile_as_mb=4096,
        run_as_mb=max(limits.memory_mb, 32) + 3072,
    )


LANGUAGES: dict[str, Language] = {
    "python": Language("python", (".py",), "", _python),
    "javascript": Language("javascript", (".js", ".mjs", ".cjs"), NODE, _javascript),
    "cpp": Language("cpp", (".cpp", ".cc", ".cxx", ".c++"), GXX, _cpp),
    "java": Language("java", (".java",), JAVAC, _java),
}
ALIASES = {"py": "python", "js": "javascript", "node": "javascript", "c++": "cpp", "cxx": "cpp"}


def resolve(name: str | None, entry: str) -> Language:
    """The language named (or its alias), else the one the entry file's extension says."""
    if name:
        key = ALIASES.get(name.lower(), name.lower())
        if key not in LANGUAGES:
            raise ValueError(f"unknown language {name!r}; known: {', '.join(LANGUAGES)}")
        return LANGUAGES[key]
    suffix = PurePosixPath(entry).suffix.lower()
    for lang in LANGUAGES.values():
        if suffix in lang.extensions:
            return lang
    raise ValueError(f"cannot tell the language of {entry!r}; pass language=")


def available(lang: Language) -> bool:
    return not lang.tool or shutil.which(lang.tool) is not None
