"""What an instruction asks for, and whether one change unit is inside that scope.

Pure functions over strings: `parse_instruction` reads the instruction once into a `Scope` (the
kinds of change it asks for, with the words that asked, and the code names it mentions); `judge_unit`
weighs one unit's `UnitFacts` against it and says why. The server builds the facts from a fidelity
report; the rules live here, in the tables below, so they are tested and changed in one place.
"""

from __future__ import annotations

import keyword
import re

import msgspec

from server.fidelity.judge.added_code import (
    ADD_DEFINITION,
    COMMENT_WORDS,
    DUNDER,
    OUTPUT_WORDS,
    ROLE_PATTERNS,
    added_reason,
    unrequested_definitions,
)
from server.fidelity.judge.target_scope import TargetFacts, outside_target_reason

# Words that ask for a kind of change. Narrow on purpose: "fix the off-by-one error" or "check the
# loop" ask for no input validation, "return None on a miss" for no defensive code.
KIND_RULES: tuple[tuple[str, str], ...] = (
    (
        "rename",
        r"\brenam\w*|\b(?:better|descriptive|clearer|meaningful) (?:\w+ )?names?\b|\bnaming\b"
        r"|\b(?:identifier|variable) names\b",
    ),
    (
        "formatting_only",
        r"\breformat\w*|\bformatting\b|\bformat (?:the|this|my) code\b|\bpep ?8\b|\bblack\b"
        r"|\bcode style\b|\bindent\w*|\bwhitespace\b|\blint\w*|\btidy\b|\bprettif\w*",
    ),
    # a verb that acts on them: "they don't respect the docstring" asks for no docstring change
    (
        "comment_removed",
        r"\b(?:remov|delet|drop|strip|updat|rewrit|edit|chang|clean)\w*\s+(?:\w+\s+){0,3}?comments?\b"
        r"|\bcomments?\s+(?:out|away)\b|\bclean ?up\b",
    ),
    (
        "docstring",
        r"\b(?:add|updat|writ|improv|fix|chang|edit|remov|delet|drop|rewrit)\w*\s+(?:\w+\s+){0,3}?docstrings?\b"
        r"|\bdocstrings?\s+(?:for|to|that)\b|\bdocument(?:ation)?\s+(?:for|the|this|these|each|all|every|it|them)\b"
        r"|\badd (?:\w+ )?documentation\b|\bdocs\b",
    ),
    (
        "signature_change",
        r"\bsignatures?\b|\bparameters?\b|\barguments?\b|\bparams?\b|\btype hints?\b"
        r"|\bannotat\w*|\btyping\b|\bkeyword\b|\bdefault values?\b",
    ),
    ("import_change", r"\bimports?\b|\blibrar(?:y|ies)\b"),
    (
        "defensive",
        r"\bvalidat\w*|\bguards?\b|\brobust\w*|\bdefensive\w*|\bsanitiz\w*|\bsanitis\w*|\bassert\w*"
        r"|\bedge cases\b|\b(?:handl|cover|consider)\w*\s+(?:\w+\s+){0,3}?edge cases?\b|\braises?\b|\bthrows?\b|\bexceptions?\b|\berror handling\b"
        r"|\bhandle (?:\w+ )?(?:errors?|exceptions?|invalid|none|empty|malformed)\b|\btry[/-]except\b"
        r"|\b(?:check|checks|checking) (?:the |for )?(?:input|type|none|null)s?\b|\bmalformed\b",
    ),
    ("deletion", r"\bremov\w*|\bdelet\w*|\bdrop\b|\bdead code\b|\bunused\b|\bsimplif\w*|\bmove\b|\bmoving\b"),
)

# "do not throw", "never raise", "without an exception": the instruction wants the case handled, by no raise.
_NEGATED_RAISE = re.compile(
    r"\b(?:not|never|no|don't|doesn't|without|instead of)\s+(?:\w+\s+){0,2}?"
    r"(?:raise|raising|throw|throwing|exceptions?|errors?)\b",
    re.IGNORECASE,
)
_EXCEPTION = re.compile(r"(?:Error|Exception|Warning)$")
_ANY_EXCEPTION = frozenset({"Error", "Exception", "Warning", "BaseException"})  # "raise an Exception": any kind

