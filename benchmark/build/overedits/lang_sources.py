"""Gold programs in JavaScript, TypeScript, Java and C++ for the over-edit corpus, each with a bug to fix.

    codeeditorbench-cpp, codeeditorbench-java   every C++ / Java program of CodeEditorBench (the loaded
        set: the published primary set when downloaded, else the paper's samples): the debug tasks'
        real pairs (incorrect -> correct solution), and every other solution, source or target
        program of the language (translate, polish, switch) as a gold with an injected bug
    canaicode-js    the can-ai-code JavaScript answers the sample results mark PASS, and the suite's
        JavaScript references (`benchmark.suites.canaicode.reference`), each with an injected bug
    canaicode-ts    the same programs as TypeScript: every plain parameter typed `: any` (types are
        erased, so the behaviour is the JavaScript's), parsed with the TypeScript grammar

Half the programs without a doc comment get a one-line one above their first function
(`documented`). An injected bug is one token in one function (a comparison or arithmetic operator swapped, an
integer literal off by one), drawn with SHA-256 choices; the gold fix is undoing it, the shape of
the Python corpus's corrupted solutions. Each pair records how its tests run: `canaicode` (the
question's checks, through node in the sandbox), `codeeditorbench` (the task's tests through the
judge), or none.
"""

from __future__ import annotations

import json
import re

import msgspec

from benchmark.build.corruptions.choice import Chooser
from benchmark.build.overedits.lang_transforms import JS_LIKE, nodes
from benchmark.datadir import data_dir
from benchmark.suites import codeeditorbench
from benchmark.suites.canaicode.interview import load_interview
from benchmark.suites.canaicode.reference import reference_answer
from server.fidelity.lang import by_name, comments, functions, parse

SOURCES = ("codeeditorbench-cpp", "codeeditorbench-java", "canaicode-js", "canaicode-ts")
LANGUAGE = {
    "codeeditorbench-cpp": "cpp",
    "codeeditorbench-java": "java",
    "canaicode-js": "javascript",
    "canaicode-ts": "typescript",
}
FIX_ASK = "What is wrong? Fix my function."


class LangPair(msgspec.Struct, frozen=True, kw_only=True):
    task_id: str
    language: str
    original: str
    gold: str
    tests: str  # JSON: what the test runner needs ({"question": ...} or {"task": ..., "program": ...})
    test_kind: str  # canaicode | codeeditorbench | none
    instruction: str


_SWAPS = {
    "<": "<=",
    "<=": "<",
    ">": ">=",
    ">=": ">",
    "==": "!=",
    "!=": "==",
    "===": "!==",
    "!==": "===",
    "+": "-",
    "-": "+",
}
_NUMBERS = frozenset({"number", "number_literal", "decimal_integer_literal", "integer_literal"})


def inject_bug(gold: str, language: str, ch: Chooser) -> str | None:
    """The gold with one token of one named function changed (the program still parses), or None."""
    lang = by_name(language)
    src = parse(gold, lang)
    if src.errors:
        return None
    options: list[tuple[int, int, str]] = []
    for f in functions(src):
        if f.kind == "lambda" or f.body_char < 0:
            continue
        lo, hi = src.byte(f.body_char), src.byte(f.end_char)
        for n in nodes(src.tree.root_node):
            if not (lo <= n.start_byte and n.end_byte <= hi) or n.child_count:
                continue
            text = src.node_text(n)
            if n.parent is not None and n.parent.type == "binary_expression" and text in _SWAPS:
                options.append((src.char(n.start_byte), src.char(n.end_byte), _SWAPS[text]))
            elif n.type in _NUMBERS and text.isdigit() and len(text) < 6:
                options.append((src.char(n.start_byte), src.char(n.end_byte), str(int(text) + 1)))
    for s, e, new in ch.shuffled(sorted(set(options))):
        text = gold[:s] + new + gold[e:]
        if not parse(text, lang).errors:
            return text
    return None


def documented(code: str, language: str, ch: Chooser) -> str:
    """Half the programs (a coin) with a one-line doc comment above their first named function when
    they have none: the sources seldom carry any (model answers, judge solutions), and a removed doc
    comment is a kind of its own. Behaviour is untouched."""
    lang = by_name(language)
    src = parse(code, lang)
    named = [f for f in functions(src) if f.kind != "lambda"]
    if not named or any(c.doc for c in comments(src)) or not ch.coin():
        return code
    f = min(named, key=lambda f: f.start_char)
    at = code.rfind("\n", 0, f.start_char) + 1
    indent = code[at : f.start_char] if not code[at : f.start_char].strip() else ""
    text = f"Computes {f.name}({', '.join(f.params)})."
    note = f"/// {text}" if language == "cpp" else f"/** {text} */"
    return code[:at] + indent + note + "\n" + code[at:]


