"""New code nobody asked for, for the instruction judge (`instruction`): the words of an instruction that
ask for kinds of new code (special methods named by their role in Python's data model, a new definition
asked for without its name, output, comments) and which new definitions of a unit are requested."""

from __future__ import annotations

import re
from typing import Protocol


# What the two functions below read of `instruction.Scope` and `instruction.UnitFacts`: the judge imports
# this module, so it names the fields it needs instead of importing the judge's types (no import circle).
class ScopeView(Protocol):
    @property
    def broad(self) -> str | None: ...
    @property
    def adds_definition(self) -> bool: ...
    def mentions(self, name: str) -> bool: ...


class FactsView(Protocol):
    @property
    def defines(self) -> tuple[str, ...]: ...
    @property
    def defines_used(self) -> tuple[str, ...]: ...
    @property
    def defines_copies(self) -> tuple[str, ...]: ...
    @property
    def defines_existing(self) -> tuple[str, ...]: ...
    @property
    def edit_defines(self) -> frozenset[str]: ...


# Special methods and the words that name them by their role in Python's data model: "the constructor"
# points at `__init__`, "make it printable" asks for `__str__`; "return the string" asks for neither.
ROLES: tuple[tuple[str, str], ...] = (
    ("__init__ __post_init__ __new__", r"\bconstructors?\b|\binitiali[sz]\w*|\binit\b|\bctor\b"),
    ("__str__ __repr__ __format__", r"\bstring representation\b|\bprintabl\w*|\brepr\b|\bpretty[- ]print\w*"),
    ("__eq__ __ne__ __hash__", r"\bequality\b|\bequal\b|\bhash\w*|\bcompar\w*"),
    ("__lt__ __le__ __gt__ __ge__", r"\bcompar\w*|\bordering\b|\bsortabl\w*|\bless than\b|\bgreater than\b"),
    ("__len__", r"\blength\b|\bsize\b|\blen\b"),
    ("__iter__ __next__ __aiter__ __anext__", r"\biterat\w*|\biterabl\w*|\bgenerator\b"),
    ("__getitem__ __setitem__ __delitem__", r"\bindex\w*|\bsubscript\w*|\bitems?\b"),
    ("__contains__", r"\bcontains?\b|\bmembership\b"),
    ("__call__", r"\bcallabl\w*|\bcall\b"),
    ("__enter__ __exit__", r"\bcontext manager\b|\bwith statement\b"),
    ("__add__ __sub__ __mul__ __truediv__ __radd__ __rmul__ __neg__", r"\boperators?\b|\barithmetic\b|\boverload\w*"),
)
DUNDER = re.compile(r"__[A-Za-z]\w*__")
ROLE_PATTERNS = tuple((frozenset(names.split()), re.compile(rx, re.IGNORECASE)) for names, rx in ROLES)

# A request for new definitions without (necessarily) their names: "add a method that returns ...".
ADD_DEFINITION = re.compile(
    r"\b(?:add|creat|implement|writ|defin|introduc|provid|extend|support)\w*\s+(?:\w+\s+){0,4}?"
    r"(?:methods?|functions?|class(?:es)?|helpers?|subclass\w*|constructors?|propert(?:y|ies)|operations?"
    r"|interfaces?|api|types?|functionality|features?)\b",
    re.IGNORECASE,
)
# Words for output: an instruction without them asks for no print or log call.
OUTPUT_WORDS = re.compile(
    r"\bprint\w*|\blog\w*|\boutputs?\b|\bdisplay\w*|\bshow\w*|\bwarn\w*|\bmessages?\b|\breport\w*"
    r"|\bconsole\b|\bstdout\b|\bstderr\b|\bverbose\b|\bdebug\w*|\bwrites? (?:out|to)\b|\bnotif\w*|\balert\w*",
    re.IGNORECASE,
)
COMMENT_WORDS = re.compile(r"\bcomment\w*|\bdocument\w*|\bexplain\w*|\bannotat\w*|\bdescrib\w*", re.IGNORECASE)


def unrequested_definitions(scope: ScopeView, facts: FactsView) -> tuple[list[str], list[str]]:
    """(definitions the unit adds that nothing asked for, those of them that copy the original verbatim).

    A new definition is requested when the instruction names it (a special method by its role: "the
    constructor"), when the rest of the edited code uses it (a helper of the change), when it replaces or
    overrides one the original has (an appended fixed copy, a method of the base class), or when the
    instruction asks for new definitions without naming any that the edit adds. A verbatim second copy
    of an original definition is dead code, whatever the instruction says."""
    if not facts.defines or scope.broad in ("refactor", "rewrite", "translate"):
        return [], []
    unnamed_ok = scope.adds_definition and not any(scope.mentions(n) for n in facts.edit_defines)
    extra, copies = [], []
    for name in facts.defines:
        if name in facts.defines_copies:
            copies.append(name)
        elif not (
            scope.mentions(name)
            or name in facts.defines_used
            or name in facts.defines_existing
            or (unnamed_ok and not DUNDER.fullmatch(name))
        ):
            extra.append(name)
    return extra + copies, copies


def added_reason(extra: list[str], copies: list[str]) -> str:
    listed = ", ".join(f"`{n}`" for n in extra[:4]) + (", ..." if len(extra) > 4 else "")
    if copies and len(copies) == len(extra):
        return f"not requested: {listed} repeats code of the original verbatim (dead code)"
    return f"not requested: the instruction does not ask for {listed} and no other code uses it"