# What a guard tests (a pattern over its condition) and the words an instruction uses for that case:
# "raise a ValueError on negative cycles" asks for no `is None` check. A general request for validation
# ("make it robust", "validate the input") asks for any of them.
GUARD_TESTS: tuple[tuple[str, str, str], ...] = (
    (
        "none",
        r"\bis\s+(?:not\s+)?None\b|[=!]=\s*None\b|[=!]==?\s*(?:null|undefined|nil)\b|\bnullptr\b"
        r"|\brequireNonNull\b",
        r"\bnone\b|\bnull\w*|\bnil\b|\bmissing\b|\bundefined\b|\bnot (?:given|provided|set)\b|\babsent\b",
    ),
    (
        "type",
        r"\bisinstance\s*\(|\btype\s*\(|\btypeof\b|\binstanceof\b",
        r"\btypes?\b|\bisinstance\b|\btyped\b|\bnon-?numeric\b|\bnot an? (?:int|integer|number|string|list|dict)\b",
    ),
    (
        "empty",
        r"\blen\s*\([^)]*\)\s*(?:==|<=?)\s*[01]\b|^\s*(?:el)?if\s+not\s+[A-Za-z_][\w.]*\s*:|\.empty\(\)"
        r"|\.length\s*===?\s*0\b|\.isEmpty\(\)",
        r"\bempty\b|\bno (?:elements|items|entries|values)\b|\blength\b|\bzero[- ]length\b",
    ),
    (
        "range",
        r"[<>]=?\s*-?\d|==\s*0\b",
        r"\bnegative\b|\bpositive\b|\bzero\b|\bgreater\b|\bless\b|\blarger\b|\bsmaller\b|\bexceed\w*|\bbounds?\b"
        r"|\brange\b|\blimit\w*|\bbetween\b|\bat (?:least|most)\b|\bmaximum\b|\bminimum\b|\boverflow\w*|\bdivision\b",
    ),
)
_GENERAL_VALIDATION = re.compile(
    r"\bvalidat\w*|\brobust\w*|\bdefensive\w*|\bsanitiz\w*|\bsanitis\w*|\bedge cases\b|\b(?:handl|cover|consider)\w*\s+(?:\w+\s+){0,3}?edge cases?\b|\bmalformed\b|\binvalid\b"
    r"|\berror handling\b|\bhandle (?:\w+ )?(?:errors?|exceptions?|invalid)\b|\bguards?\b|\bbad input\b|\bany input\b",
    re.IGNORECASE,
)
_GUARD_TEST_RE = tuple(
    (name, re.compile(cond, re.MULTILINE), re.compile(words, re.IGNORECASE)) for name, cond, words in GUARD_TESTS
)


def guard_tests(code: str) -> frozenset[str]:
    """The cases the conditions in `code` test (`GUARD_TESTS`); empty when none is recognised."""
    lines = "\n".join(
        ln
        for ln in code.splitlines()
        if re.match(r"\s*(?:el)?if\b|\s*assert\b|\s*if\s*\(", ln) or "requireNonNull" in ln
    )
    no_len = _LEN_TEST.sub(" ", lines)  # `len(x) == 0` tests emptiness, not a range
    return frozenset(name for name, cond, _ in _GUARD_TEST_RE if cond.search(lines if name != "range" else no_len))


_LEN_TEST = re.compile(r"\blen\s*\([^)]*\)\s*(?:==|<=?)\s*[01]\b")


