"""Minimal LSP text edits: applying them rebuilds the edited text exactly, hunk by hunk."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from server.fidelity import apply_text_edits, measure
from server.fidelity.text.analysis import split_lines

LINES = st.sampled_from(
    ["x = 1", "    return x", "", "# note", "def f(a):", "s = 'é'", "emoji = '😀'", "\t", "y = [1,", "    2]", "zz"]
)
ENDINGS = st.sampled_from(["\n", "\r\n", "\r"])


@st.composite
def texts(draw):
    lines = draw(st.lists(st.tuples(LINES, ENDINGS), max_size=12))
    text = "".join(line + ending for line, ending in lines)
    if text and draw(st.booleans()):
        text = text.rstrip("\r\n")
    return text


@settings(max_examples=300, deadline=None)
@given(texts(), texts())
def test_edits_rebuild_the_edited_text(original, edited):
    report = measure(original, edited)
    assert apply_text_edits(original, report.edits) == edited
    assert report.edits == report.unit_edits()  # every unit's edits, in unit order


@settings(max_examples=200, deadline=None)
@given(texts(), texts(), st.data())
def test_any_subset_of_hunks_applies_cleanly(original, edited, data):
    report = measure(original, edited)
    chosen = [e for h in report.hunks if data.draw(st.booleans()) for e in h.edits]
    partial = apply_text_edits(original, chosen)
    # applying the rest on top of the partial result gives the full edit
    rest = measure(partial, edited)
    assert apply_text_edits(partial, rest.edits) == edited


def test_columns_are_utf16_code_units():
    original = "s = '😀'; x = 1\n"
    edited = "s = '😀'; x = 2\n"
    (edit,) = measure(original, edited).edits
    # the emoji is one code point but two UTF-16 code units
    assert (edit.range.start.line, edit.range.start.character) == (0, 14)
    assert (edit.range.end.line, edit.range.end.character) == (0, 15)
    assert edit.new_text == "2"


def test_edit_is_trimmed_to_the_changed_characters():
    (edit,) = measure("def f(a):\n    return a + 1\n", "def f(a):\n    return a + 2\n").edits
    assert edit.range.start.line == edit.range.end.line == 1
    assert edit.new_text == "2"


def test_crlf_pairs_are_never_split():
    original = "a = 1\r\nb = 2\r\n"
    edited = "a = 1\nb = 2\r\n"
    (edit,) = measure(original, edited).edits
    assert (edit.range.start.line, edit.range.start.character) == (0, 5)
    assert (edit.range.end.line, edit.range.end.character) == (1, 0)
    assert edit.new_text == "\n"


def test_lsp_line_splitting():
    assert split_lines("a\r\nb\rc\nd") == ["a\r\n", "b\r", "c\n", "d"]
    assert split_lines("") == []
    # form feeds and other Unicode separators are not LSP line breaks
    assert split_lines("a\x0cb\u2028c\n") == ["a\x0cb\u2028c\n"]
