"""What a program runs as: a `program` answer nearly as written, a `function` answer inside its
language's harness (sandbox/judge/harness/, shipped as package data; see its README)."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import msgspec

from sandbox import pyast
from sandbox.judge.model import Program
from sandbox.judge.scan import close_brace, describe, detect_shape, mask_c, normalise_language

HARNESS = Path(__file__).resolve().parent / "harness"
NODE_CLASSES = ("ListNode", "TreeNode")  # LeetCode's types, defined unless the answer defines its own


def _source(relative: str) -> str:
    return (HARNESS / relative).read_text(encoding="utf-8")


def _nodes(language: str, suffix: str) -> dict[str, str]:
    return {name: _source(f"{language}/{name}.{suffix}") for name in NODE_CLASSES}


# Read once at import: the text a function-shaped answer is spliced into, verbatim. Placeholders: ENTRY
# (the function's name as a literal of the harness's language), OWNERS (Java: the classes to look in).
CPP_PRELUDE = _source("cpp/prelude.hpp")
CPP_NODES = _nodes("cpp", "hpp")
CPP_IO = _source("cpp/efj_io.hpp")  # LeetCode-style I/O: one JSON value per argument line; results as compact JSON
JAVA_IMPORTS = _source("java/imports.java")
JAVA_NODES = _nodes("java", "java")
JAVA_MAIN_CLASS = "JudgeMain"
JAVA_HARNESS = _source(f"java/{JAVA_MAIN_CLASS}.java")  # reflection: generic parameter types drive the conversion
PYTHON_PRELUDE = _source("python/prelude.py")
PYTHON_NODES = _nodes("python", "py")
PYTHON_HARNESS = "\n\n" + _source("python/harness.py")  # two blank lines after the answer's last definition


def _defines(masked: str, name: str) -> bool:
    return re.search(rf"\b(?:class|struct)\s+{name}\b", masked) is not None


def _drop_span(source: str, span: tuple[int, int]) -> str:
    return source[: span[0]] + source[span[1] :]


def _cpp_without_main(source: str) -> str:
    masked = mask_c(source)
    m = re.search(r"\b(?:int|signed|void)\s+main\s*\([^)]*\)\s*\{", masked)
    if m is None:
        return source
    return _drop_span(source, (m.start(), close_brace(masked, m.end() - 1)))


def _java_without_main(source: str) -> str:
    masked = mask_c(source)
    m = re.search(
        r"(?:(?:public|private|protected|static|final)\s+)*static\s+(?:public\s+)?void\s+main\s*\([^)]*\)"
        r"\s*(?:throws\s+[\w.,\s]+)?\{",
        masked,
    )
    if m is None:
        return source
    return _drop_span(source, (m.start(), close_brace(masked, m.end() - 1)))


def _python_defs_only(source: str) -> str:
    """The module minus top-level statements that would do work on import (example calls, prints,
    `if __name__ == "__main__":` blocks): a function-shaped answer is called by the harness only."""
    try:
        tree = pyast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return source
    lines = source.splitlines(keepends=True)
    drop: set[int] = set()
    for node in tree.body:
        doing = (
            isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith))
            or (isinstance(node, ast.Expr) and not isinstance(node.value, ast.Constant))
            or (isinstance(node, ast.If) and "__name__" in ast.unparse(node.test))
        )
        if doing and node.end_lineno is not None:
            drop.update(range(node.lineno - 1, node.end_lineno))
    return "".join(line for i, line in enumerate(lines) if i not in drop)


def _java_types(masked: str) -> list[tuple[str, int, int, bool]]:
    """Top-level type declarations: (name, start, end, public)."""
    out = []
    depth = 0
    i = 0
    pattern = re.compile(
        r"(?P<mods>(?:(?:public|final|abstract|static|sealed|strictfp)\s+)*)"
        r"(?:class|interface|enum|record)\s+(?P<name>[A-Za-z_]\w*)[^;{]*\{"
    )
    while i < len(masked):
        ch = masked[i]
        if depth == 0:
            m = pattern.match(masked, i)
            if m and (i == 0 or not (masked[i - 1].isalnum() or masked[i - 1] == "_")):
                end = close_brace(masked, m.end() - 1)
                out.append((m.group("name"), m.start(), end, "public" in m.group("mods").split()))
                i = end
                continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        i += 1
    return out


def _java_split_imports(source: str) -> tuple[str, str]:
    """(import lines, the rest) with any `package` line dropped: the judge compiles one default-package file."""
    imports: list[str] = []
    rest: list[str] = []
    for line in source.splitlines(keepends=True):
        s = line.strip()
        if s.startswith("package ") and s.endswith(";"):
            continue
        (imports if s.startswith("import ") and s.endswith(";") else rest).append(line)
    return "".join(imports), "".join(rest)


def _java_unpublic(source: str) -> str:
    """Top-level `public` types lose `public` (one file holds them all, with its own public class)."""
    masked = mask_c(source)
    out = source
    for _name, start, _end, public in sorted(_java_types(masked), key=lambda t: -t[1]):
        if public:
            head = re.match(r"((?:(?:public|final|abstract|static|sealed|strictfp)\s+)*)", out[start:])
            assert head is not None
            mods = head.group(1)
            out = out[:start] + re.sub(r"\bpublic\s+", "", mods, count=1) + out[start + len(mods) :]
    return out


class SourceError(Exception):
    """The answer cannot be turned into a runnable program (a compile error, said why)."""


def assemble(program: Program) -> tuple[str, str, dict[str, str | bytes], str | None]:
    """(language, shape, {file: text}, entry) for a program; raises SourceError for an answer the
    templates cannot use (no function to call, no main class)."""
    language = normalise_language(program.language)
    source = program.source.replace("\r\n", "\n")
    shape = program.shape if program.shape != "auto" else detect_shape(language, source)
    if shape == "program":
        if language == "python":
            return language, shape, {"main.py": source}, None
        if language == "cpp":
            prefix = "" if re.search(r"#\s*include", source) else CPP_PRELUDE
            return language, shape, {"main.cpp": prefix + source}, None
        imports, body = _java_split_imports(source)
        masked = mask_c(body)
        types = _java_types(masked)
        main_re = re.compile(r"\bstatic\s+(?:public\s+)?void\s+main\s*\(")
        public = [t for t in types if t[3]]
        with_main = [t for t in types if main_re.search(masked[t[1] : t[2]])]
        chosen = public[0] if public else (with_main[0] if with_main else None)
        if chosen is None:
            raise SourceError("no class with a main method")
        return language, shape, {f"{chosen[0]}.java": JAVA_IMPORTS + imports + body}, chosen[0]
    info = describe(msgspec.structs.replace(program, source=source))
    if info is None:
        raise SourceError(f"no function to call in the {language} answer")
    if language == "python":
        body = _python_defs_only(source)
        nodes = "".join(code for name, code in PYTHON_NODES.items() if not re.search(rf"\bclass\s+{name}\b", body))
        text = PYTHON_PRELUDE + nodes + body + PYTHON_HARNESS.replace("ENTRY", repr(info.name))
        return language, shape, {"main.py": text}, info.name
    if language == "cpp":
        body = _cpp_without_main(source)
        masked = mask_c(body)
        nodes = "".join(code for name, code in CPP_NODES.items() if not _defines(masked, name))
        target = f"&{info.owner}::{info.name}" if info.owner else f"&{info.name}"
        text = (
            CPP_PRELUDE
            + nodes
            + CPP_IO
            + "\n"
            + body
            + f"\n\nsigned main() {{\n    std::ios::sync_with_stdio(false);\n    efj::call({target});\n    return 0;\n}}\n"
        )
        return language, shape, {"main.cpp": text}, info.name
    imports, body = _java_split_imports(_java_without_main(source))
    masked = mask_c(body)
    types = _java_types(masked)
    if not types:  # bare methods, as LeetCode shows them: they belong to a Solution class
        body = "class Solution {\n" + body + "\n}\n"
        masked = mask_c(body)
        types = _java_types(masked)
    body = _java_unpublic(body)
    names = [t[0] for t in types]
    owners = ([info.owner] if info.owner else []) + [n for n in ["Solution", *names] if n != info.owner]
    nodes = "".join(code for name, code in JAVA_NODES.items() if name not in names)
    harness = JAVA_HARNESS.replace("OWNERS", ", ".join(json.dumps(o) for o in dict.fromkeys(owners))).replace(
        "ENTRY", json.dumps(info.name)
    )
    text = JAVA_IMPORTS + imports + nodes + body + "\n" + harness
    return language, shape, {f"{JAVA_MAIN_CLASS}.java": text}, info.name