# Broad requests: the code may change shape. Each allows the kinds listed (an optimisation changes the
# code's logic and interfaces, not its names, comments or input checks).
_ALL = (
    "rename",
    "formatting_only",
    "signature_change",
    "import_change",
    "deletion",
    "defensive",
    "comment_removed",
    "docstring",
)
BROAD_RULES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("refactor", r"\brefactor\w*|\brestructur\w*|\bobject[- ]oriented\b", _ALL),
    ("rewrite", r"\brewrit\w*|\bre-write\b|\bfrom scratch\b", _ALL),
    (
        "translate",
        r"\btranslat\w*|\bport (?:it |this |the code )?to\b|\bconvert (?:it |this |the code )?(?:in)?to\b",
        _ALL,
    ),
    ("optimise", r"\boptimi[sz]\w*|\bspeed up\b|\bmake it faster\b", ("signature_change", "import_change", "deletion")),
    (
        "modernise",
        r"\bmoderni[sz]\w*|\bidiomatic\b|\bclean ?up\b",
        ("rename", "formatting_only", "signature_change", "import_change", "deletion", "comment_removed", "docstring"),
    ),
)

ADDED_CODE = "added_code"  # a kind only the judge gives: new definitions (and output) nobody asked for
COMMENT_ADDED = "comment_added"  # the judge's too: a comment added on code the edit does not change

# Kinds nothing in an instruction excuses: an omission marker, or a change outside the selection.
NEVER_REQUESTED = frozenset({"lazy_placeholder", "outside_target"})

# Names too common to say anything about scope.
_COMMON = frozenset(
    {
        "self",
        "cls",
        "none",
        "true",
        "false",
        "int",
        "str",
        "float",
        "list",
        "dict",
        "set",
        "tuple",
        "bool",
        "object",
        "args",
        "kwargs",
        "return",
        "returns",
    }
)

_KIND_RE = tuple((kind, re.compile(rx, re.IGNORECASE)) for kind, rx in KIND_RULES)
_BROAD_RE = tuple((label, re.compile(rx, re.IGNORECASE), kinds) for label, rx, kinds in BROAD_RULES)
_BACKTICKS = re.compile(r"`([^`\n]{1,300})`")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")
# "rename X to Y", "change X to Y", "switch X to Y", "replace X with Y" (X, Y optionally in backticks)
_RENAME = re.compile(
    r"\b(rename|change|switch|replace|turn)\s+(?:the\s+)?(?:\w+\s+)?`?([A-Za-z_][\w.]*)`?(?:\(\))?\s*"
    r"(?:\w+\s+)?(?:to|into|with|by)\s+(?:be\s+|a\s+|an\s+)?`?([A-Za-z_][\w.]*)`?",
    re.IGNORECASE,
)


def _code_like(word: str) -> bool:
    """A plain word that reads as code: snake_case, camelCase, digits, dunder."""
    return "_" in word or any(c.isdigit() for c in word) or (word[:1].islower() and any(c.isupper() for c in word[1:]))


def split_identifier(name: str) -> list[str]:
    """`find_manager_n` -> find, manager, n; `isPasswordStrong` -> is, password, strong (lower case)."""
    parts = []
    for chunk in name.split("_"):
        parts += re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", chunk)
    return [p.lower() for p in parts if p]


def _stem_match(part: str, word: str) -> bool:
    """`corr` spells "correlation", `names` "name" (a prefix either way, of four letters or more)."""
    return (len(word) > len(part) and word.startswith(part)) or (
        len(word) >= 4 and part.startswith(word) and len(part) - len(word) <= 2
    )


