"""Where an instruction points, for the instruction judge (`instruction`): when it names a function or class
of the code, a logic change to another function the edit also leaves standing is `outside_target`, unless
the change follows from the requested one.

The facts (`TargetFacts`) come from the two texts and the report's units (`target_facts`); the rule
(`outside_target_reason`) weighs them against the instruction's scope. Pure.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Protocol

import msgspec

from server.fidelity.text import pyast


# What the rules below read of `instruction.Scope`: the judge imports this module, so it names the fields it
# needs instead of importing the judge's type (no import circle).
class ScopeView(Protocol):
    @property
    def broad(self) -> str | None: ...
    @property
    def kinds(self) -> Mapping[str, str]: ...
    @property
    def roles(self) -> frozenset[str]: ...
    def mentions(self, name: str) -> bool: ...
    def named_strongly(self, name: str) -> bool: ...


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# kinds of a unit that change what a function does (a docstring or layout unit does not make it the target)
CODE_KINDS = frozenset({"logic", "defensive", "deletion", "signature_change"})
_STORE = re.compile(r"(?:\bself\.)?\b([A-Za-z_]\w*)\s*(?::[^=\n]*)?(?<![=!<>])=(?!=)")
_NAME = re.compile(r"[A-Za-z_]\w*")
_ATTRIBUTE = re.compile(r"\.([A-Za-z_]\w*)\b(?!\s*\()")
_SETS = re.compile(r"\.([A-Za-z_]\w*)\s*(?:\[[^\]\n]*\])?\s*(?:[-+*/%|&^]|//|\*\*)?=(?!=)")
_DEFINES = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s", re.MULTILINE)
_CONSTRUCTORS = frozenset({"__init__", "__post_init__", "__new__"})
_REWRITES = frozenset({"refactor", "rewrite", "translate"})


class TargetFacts(msgspec.Struct, frozen=True):
    """What the scope rule needs about one unit and the edit around it."""

    existing: bool = False  # the unit's function is a function of the original, still there under its name
    definitions: frozenset[str] = frozenset()  # names of the functions and classes of either text
    changed: frozenset[str] = frozenset()  # qualified names of the functions whose code the edit changes or adds
    uses_added: bool = False  # the unit's edited side refers to a function or class the edit adds
    stores: frozenset[str] = frozenset()  # names (and `self.` attributes) the unit's edited side assigns
    attributes: frozenset[str] = frozenset()  # data attributes (`x.name`, not a call) either side of the unit uses
    returns: bool = False  # the unit holds its function's final `return`: what its callers get changes (an
    # early exit added inside it is not that)
    signature_changed: bool = False  # another unit changes the signature of the unit's function
    sets: frozenset[str] = frozenset()  # attributes the edit's units in the unit's function assign (`self.n += 1`),
    # and for a constructor every attribute it sets
    dropped_condition: str | None = None  # the test of an `elif` the unit turns into a plain `else`
    # per changed function (qualified), the functions it calls and the data attributes it uses, edited side
    calls: dict[str, frozenset[str]] = {}
    uses: dict[str, frozenset[str]] = {}


def definitions(text: str | None) -> dict[str, ast.stmt]:
    """Every function and class of `text` by qualified name (empty when it does not parse)."""
    if text is None:
        return {}
    try:
        tree = pyast.parse(text, quiet=True)
    except (SyntaxError, ValueError, RecursionError):
        return {}
    out: dict[str, ast.stmt] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _DEFINITIONS):
                out.setdefault(prefix + child.name, child)
                visit(child, prefix + child.name + ".")
            elif isinstance(child, ast.stmt):
                visit(child, prefix)

    visit(tree, "")
    return out


def _final_return(node: ast.stmt | None, lo: int, hi: int) -> bool:
    """The function's last statement is a `return` of a value on the lines `lo`..`hi`."""
    last = getattr(node, "body", [None])[-1]
    return isinstance(last, ast.Return) and last.value is not None and lo <= last.lineno <= hi


def _set_attributes(node: ast.AST) -> set[str]:
    """The attributes a definition assigns (`self.x = ...`, `self.x += ...`)."""
    out = set()
    for n in ast.walk(node):
        targets = (
            n.targets
            if isinstance(n, ast.Assign)
            else [n.target]
            if isinstance(n, ast.AugAssign | ast.AnnAssign)
            else []
        )
        out |= {t.attr for t in targets if isinstance(t, ast.Attribute)}
    return out


def _calls_and_uses(node: ast.AST) -> tuple[frozenset[str], frozenset[str]]:
    """The functions a definition calls (by name or method name) and the data attributes it uses."""
    calls, attributes = set(), set()
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            f = n.func
            calls.add(f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else "")
        elif isinstance(n, ast.Attribute):
            attributes.add(n.attr)
    return frozenset(calls - {""}), frozenset(attributes - calls)


