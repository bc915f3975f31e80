"""Compile and run, per language: a program's build (Python parsed on the host, C++ and Java compiled in
the sandbox, the artifact handed back as a base64 tar) and the command a test run starts it with."""

from __future__ import annotations

import base64
import binascii
import shlex
from collections.abc import Callable
from typing import TYPE_CHECKING

from sandbox import languages
from sandbox.config import Limits
from sandbox.judge.assemble import SourceError, assemble
from sandbox.judge.model import ARTIFACT, COMPILE_TIMEOUT_S, TAIL, Build, JudgeLimits, Program
from sandbox.judge.scan import guess_language, normalise_language

if TYPE_CHECKING:
    from sandbox.core import Sandbox


def tail(text: str, n: int = TAIL) -> str:
    return text[-n:]


async def build(box: Sandbox, program: Program, on_compile: Callable[[], None] = lambda: None) -> Build:
    """The program ready to run, or the compile_error / judge_error that stops it; `on_compile` is
    called when a compile step is about to run in the sandbox."""
    try:
        language = normalise_language(program.language)
    except ValueError as exc:
        return Build(language=program.language, shape=program.shape, verdict="judge_error", detail=str(exc))
    try:
        language, shape, files, entry = assemble(program)
    except SourceError as exc:
        return Build(
            language=language, shape=program.shape, verdict="compile_error", detail=wrong_language(program, str(exc))
        )
    if language == "python":
        try:
            compile(files["main.py"], "main.py", "exec", dont_inherit=True)
        except SyntaxError as exc:
            shown = f"line {exc.lineno}: {exc.msg}"
            return Build(
                language=language,
                shape=shape,
                entry=entry,
                verdict="compile_error",
                detail=wrong_language(program, f"SyntaxError: {shown}"),
                compile_output=shown,
            )
        except (ValueError, RecursionError, MemoryError) as exc:
            return Build(
                language=language,
                shape=shape,
                entry=entry,
                verdict="compile_error",
                detail=f"{type(exc).__name__}: {exc}",
            )
        return Build(language=language, shape=shape, entry=entry, files=dict(files))
    on_compile()
    return await _compile(box, program, language, shape, files, entry)


async def _compile(
    box: Sandbox, program: Program, language: str, shape: str, files: dict[str, str | bytes], entry: str | None
) -> Build:
    source_name = next(iter(files))
    plan = languages.LANGUAGES[language].plan(source_name, Limits(), "python")
    assert plan.compile is not None
    outputs = "main.out" if language == "cpp" else "*.class"
    script = f"{shlex.join(plan.compile)} 1>&2 && tar -cf - {outputs} | base64 -w0"
    res = await box.arun(
        files,
        source_name,
        language=language,
        command=["sh", "-c", script],
        timeout_s=COMPILE_TIMEOUT_S,
        memory_mb=plan.compile_as_mb,
        output_limit=64 << 20,
    )
    base = Build(language=language, shape=shape, entry=entry)
    if res.status == "error":
        base.verdict, base.detail = "judge_error", f"sandbox: {res.error}"
        return base
    if res.status == "timeout":
        base.verdict, base.detail = "compile_error", f"compilation took over {COMPILE_TIMEOUT_S:.0f} s"
        return base
    if res.status != "ok":
        base.verdict, base.compile_output = "compile_error", tail(res.stderr)
        first = next((ln for ln in res.stderr.splitlines() if "error" in ln), res.stderr.strip()[:300])
        base.detail = wrong_language(program, first.strip()[:500] or f"compiler: {res.status}")
        return base
    try:
        artifact = base64.b64decode(res.stdout.strip(), validate=True)
    except (binascii.Error, ValueError) as exc:
        base.verdict, base.detail = "judge_error", f"compiled artifact unreadable: {exc}"
        return base
    base.files = {ARTIFACT: artifact}
    base.main_class = source_name.rsplit(".", 1)[0] if language == "java" else None
    base.compile_output = tail(res.stderr)
    return base


def wrong_language(program: Program, detail: str) -> str:
    """A compile error's detail, prefixed with the language the answer looks like when it is not the asked one."""
    guessed = guess_language(program.source)
    try:
        wanted = normalise_language(program.language)
    except ValueError:
        return detail
    if guessed is not None and guessed != wanted:
        return f"the answer looks like {guessed}, not {wanted}: {detail}"
    return detail


def run_command(built: Build, limits: JudgeLimits) -> tuple[str, list[str] | None]:
    """(the file the sandbox runs, the command, None for the language's own) of one test run. C++/Java:
    unpack the artifact in the run's fresh work dir, then exec the program (the JVM with the sandbox's
    own flags and -Xmx = the memory limit)."""
    if built.language == "python":
        return "main.py", None
    if built.language == "cpp":
        run = ["./main.out"]
    else:
        run = (
            languages.LANGUAGES["java"]
            .plan(f"{built.main_class}.java", Limits(memory_mb=limits.memory_mb), "python")
            .run
        )
    return ARTIFACT, ["sh", "-c", f"tar -xf {ARTIFACT} && exec {shlex.join(run)}"]