class Scope(msgspec.Struct, frozen=True, kw_only=True):
    """What one instruction asks for."""

    text: str
    names: frozenset[str]  # code names it mentions: in backticks, code-like plain words, calls (lower case)
    shown: tuple[str, ...]  # the same as written, in order, for messages
    words: frozenset[str]  # every word, lower case (weak evidence: "rename to covariance")
    kinds: dict[str, str]  # kind -> the words that asked for it
    broad: str | None  # "refactor", "rewrite", ... when the code may change shape
    broad_kinds: frozenset[str] = frozenset()  # the kinds that broad request allows
    no_raise: bool = False  # "do not throw": the guards it asks for return, they do not raise
    exceptions: frozenset[str] = frozenset()  # exception classes it names (`ValueError`)
    renames: tuple[tuple[str, str], ...]  # ("x", "y") from "rename x to y" (lower case)
    signatures: frozenset[str]  # functions it gives a signature for: `f(a, b)` (lower case)
    context: bool = False  # it quotes a specification or code, which counted as no request
    cases: frozenset[str] = frozenset()  # the guard cases its words speak of (`GUARD_TESTS`: "none", ...)
    general_validation: bool = False  # it asks for validation in general ("make it robust")
    roles: frozenset[str] = frozenset()  # special methods its words name by their role (`ROLES`)
    asks_output: bool = False  # it speaks of output: printing, logging, messages, warnings
    asks_comments: bool = False  # it asks for comments or explanations
    adds_definition: bool = False  # it asks for a new function, method or class ("add a method that ...")

    def mentions(self, name: str) -> bool:
        """The instruction names this identifier, or spells it out (`corr` for "correlation",
        `RidgeCV` for "ridge"): every part of three letters or more is a word or a word's prefix. A
        special method (`__init__`) is named by its name or by the role the data model gives it (`ROLES`:
        "constructor"), never by a plain word that shares letters with it ("string" is no `__str__`)."""
        low = name.lower()
        if low in self.names:
            return True
        if DUNDER.fullmatch(name):
            return low in self.roles
        if low in self.words:
            return True
        parts = [p for p in split_identifier(name) if len(p) >= 3]
        return bool(parts) and all(p in self.words or any(_stem_match(p, w) for w in self.words) for p in parts)

    def names_new_name(self, old: str, new: str) -> bool:
        """A rename's new name is the instruction's: written as code, or a plain word it uses (`peek`,
        `covariance`, `corr` for "correlation"); a name that only adds words to the old one (`tokens` ->
        `tokens_value`) must be written out."""
        if self.named_strongly(new):
            return True
        parts, old_parts = split_identifier(new), set(split_identifier(old))
        if len(parts) > 1 and old_parts and old_parts <= set(parts):
            return False
        return self.mentions(new)

    def named_strongly(self, name: str) -> bool:
        return name.lower() in self.names


# A lead-in that quotes what the code must do ("with the following specifications:", "the docstring
# below:"): what follows describes the code, it asks for no change. The quote is the fenced block right
# after it, else it runs to the instruction's last paragraph (the ask), or to the end.
_QUOTE_LEAD = re.compile(
    r"\b(?:following|below|this|these|the|my|its)\s+(?:\w+\s+){0,2}?"
    r"(?:specifications?|specs?|description|docstring|requirements?|documentation|problem(?: statement)?|task)"
    r"\s*(?:below\s*)?:[ \t]*(?:\n|$)",
    re.IGNORECASE,
)
_FENCE = re.compile(r"```.*?(?:```|$)", re.DOTALL)
_QUOTED_LINE = re.compile(r"^[ \t]*>.*$", re.MULTILINE)
_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|$)", re.MULTILINE)
_SPACE = re.compile(r"\s+")
# a sentence of this many words found word for word in the original code (its docstring, a comment)
# describes the code as it stands
VERBATIM_WORDS = 6