def target_facts(
    functions: list[str | None],
    kinds: list[list[str]],
    news: list[str],
    olds: list[str | None],
    spans: list[tuple[int, int]],
    added: frozenset[str],
    original: str | None,
    edited: str | None,
) -> list[TargetFacts]:
    """Per unit: its function (`functions`), kinds, sides (`news`, `olds`) and edited lines (`spans`, first
    and last), with `added` the qualified names of the functions the edit adds. Nothing without both texts.
    A unit whose new lines reach outside its function's definition (module code inserted before a `def`)
    is not that function's."""
    if original is None or edited is None:
        return [TargetFacts() for _ in functions]
    before, after = definitions(original), definitions(edited)
    names_of = frozenset(q.split(".")[-1] for q in before.keys() | after.keys())
    changed = frozenset({f for f, k in zip(functions, kinds, strict=True) if f and CODE_KINDS.intersection(k)} | added)
    found = {q: _calls_and_uses(after[q]) for q in changed if q in after}
    calls = {q: c for q, (c, _) in found.items()}
    uses = {q: u for q, (_, u) in found.items()}
    resigned = {f for f, k in zip(functions, kinds, strict=True) if f and "signature_change" in k}
    added_names = frozenset(q.split(".")[-1] for q in added)
    sets: dict[str, set[str]] = {}
    for fn, new in zip(functions, news, strict=True):
        if fn and not _DEFINES.search(new):  # a unit that adds a definition sets that one's attributes
            sets.setdefault(fn, set()).update(_SETS.findall(new))
    for fn in sets:
        if fn.split(".")[-1] in _CONSTRUCTORS and fn in after:
            sets[fn] |= _set_attributes(after[fn])
    out = []
    for fn, new, old, (lo, hi) in zip(functions, news, olds, spans, strict=True):
        names = frozenset(_NAME.findall(new))
        node = after.get(fn) if fn else None
        inside = node is not None and (hi < lo or node.lineno <= lo and hi <= (node.end_lineno or node.lineno))
        out.append(
            TargetFacts(
                existing=fn in before and inside,
                definitions=names_of,
                changed=changed,
                uses_added=bool(names & added_names),
                stores=frozenset(_STORE.findall(new)),
                attributes=frozenset(_ATTRIBUTE.findall(new + "\n" + (old or ""))),
                returns=inside and hi >= lo and _final_return(node, lo, hi),
                signature_changed=fn in resigned,
                sets=frozenset(sets.get(fn, ())) if fn else frozenset(),
                dropped_condition=dropped_condition(old, new),
                calls=calls,
                uses=uses,
            )
        )
    return out


_ELIF = re.compile(r"^\s*elif\s+(.+?):\s*(?:#.*)?$", re.MULTILINE)
_ELSE = re.compile(r"^\s*else\s*:", re.MULTILINE)


def dropped_condition(old: str | None, new: str) -> str | None:
    """The test of an `elif` that a unit turns into a plain `else` (the branch then runs whenever the ones
    before it do not), or None."""
    if not old:
        return None
    tests = _ELIF.findall(old)
    if len(tests) != 1 or _ELIF.search(new) or not _ELSE.search(new) or _ELSE.search(old):
        return None
    return tests[0].strip()


def dropped_condition_reason(scope: ScopeView, kinds: tuple[str, ...], facts: TargetFacts) -> str | None:
    """Why dropping an `elif`'s test is not requested: the instruction speaks of nothing the test reads
    (`self.is_empty()`: "empty"), and asks for no rewrite or simplification."""
    test = facts.dropped_condition
    if test is None or "logic" not in kinds or scope.broad or "deletion" in scope.kinds:
        return None
    names = [n for n in _NAME.findall(test) if n not in ("self", "cls", "not", "and", "or", "is", "in", "None")]
    if not names or any(scope.mentions(n) for n in names):
        return None
    return (
        f"not requested: the test `{test}` is dropped (an `elif` made `else`), and the instruction does not speak of it"
    )


def _points_at(scope: ScopeView, part: str) -> bool:
    """The instruction points at this function or class: names it as code, by its role (a special method),
    or, for a one-word name (`enqueue`), as a plain word."""
    if scope.named_strongly(part):
        return True
    if part.startswith("__") and part.endswith("__"):
        return part.lower() in scope.roles
    return "_" not in part.strip("_") and not any(c.isupper() for c in part[1:]) and scope.mentions(part)


def outside_target_reason(
    scope: ScopeView, kinds: tuple[str, ...], function: str | None, facts: TargetFacts
) -> str | None:
    """Why a logic unit lies outside what the instruction points at, or None.

    The instruction names a function or class of the code (as code: `next_generation`), the edit changes
    (or adds) that target, and the unit changes another function of the original, one the instruction
    does not point at, without wiring in a definition the edit adds or setting a name the instruction
    names. When the edit leaves every named target alone, the fix lives elsewhere and the rule says nothing;
    a rewrite or refactor may change any function."""
    if "logic" not in kinds or function is None or not facts.existing or scope.broad in _REWRITES:
        return None
    named = sorted(d for d in facts.definitions if scope.named_strongly(d))
    if not named:
        return None
    *owners, name = function.split(".")
    if _points_at(scope, name) or any(scope.named_strongly(part) for part in owners):
        return None  # a class named as code points at its methods; a class named as a plain word does not
    if not any(scope.named_strongly(part) for q in facts.changed for part in q.split(".")):
        return None  # the named targets stay as they are: the fix lives in the code they use
    if facts.uses_added or any(scope.named_strongly(n) for n in facts.stores):
        return None
    targets = [q for q in facts.changed if any(scope.named_strongly(part) for part in q.split("."))]
    read = frozenset().union(*(facts.uses.get(q, frozenset()) for q in targets))
    if facts.attributes & read or facts.sets & read:
        return None  # state the target reads (`self.edges`, `node.out_edges`, a counter it reports)
    called = frozenset().union(*(facts.calls.get(q, frozenset()) for q in targets))
    if name in called and (facts.returns or facts.signature_changed):
        return None  # a function the target calls now returns something else or takes other arguments
    listed = ", ".join(f"`{n}`" for n in named[:3])
    return f"not requested: changes `{function}`, and the instruction points at {listed}"
