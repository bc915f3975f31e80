"""The language table: everything the language layer knows about a language is data in one `Lang` row.

Adding a language is adding a row: its grammar wheel, its LSP ids and extensions, and which node
types of its tree-sitter grammar play which part (comments, literals, functions, branches, ...).
The code in the sibling modules reads only these sets; nothing there names a language.

Python is not here on purpose: it keeps the paper-compatible path (`server.fidelity.text.tokens`), so
`detect` reports it as `PYTHON` and callers branch before reaching this layer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

PYTHON = "python"

F = frozenset

# Nodes whose children are statements (or members, or case groups), in any of the grammars below.
BLOCKS = F(
    {
        "program",
        "source_file",
        "translation_unit",
        "statement_block",
        "block",
        "class_body",
        "compound_statement",
        "declaration_list",
        "field_declaration_list",
        "statement_list",
        "constructor_body",
        "switch_body",
        "switch_block",
        "switch_block_statement_group",
        "switch_case",
        "switch_default",
        "case_statement",
        "expression_case",
        "default_case",
        "type_case",
        "communication_case",
        "match_block",
        "interface_body",
        "enum_body",
        "enum_body_declarations",
        "namespace_definition",
        "export_statement",
    }
)


@dataclass(frozen=True, slots=True)
class Lang:
    name: str
    grammar: tuple[str, str]  # (module, function returning the language pointer)
    language_ids: tuple[str, ...]  # LSP languageIds (and common aliases)
    extensions: tuple[str, ...]
    comments: frozenset[str]  # comment node types
    doc_prefixes: tuple[str, ...]  # a comment starting so is a doc comment
    doc_adjacent: bool  # a comment right above a declaration is its doc (Go)
    atomic: frozenset[str]  # nodes that are one token (string, template and char literals, ...)
    strings: frozenset[str]  # string literal types whose quote style is not meaning (same_tree)
    functions: frozenset[str]  # named function-like declarations
    lambdas: frozenset[str]  # anonymous function-like nodes (named when assigned to a name)
    classes: frozenset[str]  # scopes that qualify names (class, impl, namespace, ...)
    imports: frozenset[str]
    ifs: frozenset[str]
    else_clauses: frozenset[str]  # wrapper of an if's alternative, when the grammar has one
    loops: frozenset[str]
    switches: frozenset[str]
    cases: frozenset[str]  # non-default case labels (cyclomatic)
    catches: frozenset[str]
    ternaries: frozenset[str]
    jumps: frozenset[str]  # break/continue: a jump only when it names a label
    gotos: frozenset[str]
    jump_labels: frozenset[str] = F({"statement_identifier", "label_name", "label"})  # a labelled jump's label
    logical: frozenset[str] = F({"&&", "||"})  # boolean operators (cognitive sequences, cyclomatic)
    cyclomatic_extra_ops: frozenset[str] = F()  # further operators lizard counts (`??`)
    default_params: frozenset[str] = F()  # a parameter with a default value: lizard counts it (JS, TS)
    arm_guard: str = ""  # a match arm pattern with an `if` guard (Rust): a decision
    match_arms: str = ""  # node type of a match arm: arms after the first are decisions (Rust)
    try_operator: str = ""  # node type of `expr?` (Rust): an early return, lizard counts it
    let_else: str = ""  # a let statement with an else branch (Rust)
    preproc_ifs: frozenset[str] = F()  # #if / #ifdef / #elif (C, C++)
    parens: frozenset[str] = F({"parenthesized_expression"})
    optional: frozenset[str] = F()  # leaves a formatter may add or drop (`;` where ASI applies)
    calls: dict[str, str] = field(default_factory=dict)  # call node type -> field naming the callee
    nulls: frozenset[str] = F()  # texts of null-like literals
    null_checks: tuple[str, ...] = ()  # callee texts of library null guards
    type_checks: frozenset[str] = F()  # node types of instanceof/typeof tests
    throws: frozenset[str] = F()  # throw/raise/panic statements
    tries: frozenset[str] = F()  # try statements (with a handler)
    declarators: frozenset[str] = F()  # local variable declaration node types
    import_path_binds: bool = False  # an import without a name binds its path's last part (Go)
    require_calls: frozenset[str] = F()  # a top-level `const x = require('m')` is an import (CommonJS)
    identifiers: frozenset[str] = F({"identifier"})  # leaves that are plain names (bindable)
    blocks: frozenset[str] = BLOCKS  # nodes whose children are statements


_C_COMMON: dict[str, Any] = dict(  # Lang keyword arguments shared by a family
    comments=F({"comment"}),
    doc_prefixes=("/**", "///", "//!", "/*!"),
    doc_adjacent=False,
    atomic=F({"string_literal", "char_literal", "system_lib_string"}),
    strings=F(),
    imports=F({"preproc_include"}),
    ifs=F({"if_statement"}),
    else_clauses=F({"else_clause"}),
    loops=F({"for_statement", "while_statement", "do_statement"}),
    switches=F({"switch_statement"}),
    cases=F({"case_statement"}),
    ternaries=F({"conditional_expression"}),
    jumps=F(),
    gotos=F({"goto_statement"}),
    preproc_ifs=F({"preproc_if", "preproc_ifdef", "preproc_elif", "preproc_elifdef"}),
    calls={"call_expression": "function"},
    nulls=F({"NULL", "nullptr"}),
    throws=F({"throw_statement"}),
    declarators=F({"declaration"}),
    identifiers=F({"identifier", "field_identifier"}),
)

_JS_COMMON: dict[str, Any] = dict(  # Lang keyword arguments shared by a family
    comments=F({"comment", "html_comment"}),
    doc_prefixes=("/**",),
    doc_adjacent=False,
    atomic=F({"string", "template_string", "regex"}),
    strings=F({"string"}),
    functions=F({"function_declaration", "generator_function_declaration", "method_definition"}),
    lambdas=F({"arrow_function", "function_expression", "generator_function"}),
    classes=F({"class_declaration", "class"}),
    imports=F({"import_statement"}),
    ifs=F({"if_statement"}),
    else_clauses=F({"else_clause"}),
    loops=F({"for_statement", "for_in_statement", "while_statement", "do_statement"}),
    switches=F({"switch_statement"}),
    cases=F({"switch_case"}),
    catches=F({"catch_clause"}),
    ternaries=F({"ternary_expression"}),
    jumps=F({"break_statement", "continue_statement"}),
    gotos=F(),
    cyclomatic_extra_ops=F({"??"}),
    default_params=F({"assignment_pattern", "required_parameter", "optional_parameter"}),
    optional=F({";"}),
    calls={"call_expression": "function"},
    nulls=F({"null", "undefined"}),
    type_checks=F({"typeof", "instanceof"}),
    throws=F({"throw_statement"}),
    tries=F({"try_statement"}),
    declarators=F({"variable_declarator", "for_in_statement"}),  # `for (const x of xs)` binds x
    require_calls=F({"require"}),
    identifiers=F({"identifier", "shorthand_property_identifier_pattern"}),
)

_TS_COMMON: dict[str, Any] = {
    **_JS_COMMON,
    "functions": _JS_COMMON["functions"] | {"function_signature", "method_signature", "abstract_method_signature"},
    "classes": _JS_COMMON["classes"]
    | {"abstract_class_declaration", "interface_declaration", "internal_module", "module"},
}

LANGUAGES: tuple[Lang, ...] = (
    Lang(
        name="javascript",
        grammar=("tree_sitter_javascript", "language"),
        language_ids=("javascript", "javascriptreact", "js", "jsx", "node"),
        extensions=(".js", ".mjs", ".cjs", ".jsx"),
        **_JS_COMMON,
    ),
    Lang(
        name="typescript",
        grammar=("tree_sitter_typescript", "language_typescript"),
        language_ids=("typescript", "ts"),
        extensions=(".ts", ".mts", ".cts"),
        **_TS_COMMON,
    ),
    Lang(
        name="tsx",
        grammar=("tree_sitter_typescript", "language_tsx"),
        language_ids=("typescriptreact", "tsx"),
        extensions=(".tsx",),
        **_TS_COMMON,
    ),
    Lang(
        name="java",
        grammar=("tree_sitter_java", "language"),
        language_ids=("java",),
        extensions=(".java",),
        comments=F({"line_comment", "block_comment"}),
        doc_prefixes=("/**",),
        doc_adjacent=False,
        atomic=F({"string_literal", "character_literal"}),
        strings=F(),
        functions=F({"method_declaration", "constructor_declaration", "compact_constructor_declaration"}),
        lambdas=F({"lambda_expression"}),
        classes=F(
            {
                "class_declaration",
                "interface_declaration",
                "enum_declaration",
                "record_declaration",
                "object_creation_expression",
                "annotation_type_declaration",
            }
        ),
        imports=F({"import_declaration"}),
        ifs=F({"if_statement"}),
        else_clauses=F(),
        loops=F({"for_statement", "enhanced_for_statement", "while_statement", "do_statement"}),
        switches=F({"switch_expression"}),
        cases=F({"switch_label"}),
        catches=F({"catch_clause"}),
        ternaries=F({"ternary_expression"}),
        jumps=F({"break_statement", "continue_statement"}),
        gotos=F(),
        jump_labels=F({"identifier"}),
        calls={"method_invocation": "name"},
        nulls=F({"null"}),
        null_checks=(
            "Objects.requireNonNull",
            "requireNonNull",
            "Preconditions.checkNotNull",
            "checkNotNull",
            "Objects.requireNonNullElse",
            "Assert.notNull",
        ),
        type_checks=F({"instanceof_expression"}),
        throws=F({"throw_statement"}),
        tries=F({"try_statement", "try_with_resources_statement"}),
        declarators=F({"variable_declarator", "enhanced_for_statement", "catch_formal_parameter"}),
    ),
    Lang(
        name="c",
        grammar=("tree_sitter_c", "language"),
        language_ids=("c",),
        extensions=(".c", ".h"),
        functions=F({"function_definition"}),
        lambdas=F(),
        classes=F({"struct_specifier"}),
        catches=F(),
        **_C_COMMON,
    ),
    Lang(
        name="cpp",
        grammar=("tree_sitter_cpp", "language"),
        language_ids=("cpp", "c++", "cuda-cpp", "objective-cpp"),
        extensions=(".cpp", ".cc", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ipp", ".tpp"),
        functions=F({"function_definition"}),
        lambdas=F({"lambda_expression"}),
        classes=F({"class_specifier", "struct_specifier", "namespace_definition", "union_specifier"}),
        catches=F({"catch_clause"}),
        **{
            **_C_COMMON,
            "loops": _C_COMMON["loops"] | {"for_range_loop"},
            "atomic": _C_COMMON["atomic"] | {"raw_string_literal"},
            "tries": F({"try_statement"}),
            "declarators": F({"declaration", "for_range_loop"}),  # `for (auto x : xs)` binds x
            "type_checks": F({"dynamic_cast"}),  # a leaf text: the cast is a template call
            "identifiers": F({"identifier", "field_identifier", "namespace_identifier", "destructor_name"}),
        },
    ),
    Lang(
        name="go",
        grammar=("tree_sitter_go", "language"),
        language_ids=("go", "golang"),
        extensions=(".go",),
        comments=F({"comment"}),
        doc_prefixes=(),
        doc_adjacent=True,
        atomic=F({"interpreted_string_literal", "raw_string_literal", "rune_literal"}),
        strings=F(),
        functions=F({"function_declaration", "method_declaration", "method_elem"}),
        lambdas=F({"func_literal"}),
        classes=F(),
        imports=F({"import_declaration"}),
        ifs=F({"if_statement"}),
        else_clauses=F(),
        loops=F({"for_statement"}),
        switches=F({"expression_switch_statement", "type_switch_statement", "select_statement"}),
        cases=F({"expression_case", "type_case", "communication_case"}),
        catches=F(),
        ternaries=F(),
        jumps=F({"break_statement", "continue_statement"}),
        gotos=F({"goto_statement"}),
        optional=F({";"}),
        import_path_binds=True,
        calls={"call_expression": "function"},
        nulls=F({"nil"}),
        throws=F(),
        declarators=F({"short_var_declaration", "var_spec", "const_spec"}),
        identifiers=F({"identifier", "field_identifier"}),
    ),
    Lang(
        name="rust",
        grammar=("tree_sitter_rust", "language"),
        language_ids=("rust", "rs"),
        extensions=(".rs",),
        comments=F({"line_comment", "block_comment"}),
        doc_prefixes=("///", "//!", "/**", "/*!"),
        doc_adjacent=False,
        atomic=F({"string_literal", "raw_string_literal", "char_literal", "label", "lifetime"}),
        strings=F(),
        functions=F({"function_item", "function_signature_item"}),
        lambdas=F({"closure_expression"}),
        classes=F({"impl_item", "trait_item", "mod_item"}),
        imports=F({"use_declaration", "extern_crate_declaration"}),
        ifs=F({"if_expression"}),
        else_clauses=F({"else_clause"}),
        loops=F({"for_expression", "while_expression", "loop_expression"}),
        switches=F({"match_expression"}),
        cases=F(),
        catches=F(),
        ternaries=F(),
        jumps=F({"break_expression", "continue_expression"}),
        gotos=F(),
        match_arms="match_arm",
        arm_guard="match_pattern",
        try_operator="try_expression",
        let_else="let_declaration",
        calls={"call_expression": "function"},
        nulls=F({"None"}),
        throws=F({"macro_invocation"}),
        declarators=F({"let_declaration"}),
    ),
)

_BY_ID = {i: lang for lang in LANGUAGES for i in (lang.name, *lang.language_ids)}
_BY_EXT = {e: lang for lang in LANGUAGES for e in lang.extensions}
_PYTHON_IDS = frozenset({"python", "python3", "py"})
_PYTHON_EXTS = frozenset({".py", ".pyi", ".pyw"})


def by_name(name: str) -> Lang:
    """The row of a language by name or id; KeyError for an unknown one."""
    return _BY_ID[name.lower()]


def detect(language_id: str | None = None, path: str | None = None) -> Lang | str | None:
    """The language of a document: its LSP `languageId` first, else the file extension.

    Returns a `Lang`, the string `PYTHON` for Python (which keeps its own path), or None when the
    language is not supported (callers then fall back to token distance only, never to Python).
    """
    if language_id:
        key = language_id.strip().lower()
        if key in _PYTHON_IDS:
            return PYTHON
        if key in _BY_ID:
            return _BY_ID[key]
        if key not in ("plaintext", ""):
            return None
    if path:
        dot = path.rfind(".")
        slash = max(path.rfind("/"), path.rfind("\\"))
        ext = path[dot:].lower() if dot > slash + 1 else ""
        if ext in _PYTHON_EXTS:
            return PYTHON
        return _BY_EXT.get(ext)
    return None


def resolve(language_id: str | None, path: str | None = None) -> str:
    """What `measure(language=...)` should get for a document: "python", a row's name, or the given id
    (which `measure` reports as `unsupported:<id>`). The `languageId` decides; an empty one or
    "plaintext" defers to the extension, and an empty id with no known extension stays Python (what
    an editor that sends no language meant before languages existed here)."""
    key = (language_id or "").strip().lower()
    found = detect(key or None, path)
    if found == PYTHON:
        return PYTHON
    if isinstance(found, Lang):
        return found.name
    return key or PYTHON


def by_name_or_none(name: str) -> Lang | None:
    """The row of a language-layer name, None for Python or an unsupported id."""
    return _BY_ID.get(name.lower())