def split_request(text: str, original: str | None = None) -> tuple[str, str]:
    """(request, context): the instruction without what it only quotes (a specification after a lead-in,
    fenced code, `>` lines, sentences copied from the original code), and the quoted part."""
    quoted: list[tuple[int, int]] = [m.span() for m in _FENCE.finditer(text)]
    quoted += [m.span() for m in _QUOTED_LINE.finditer(text)]
    lead = _QUOTE_LEAD.search(text)
    if lead:
        fence = _FENCE.match(text, lead.end() + len(text[lead.end() :]) - len(text[lead.end() :].lstrip()))
        breaks = [m.end() for m in re.finditer(r"\n[ \t]*\n", text) if m.start() >= lead.end()]
        quoted.append((lead.end(), fence.end() if fence else breaks[-1] if breaks else len(text)))
    if original:
        code = _SPACE.sub(" ", original).lower()
        for m in _SENTENCE.finditer(text):
            words = m.group(0).strip(" \t.!?")
            if len(words.split()) >= VERBATIM_WORDS and _SPACE.sub(" ", words).lower() in code:
                quoted.append(m.span())
    mask = bytearray(len(text))
    for s, e in quoted:
        mask[s:e] = b"\x01" * (e - s)
    request = "".join(ch if not mask[i] else ("\n" if ch == "\n" else " ") for i, ch in enumerate(text))
    context = "".join(ch if mask[i] else ("\n" if ch == "\n" else " ") for i, ch in enumerate(text))
    return request, context


def parse_instruction(text: str | None, original: str | None = None) -> Scope:
    """The scope of `text`. Only its request counts: a quoted specification, code or a sentence of the
    original itself describes the code (`split_request`); `original` enables the last check."""
    full = text or ""
    text, context = split_request(full, original)
    shown: list[str] = []
    signatures: set[str] = set()
    for span in _BACKTICKS.findall(text):
        shown += [w for w in _IDENT.findall(span) if not keyword.iskeyword(w)]
        signatures |= {m.lower() for m in _CALL.findall(span) if re.search(r"\(\s*[A-Za-z_]", span)}
    plain = _BACKTICKS.sub(" ", text)
    shown += [w for w in _WORD.findall(plain) if _code_like(w)]
    # a call written out in plain text with arguments names a signature too: f(a, b)
    for m in re.finditer(r"\b([A-Za-z_]\w*)\(\s*([A-Za-z_]\w*)(?:\s*[:,)])", plain):
        shown.append(m.group(1))
        signatures.add(m.group(1).lower())
    shown = list(dict.fromkeys(w for w in shown if w.lower() not in _COMMON))
    # the words, not the code: `translate_from_list` asks for no translation
    prose = _WORD.sub(lambda m: " " if _code_like(m.group(0)) else m.group(0), plain)
    kinds: dict[str, str] = {}
    for kind, rx in _KIND_RE:
        found = rx.search(prose)
        if found:
            kinds[kind] = found.group(0).lower()
    broad, broad_kinds = next(
        ((label, frozenset(k)) for label, rx, k in _BROAD_RE if rx.search(prose)), (None, frozenset())
    )
    renames = tuple(
        (a.split(".")[-1].lower(), b.split(".")[-1].lower())
        for verb, a, b in _RENAME.findall(text)
        if (verb.lower() == "rename" or _code_like(a) or f"`{a}" in text) and a.lower() not in _COMMON
    )
    return Scope(
        text=full,
        context=bool(context.strip()),
        names=frozenset(w.lower() for w in shown),
        shown=tuple(shown),
        words=frozenset(w.lower() for w in _WORD.findall(text) if len(w) > 1),
        kinds=kinds,
        broad=broad,
        broad_kinds=broad_kinds,
        no_raise=bool(_NEGATED_RAISE.search(prose)),
        exceptions=frozenset(
            w
            for w in [*shown, *_WORD.findall(text)]
            if w[:1].isupper() and _EXCEPTION.search(w) and w not in _ANY_EXCEPTION
        ),
        renames=renames,
        signatures=frozenset(signatures),
        cases=frozenset(name for name, _, words in _GUARD_TEST_RE if words.search(prose)),
        general_validation=bool(_GENERAL_VALIDATION.search(prose)),
        roles=frozenset(n for names, rx in ROLE_PATTERNS if rx.search(prose) for n in names),
        adds_definition=bool(ADD_DEFINITION.search(prose)),
        asks_output=bool(OUTPUT_WORDS.search(prose)),
        asks_comments=bool(COMMENT_WORDS.search(prose)) or bool(broad_kinds),
    )


