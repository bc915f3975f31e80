"""The first stage: what the core derives from one text (Python): tokens, normalisation, one door to the AST,
structure, complexity and raw counts, the cached analysis, chunks, and text edits.
"""
