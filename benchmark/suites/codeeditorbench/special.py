"""Special judges: problems with more than one right output."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable


def check_even_picture(test_input: str, expected: str, output: str) -> tuple[bool, str]:
    """Codeforces 1368C "Even Picture": k gray cells, connected, each with an even number of gray
    neighbours, exactly n of them with all four neighbours gray, |coordinates| <= 1e9, k <= 5e5."""
    try:
        n = int(test_input.split()[0])
        tokens = output.split()
        k = int(tokens[0])
        coords = [int(t) for t in tokens[1:]]
    except (ValueError, IndexError):
        return False, "output is not k followed by k pairs of integers"
    if not 1 <= k <= 500_000 or len(coords) != 2 * k:
        return False, f"k = {k} with {len(coords) // 2} pairs"
    cells = list(zip(coords[0::2], coords[1::2], strict=True))
    if any(abs(x) > 10**9 or abs(y) > 10**9 for x, y in cells):
        return False, "a coordinate beyond 1e9"
    gray = set(cells)
    if len(gray) != k:
        return False, "a cell listed twice"
    steps = ((1, 0), (-1, 0), (0, 1), (0, -1))
    full = 0
    for x, y in gray:
        around = sum((x + dx, y + dy) in gray for dx, dy in steps)
        if around % 2:
            return False, f"cell {x} {y} has {around} gray neighbours"
        full += around == 4
    if full != n:
        return False, f"{full} cells with four gray neighbours, expected {n}"
    seen, todo = {cells[0]}, [cells[0]]
    while todo:
        x, y = todo.pop()
        for dx, dy in steps:
            c = (x + dx, y + dy)
            if c in gray and c not in seen:
                seen.add(c)
                todo.append(c)
    return (True, "") if len(seen) == k else (False, "the gray cells are not connected")


def check_cinema(test_input: str, expected: str, output: str) -> tuple[bool, str]:
    """Codeforces 670C "Cinema": any movie with the most very pleased scientists (audio language known),
    ties broken by the most almost satisfied (subtitles known); its 1-based index."""
    try:
        nums = [int(t) for t in test_input.split()]
        n = nums[0]
        known = Counter(nums[1 : 1 + n])
        m = nums[1 + n]
        audio, subs = nums[2 + n : 2 + n + m], nums[2 + n + m : 2 + n + 2 * m]
        answer = int(output.split()[0])
    except (ValueError, IndexError):
        return False, "the output is not one movie index"
    if not 1 <= answer <= m:
        return False, f"movie {answer} does not exist (m = {m})"
    best = max((known[audio[j]], known[subs[j]]) for j in range(m))
    got = (known[audio[answer - 1]], known[subs[answer - 1]])
    return (True, "") if got == best else (False, f"movie {answer} pleases {got}, the best is {best}")


SPECIAL_JUDGES: dict[str, Callable[[str, str, str], tuple[bool, str]]] = {
    "debug/707": check_cinema,
    "translate/3685": check_even_picture,
}