def allowed_kinds(scope: Scope) -> set[str]:
    """The kinds of change the instruction asks for in general (names aside)."""
    return (set(scope.kinds) | scope.broad_kinds) - NEVER_REQUESTED


class UnitFacts(msgspec.Struct, frozen=True):
    """What the judge needs to know about one change unit (built from a fidelity report)."""

    kinds: tuple[str, ...]
    renames: dict[str, str] = {}
    function: str | None = None  # the innermost function around the unit (qualified name)
    new_names: frozenset[str] = frozenset()  # identifiers on the unit's edited side
    old_names: frozenset[str] = frozenset()  # identifiers on its original side, when known
    function_changes_logic: bool = False  # another unit of the same function changes logic
    docstring_kept: bool = False  # a docstring unit whose edited side still holds a string
    import_used: bool = False  # an import unit whose new names the changed code uses, or whose
    # removed names the edited code no longer uses
    moved: bool = False  # deleted code that reappears elsewhere in the edited text
    rename_rewritten: bool = False  # no line holding a renamed name survives as a pure rename
    imported: frozenset[str] = frozenset()  # renamed names an import of the original binds
    same_statements: bool = False  # both sides hold the same statements (`if a:` -> `if not a:`)
    new_code: bool = False  # lines inserted into functions the edit adds: new code, not a change of old code
    raises: frozenset[str] = frozenset()  # a guard unit's `raise`/`assert`, and the exception classes it names
    import_unused: frozenset[str] = frozenset()  # names an import unit adds that no changed code uses
    guard_tests: frozenset[str] = frozenset()  # a guard unit's tested cases (`guard_tests`)
    exits_only: bool = False  # a guard unit that only leaves (`return`/`continue`): no raise/assert/try/hasattr
    tokens_changed: int = 0
    defines: tuple[str, ...] = ()  # definitions (`def`, `class`) a unit of inserted statements adds
    defines_used: tuple[str, ...] = ()  # those of them the rest of the edited code refers to
    defines_copies: tuple[str, ...] = ()  # those that copy a definition of the original verbatim
    defines_existing: tuple[str, ...] = ()  # those that replace or override a definition of the original
    edit_defines: frozenset[str] = frozenset()  # every definition the edit's units add (when `defines`)
    new_options: tuple[str, ...] = ()  # parameters with a default a signature unit adds to an existing function
    output: tuple[str, ...] = ()  # calls that print or log the unit adds (`print`, `logging.warning`)
    comment_added: str | None = None  # a comment a comment-only unit adds on code the edit leaves alone
    target: TargetFacts = TargetFacts()  # where the unit is against the functions the edit changes (`target_scope`)


class Verdict(msgspec.Struct, frozen=True):
    flagged: bool
    reason: str  # for the message: why requested, or why not
    unrequested: tuple[str, ...] = ()  # the kinds nothing asked for


_LABEL = {
    "rename": "rename",
    "formatting_only": "reformatting",
    "comment_removed": "comment removal",
    "docstring": "docstring change",
    "signature_change": "signature change",
    "import_change": "import change",
    "defensive": "input validation",
    "deletion": "deletion",
    "added_code": "new code",
}


# A guard in a unit of this many changed tokens that also changes logic belongs to new or rewritten code
REWRITE_TOKENS = 40

# Kinds that come with new or rewritten logic in one unit (guards in new code, a rewritten body's
# docstring and signature). A rename or a lost comment is a separate choice and judged on its own.
_WITH_LOGIC = frozenset({"deletion", "signature_change"})


def _requested_by(kind: str, scope: Scope, facts: UnitFacts) -> str | None:
    """Why this kind of change in this unit is requested, or None."""
    specific = _evidence(kind, scope, facts)
    if specific:
        return specific
    if kind == "import_change" and facts.import_unused and not any(scope.mentions(n) for n in facts.import_unused):
        return None  # an import nothing uses is never what a request was for
    if kind == "defensive" and not _raises_as_asked(scope, facts):
        return None
    if kind in scope.kinds and (kind not in _SCOPED or _in_scope(scope, facts)):
        return f"{_LABEL[kind]} requested by the instruction ({scope.kinds[kind]!r})"
    if kind in scope.broad_kinds and (kind not in _SCOPED or _in_scope(scope, facts)):
        return f"{_LABEL[kind]} is part of the requested {scope.broad}"
    return None


