"""can-ai-code (SPEC 3.6): interview questions generated through the language server and graded with
the original evaluator's checks, the function called in the sandbox.

Modules: `interview` (YAML sets), `prompts` (templates), `function` (name/args regex, sandboxed calls),
`checks` (pure scoring), `evaluate` (one answer), `recorded` (published eval files), `reference`
(answers for the gold backend), `suite` (the `Suite`), `regrade` (the published files, as a script).
"""
