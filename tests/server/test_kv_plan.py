"""The KV cache plan (server.backends.kv_plan) played on a model of llama.cpp's cache: cells with a
position, a token and the sequences they belong to, with llama.cpp's rules (a sequence's new tokens come
after its last position; `seq_add` moves the cells of a position range; `seq_cp` shares cells). The
engine's order of operations (local_llama_direct.LlamaDirect.prefill) must leave the main sequence
holding exactly the prompt, every reused cell keeping the token it was computed for."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from server.backends.kv_plan import Kept, plan

MAIN, SCRATCH = 0, 1


class Cache:
    def __init__(self, tokens: list[int]) -> None:
        # cell: [position, token, sequences, computed fresh in this round]
        self.cells = [[p, t, {MAIN}, False] for p, t in enumerate(tokens)]

    def seq(self, s: int) -> list[list]:
        return [c for c in self.cells if s in c[2]]

    def rm(self, s: int, p0: int, p1: int) -> None:
        p1 = p1 if p1 >= 0 else 1 << 30
        for c in self.seq(s):
            if p0 <= c[0] < p1 or p0 < 0:
                c[2].discard(s)
        self.cells = [c for c in self.cells if c[2]]

    def cp(self, src: int, dst: int, p0: int, p1: int) -> None:
        for c in self.seq(src):
            if p0 <= c[0] < p1:
                c[2].add(dst)

    def add(self, s: int, p0: int, p1: int, delta: int) -> None:
        for c in self.seq(s):
            if p0 <= c[0] < p1:
                assert len(c[2]) == 1, "a shared cell moved"
                c[0] += delta

    def decode(self, tokens: list[int], first: int, s: int) -> None:
        last = max((c[0] for c in self.seq(s)), default=-1)
        assert first == last + 1, f"llama.cpp refuses: sequence {s} ends at {last}, batch starts at {first}"
        self.cells += [[first + i, t, {s}, True] for i, t in enumerate(tokens)]


def run(cached: list[int], prompt: list[int], chunks: int) -> tuple[Cache, int]:
    todo = plan(cached, prompt, chunks)
    cache = Cache(cached)
    for p0, p1 in todo.drop:
        cache.rm(MAIN, p0, p1)
    kept_cells = {id(c): c[1] for c in cache.cells}
    for k in todo.shift_order():
        before = sorted(c[0] for c in cache.seq(MAIN) if k.old <= c[0] < k.old + k.size)
        assert before == list(range(k.old, k.old + k.size)), "a shift's range holds cells of another run"
        cache.add(MAIN, k.old, k.old + k.size, k.delta)
    for g0, g1 in todo.compute:
        if g1 == len(prompt):
            cache.decode(prompt[g0:g1], g0, MAIN)
        else:
            cache.rm(SCRATCH, -1, -1)
            cache.cp(MAIN, SCRATCH, 0, g0)
            cache.decode(prompt[g0:g1], g0, SCRATCH)
            cache.cp(SCRATCH, MAIN, g0, g1)
            cache.rm(SCRATCH, -1, -1)
    main = sorted(cache.seq(MAIN), key=lambda c: c[0])
    assert [c[0] for c in main] == list(range(len(prompt)))
    assert [c[1] for c in main] == prompt  # every position holds the prompt's token
    assert all(c[1] == kept_cells[id(c)] for c in main if not c[3])  # a reused cell keeps its token
    assert not cache.seq(SCRATCH) and all(c[2] == {MAIN} for c in cache.cells)
    assert main[-1][3], "the last token is computed: its logits start the answer"
    return cache, todo.reused


def test_a_changed_line_in_the_middle_reuses_both_sides():
    doc = list(range(100, 400))
    cached = [1, 2, 3, *doc, 7, 8, 900, 901]  # prompt (system, document, instruction) and an answer
    changed = [1, 2, 3, *doc[:150], 55, 56, 57, 58, *doc[151:], 7, 8]
    _, reused = run(cached, changed, 32)
    assert reused == len(changed) - 4 - 1  # all but the new line's four tokens and the last token
    _, prefix_only = run(cached, changed, 0)
    assert prefix_only == 3 + 150


def test_an_identical_prompt_computes_its_last_token_only():
    prompt = list(range(50))
    assert run([*prompt, 99, 98], prompt, 8)[1] == 49
    assert run(prompt, prompt, 0)[1] == 49


def test_runs_shorter_than_the_chunk_are_computed():
    cached = list(range(100))
    prompt = [*range(40), 500, *range(41, 50), 501, *range(51, 100)]
    _, reused = run(cached, prompt, 16)
    assert reused == 40 + 48  # the nine tokens between the two changes are too short a run


def test_runs_moving_both_ways_in_one_prompt():
    a, b, c = list(range(40)), list(range(100, 140)), list(range(200, 240))
    cached = [*a, 9, 9, 9, *b, *c]
    prompt = [*a, *b, 5, 5, 5, 5, 5, *c, 1]  # b moves left, c moves right
    todo = plan(cached, prompt, 8)
    assert [k.delta for k in todo.kept] == [0, -3, 2]
    run(cached, prompt, 8)


def test_an_empty_cache_and_an_empty_prompt():
    assert plan([], [1, 2, 3], 8).compute == [(0, 3)]
    assert plan([1, 2], [], 8).drop == [(0, 2)]
    assert Kept(5, 2, 3).delta == -3


@settings(max_examples=300, deadline=None)
@given(
    base=st.lists(st.integers(0, 5), min_size=1, max_size=80),
    edits=st.lists(
        st.tuples(st.integers(0, 79), st.integers(0, 6), st.lists(st.integers(0, 5), max_size=6)), max_size=4
    ),
    chunks=st.sampled_from([0, 1, 2, 4, 8]),
)
def test_any_edit_leaves_exactly_the_prompt(base, edits, chunks):
    """Random replacements, insertions and deletions over a small alphabet (many accidental matches)."""
    prompt = list(base)
    for at, cut, new in edits:
        at = min(at, len(prompt))
        prompt[at : at + cut] = new
    if prompt:
        run(base, prompt, chunks)