# Kinds that words ask for where the instruction points: "add validation to `f`" excuses no guard in `g`.
_SCOPED = frozenset({"defensive", "docstring", "comment_removed", "rename", "formatting_only"})


def _raises_as_asked(scope: Scope, facts: UnitFacts) -> bool:
    """A guard that tests a case the instruction does not speak of, raises where it says not to, or raises
    another exception than the ones it names, is not the validation it asked for."""
    if facts.guard_tests and not scope.general_validation and not facts.guard_tests & scope.cases:
        return False  # "raise on negative cycles": a `None` check is another validation
    if not facts.raises:
        return True
    if scope.no_raise:
        return False
    named = {n for n in facts.raises if _EXCEPTION.search(n)}
    return not (scope.exceptions and named and not named & scope.exceptions)


def _in_scope(scope: Scope, facts: UnitFacts) -> bool:
    """The unit is where the instruction points: it names no code, or it names the unit's function, or
    the edit changes that function's code anyway. (Naming a class does not point at each of its methods.)"""
    if not scope.names or facts.function is None or facts.function_changes_logic or facts.new_code:
        return True
    return scope.mentions(facts.function.split(".")[-1])


def _evidence(kind: str, scope: Scope, facts: UnitFacts) -> str | None:
    """What the instruction names, or the rest of the edit does, that makes this unit's change requested."""
    fn = (facts.function or "").split(".")[-1]
    if kind == "rename":
        why = _rename_reason(scope, facts)
        if why is None and facts.rename_rewritten:
            why = "every line the rename touches is rewritten anyway"
        return why
    if kind == "defensive" and facts.same_statements:
        return "changes an existing condition (logic), adds no guard"
    if kind == "defensive" and facts.exits_only and not facts.guard_tests:
        return "an exit on the code's own condition (logic), not an input check"
    if kind in ("defensive", "docstring") and facts.new_code:
        return f"part of the new code{f' of `{fn}`' if fn else ''}"
    if kind == "docstring" and facts.docstring_kept and "logic" in facts.kinds:
        return "part of a logic change"
    if kind == "defensive" and "logic" in facts.kinds and facts.tokens_changed >= REWRITE_TOKENS:
        return f"part of {facts.tokens_changed} tokens of new or rewritten logic"
    if "logic" in facts.kinds and kind in _WITH_LOGIC:
        return "part of a logic change"  # the unit holds the requested change; flagging it would revert that too
    if kind == "signature_change":
        if fn and fn.lower() in scope.signatures:
            return f"the instruction gives the signature of `{fn}`"
        added = (facts.new_names - facts.old_names) if facts.old_names else facts.new_names - {fn}
        named = sorted(n for n in added if n.lower() not in _COMMON and n != fn and scope.named_strongly(n))
        if named:
            return f"the instruction names the parameter `{named[0]}`"
        if facts.new_options:
            return None  # a new option nobody named: a constant would serve the change as well
        if facts.function_changes_logic and fn:
            return f"the edit changes the code of `{fn}` too"
    if kind == "docstring" and facts.docstring_kept:
        if fn and facts.function_changes_logic:
            return f"updates the docstring of `{fn}`, whose code the edit changes"
        if fn and scope.mentions(fn):
            return f"updates the docstring of `{fn}`, which the instruction names"
        said = sorted(n for n in facts.new_names - facts.old_names if len(n) > 1)
        if facts.old_names and said and all(scope.mentions(n) for n in said):
            return f"the docstring now says `{said[0]}`, as the instruction does"
    if kind == "import_change" and facts.import_used:
        return "the import follows the changed code"
    if kind == "deletion":
        if facts.moved:
            return "the code moved"
        if facts.function_changes_logic and fn:
            return f"part of the change to `{fn}`"
    return None