def _typed(js: str) -> str | None:
    """A JavaScript program as TypeScript: every plain parameter annotated `: any`."""
    src = parse(js, by_name("typescript"))
    if src.errors:
        return None
    at = sorted(
        {
            src.char(c.end_byte)
            for n in nodes(src.tree.root_node)
            if n.type == "formal_parameters"
            for c in n.named_children
            if c.type == "required_parameter" and c.child_by_field_name("type") is None
        }
    )
    out, cursor = [], 0
    for pos in at:
        out.append(js[cursor:pos])
        out.append(": any")
        cursor = pos
    out.append(js[cursor:])
    return "".join(out)


def _clean(code: str) -> str:
    return code.replace("\r\n", "\n").strip("\n") + "\n"


def canaicode_programs(data: str | None) -> list[tuple[str, str, str]]:
    """(task id, question id, JavaScript program): PASS answers of the sample results, then references."""
    root = data_dir(data) / "canaicode"
    if not root.is_dir():
        raise FileNotFoundError(f"no can-ai-code data at {root}: pass --data DIR or set EDIT_FIDELITY_DATA")
    out: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    for path in sorted((root / "results_sample").glob("*.ndjson")):
        m = re.match(r"eval_([\w-]+?)_python-javascript_.*?_([^_]+)_\d+\.ndjson$", path.name)
        interview, model = (m.group(1), m.group(2)) if m else ("junior-v2", path.stem)
        for line in path.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line) if line.strip() else None
            if not rec or rec.get("language") != "javascript" or rec.get("status") != "PASS" or not rec.get("code"):
                continue
            code = _clean(rec["code"])
            if code not in seen:
                seen.add(code)
                out.append((f"{interview}/{rec['name']}/{model}", f"{interview}/{rec['name']}", code))
    for interview in ("junior-v2", "senior"):
        if not (root / interview).is_dir():
            continue
        for q in load_interview(root, interview):
            answer = reference_answer(q, "javascript")
            if answer and _clean(answer) not in seen:
                seen.add(_clean(answer))
                out.append((f"{q.task_id}/reference", q.task_id, _clean(answer)))
    return out


def codeeditorbench_programs(data: str | None, language: str) -> list[tuple[str, str | None, str, str]]:
    """(task id, real original or None, program, which program) of one language."""
    out: list[tuple[str, str | None, str, str]] = []
    for t in codeeditorbench.load(data):
        sides = []
        if t.kind == "debug" and t.language == language:
            out.append((f"{t.task_id}/fix", t.before, t.after, "after"))
            sides.append(("after", t.after))
        elif t.kind == "translate":
            sides += [("before", t.before)] if t.language == language else []
            sides += [("after", t.after)] if t.answer_language == language else []
        elif t.language == language:
            sides += [("before", t.before), ("after", t.after)]
        out += [(f"{t.task_id}/{side}", None, code, side) for side, code in sides]
    return out


def load(source: str, data: str | None, limit: int | None, seed: int) -> list[LangPair]:
    """The pairs of one source (`SOURCES`); the first `limit` programs."""
    language = LANGUAGE[source]
    pairs: list[LangPair] = []
    if source.startswith("canaicode"):
        for task_id, question, code in canaicode_programs(data)[:limit]:
            gold = code if language == "javascript" else _typed(code)
            if gold is None:
                continue
            gold = documented(gold, language, Chooser(seed, f"{source}/{task_id}/doc"))
            original = inject_bug(gold, language, Chooser(seed, f"{source}/{task_id}/bug"))
            if original is not None:
                pairs.append(
                    LangPair(
                        task_id=task_id,
                        language=language,
                        original=original,
                        gold=gold,
                        tests=json.dumps({"question": question}),
                        test_kind="canaicode" if language == "javascript" else "none",
                        instruction=FIX_ASK,
                    )
                )
        return pairs
    for task_id, before, code, side in codeeditorbench_programs(data, language)[:limit]:
        if before is None:  # (a real pair stays as published: both sides would need the same comment)
            code = documented(code, language, Chooser(seed, f"{source}/{task_id}/doc"))
        original = (
            before if before is not None else inject_bug(code, language, Chooser(seed, f"{source}/{task_id}/bug"))
        )
        if original is not None:
            pairs.append(
                LangPair(
                    task_id=task_id,
                    language=language,
                    original=original,
                    gold=code,
                    tests=json.dumps({"task": task_id.rsplit("/", 1)[0], "program": side}),
                    test_kind="codeeditorbench",
                    instruction=FIX_ASK,
                )
            )
    return pairs


__all__ = ["JS_LIKE", "LANGUAGE", "SOURCES", "LangPair", "inject_bug", "load"]