def _follows(old: str, new: str, anchor: tuple[str, str]) -> bool:
    """`all_managers_names` -> `all_manager_n_names` follows the rename `find_managers` -> `find_manager_n`:
    it drops the parts the anchor drops and adds the parts it adds, and no word the anchor lacks."""
    a_old, a_new = set(split_identifier(anchor[0])), set(split_identifier(anchor[1]))
    dropped, added = a_old - a_new, a_new - a_old
    o, n = set(split_identifier(old)), set(split_identifier(new))
    return bool(dropped or added) and dropped <= o - n and added <= n - o and n - o <= a_new


def _rename_reason(scope: Scope, facts: UnitFacts) -> str | None:
    if not facts.renames:
        return None
    reasons = []
    for old, new in facts.renames.items():
        if any(a == old.lower() for a, _ in scope.renames):
            reasons.append(f"the instruction asks to rename `{old}`")
        elif scope.names_new_name(old, new):
            reasons.append(f"the instruction names `{new}`")
        elif old in facts.imported:
            reasons.append(f"uses `{new}` instead of the imported `{old}` (a change of library, not a rename)")
        elif any(_follows(old.lower(), new.lower(), pair) for pair in scope.renames):
            reasons.append(f"`{new}` follows the requested rename")
        else:
            return None
    return reasons[0]


def not_requested_reason(scope: Scope) -> str:
    if scope.shown:
        listed = ", ".join(f"`{n}`" for n in scope.shown[:4]) + (", ..." if len(scope.shown) > 4 else "")
        return f"not requested: the instruction names only {listed}"
    return "not requested"


def judge_unit(scope: Scope | None, facts: UnitFacts, unrequested_kinds: frozenset[str]) -> Verdict:
    """Whether a unit holds a change nobody asked for. `scope` None: there is no instruction (an observed
    change), so every kind in `unrequested_kinds` counts."""
    if scope is not None and scope.text.strip() and facts.defines:
        extra, copies = unrequested_definitions(scope, facts)
        if extra:
            return Verdict(True, added_reason(extra, copies), (ADDED_CODE,))
    if scope is not None and scope.text.strip() and facts.comment_added and not scope.asks_comments:
        return Verdict(True, "not requested: a comment on code the edit does not change", (COMMENT_ADDED,))
    if scope is not None and scope.text.strip() and facts.output and not scope.asks_output:
        calls = ", ".join(f"`{c}`" for c in facts.output)
        return Verdict(True, f"not requested: adds output ({calls}) the instruction does not ask for", (ADDED_CODE,))
    outside = outside_target_reason(scope, facts.kinds, facts.function, facts.target) if scope else None
    if outside:
        return Verdict(True, outside, ("outside_target",))
    suspects = [k for k in facts.kinds if k in unrequested_kinds]
    if not suspects:
        return Verdict(False, "")
    never = [k for k in suspects if k in NEVER_REQUESTED]
    if never:
        return Verdict(True, "not requested", tuple(never))
    if scope is None or not scope.text.strip():
        return Verdict(True, "not requested", tuple(suspects))
    reasons, remaining = [], []
    for kind in suspects:
        why = _requested_by(kind, scope, facts)
        (reasons.append(why) if why else remaining.append(kind))
    if remaining:
        if "signature_change" in remaining and facts.new_options:
            listed = ", ".join(f"`{n}`" for n in facts.new_options)
            why = (
                f"{not_requested_reason(scope)}, not the new parameter {listed}"
                if scope.shown
                else f"not requested: the instruction does not name the new parameter {listed}"
            )
            return Verdict(True, why, tuple(remaining))
        return Verdict(True, not_requested_reason(scope), tuple(remaining))
    return Verdict(False, reasons[0])
