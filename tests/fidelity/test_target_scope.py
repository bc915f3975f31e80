"""Where the instruction points (`target_scope`): a logic change to a function the instruction does not point
at, while the edit changes the one it names, is `outside_target`, unless it follows from that change
(issue 28). Also the repeated block among the new statements (`statements.repeated_block`)."""

from __future__ import annotations

from server.fidelity import measure
from server.fidelity.judge.flags import judge_statements, judge_units, judged_units

INVENTORY = """class Inventory:
    def __init__(self):
        self.items = {}

    def add(self, name, count):
        self.items[name] = self.items.get(name, 0) + count

    def total(self):
        return sum(self.items.values())


def load(rows):
    inv = Inventory()
    for name, count in rows:
        inv.add(name, count)
    return inv


def report(inv):
    return f"{inv.total()} items"
"""

FIXED_TOTAL = INVENTORY.replace(
    "        return sum(self.items.values())", "        return sum(c for c in self.items.values() if c > 0)"
)
ASK_TOTAL = "Make `total` ignore negative counts."


def _flagged(edited: str, instruction: str, original: str = INVENTORY):
    report = measure(original, edited)
    verdicts = judge_units(report, instruction, original=original, edited=edited)
    return [(h, v) for h, v in zip(report.hunks, verdicts, strict=True) if v.flagged]


def test_a_change_to_a_function_the_instruction_does_not_point_at_is_outside_target():
    edited = FIXED_TOTAL.replace('return f"{inv.total()} items"', 'return f"Total: {inv.total()}"')
    [(hunk, verdict)] = _flagged(edited, ASK_TOTAL)
    assert verdict.unrequested == ("outside_target",)
    assert "`report`" in verdict.reason and "`total`" in verdict.reason
    assert hunk.new_start_line == edited.splitlines().index('    return f"Total: {inv.total()}"') + 1
    # the fix alone is not flagged
    assert not _flagged(FIXED_TOTAL, ASK_TOTAL)


def test_no_named_target_or_a_target_left_alone_says_nothing():
    edited = FIXED_TOTAL.replace('return f"{inv.total()} items"', 'return f"Total: {inv.total()}"')
    # the instruction names no function: the words cannot say where the change belongs
    assert not _flagged(edited, "Negative counts should not lower the total.")
    # it names `report` (changed) and `total`: both are the target
    assert not _flagged(edited, "Make `total` ignore negative counts and reword `report`.")
    # the named function stays as it is: the fix lives in code it uses
    only_report = INVENTORY.replace('return f"{inv.total()} items"', 'return f"Total: {inv.total()}"')
    assert not _flagged(only_report, ASK_TOTAL)
    # a rewrite may change any function
    assert not _flagged(edited, "Rewrite `total` and the module around it.")


def test_state_the_target_reads_is_a_consequence():
    # `add` keeps a count that the changed `total` now reads
    edited = INVENTORY.replace(
        "        self.items = {}\n", "        self.items = {}\n        self.negative = 0\n"
    ).replace(
        "        self.items[name] = self.items.get(name, 0) + count\n",
        "        self.items[name] = self.items.get(name, 0) + count\n"
        "        if count < 0:\n            self.negative += 1\n",
    )
    edited = edited.replace(
        "        return sum(self.items.values())", "        return sum(self.items.values()) - self.negative"
    )
    assert not _flagged(edited, ASK_TOTAL)


def test_a_callee_whose_result_or_signature_the_target_needs_is_a_consequence():
    original = "def clean(text):\n    return text.strip()\n\n\ndef words(text):\n    return clean(text).split()\n"
    edited = (
        "def clean(text):\n    return text.strip().lower()\n\n\ndef words(text):\n    return clean(text).split(' ')\n"
    )
    assert not _flagged(edited, "Make `words` split on single spaces, case-insensitively.", original)
    # an early return added inside the callee leaves its result alone: not excused
    early = edited.replace(
        "    return text.strip().lower()\n",
        "    if text.startswith('#'):\n        return clean(text[1:])\n    return text.strip()\n",
    )
    [(_, verdict)] = _flagged(early, "Make `words` split on single spaces.", original)
    assert verdict.unrequested == ("outside_target",) and "`clean`" in verdict.reason
    # the same callee changed without a new result is not excused
    original2 = "def log(x):\n    pass\n\n\ndef words(text):\n    log(text)\n    return text.split()\n"
    edited2 = "def log(x):\n    print(x)\n\n\ndef words(text):\n    log(text)\n    return text.split(' ')\n"
    [(_, verdict)] = _flagged(edited2, "Make `words` split on single spaces.", original2)
    assert verdict.unrequested in (("outside_target",), ("added_code",))


def test_wiring_in_a_new_definition_or_setting_a_named_name_is_requested():
    # `load` calls the helper the edit adds for the named `total`
    edited = FIXED_TOTAL.replace("        inv.add(name, count)\n", "        inv.add(name, positive(count))\n")
    edited += "\n\ndef positive(count):\n    return max(count, 0)\n"
    flagged = [v for _, v in _flagged(edited, ASK_TOTAL)]
    assert not any(v.unrequested == ("outside_target",) for v in flagged)
    # a renamed or removed function is left to the other rules
    renamed = FIXED_TOTAL.replace("def report(inv):", "def summary(inv):")
    assert not any(v.unrequested == ("outside_target",) for _, v in _flagged(renamed, ASK_TOTAL))


MUTATE = """import random


def mutate(route, rate):
    if random.random() < rate:
        i = random.randint(0, len(route) - 1)
        j = random.randint(0, len(route) - 1)
        route[i], route[j] = route[j], route[i]
    return route
"""


def _statements(original: str, edited: str, instruction: str):
    report = measure(original, edited)
    scope, _, verdicts = judged_units(report, instruction, original=original, edited=edited)
    return judge_statements(report, scope, verdicts, original=original, edited=edited)


def test_a_new_block_repeating_a_kept_one_is_flagged():
    repeat = (
        "    if random.random() < rate:\n"
        "        i = random.randint(0, len(route) - 1)\n"
        "        j = random.randint(0, len(route) - 1)\n"
        "        while i == j:\n"
        "            j = random.randint(0, len(route) - 1)\n"
        "        route[i], route[j] = route[j], route[i]\n"
    )
    edited = MUTATE.replace("    return route\n", repeat + "    return route\n")
    [flag] = _statements(MUTATE, edited, "Make `mutate` never swap a city with itself.")
    assert flag.kinds == ("added_code",) and "line 5" in flag.reason
    assert flag.start_line == 9 and flag.end_line == 14


def test_a_block_that_replaces_the_old_one_or_shares_only_its_head_is_not_a_repeat():
    fixed = MUTATE.replace(
        "        route[i], route[j] = route[j], route[i]\n",
        "        while i == j:\n            j = random.randint(0, len(route) - 1)\n"
        "        route[i], route[j] = route[j], route[i]\n",
    )
    assert not _statements(MUTATE, fixed, "Make `mutate` never swap a city with itself.")
    other = MUTATE.replace(
        "    return route\n", "    if random.random() < rate:\n        route.reverse()\n    return route\n"
    )
    assert not _statements(MUTATE, other, "Make `mutate` sometimes reverse the route.")
    # a fixed copy appended after the original (a redefinition) repeats nothing of its own function
    appended = MUTATE + "\n\n" + fixed.split("\n\n\n", 1)[1]
    assert not _statements(MUTATE, appended, "Make `mutate` never swap a city with itself.")


LEDGER = """class Ledger:
    def __init__(self):
        self.entries = {}

    def record(self, name, amount):
        self.entries[name] = amount
"""


def test_a_new_method_that_returns_the_state_it_updates_is_flagged_unless_a_result_is_asked():
    method = (
        "\n    def record_many(self, pairs):\n"
        "        for name, amount in pairs:\n"
        "            self.entries[name] = amount\n"
        "        return self.entries\n"
    )
    edited = LEDGER + method
    [flag] = _statements(LEDGER, edited, "Add a method `record_many` that records every (name, amount) pair.")
    assert flag.kinds == ("added_code",) and "`self.entries`" in flag.reason
    assert flag.start_line == flag.end_line == len(edited.splitlines())
    # a result the instruction speaks of, or a return of something the method does not update, is not flagged
    assert not _statements(LEDGER, edited, "Add `record_many`, which records every pair and returns the entries.")
    other = edited.replace("        return self.entries\n", "        return len(pairs)\n")
    assert not _statements(LEDGER, other, "Add a method `record_many` that records every (name, amount) pair.")


STACK = """class Stack:
    def __init__(self, size):
        self.items = []
        self.size = size
        self.frozen = False

    def push(self, item):
        if len(self.items) > self.size:
            self.items.pop(0)
        elif self.frozen:
            return
        self.items.append(item)
"""


def test_an_elif_made_else_drops_a_test_the_instruction_does_not_speak_of():
    fixed = STACK.replace("len(self.items) > self.size", "len(self.items) >= self.size")
    edited = fixed.replace("        elif self.frozen:\n", "        else:\n")
    flagged = _flagged(edited, "Fix `push`: it overflows by one item when the stack is at its size.", STACK)
    [(hunk, verdict)] = flagged
    assert verdict.unrequested == ("deletion",) and "`self.frozen`" in verdict.reason
    assert hunk.new_start_line == hunk.new_end_line == 10
    # the fix alone; an instruction that speaks of what the test reads; a simplification asked for
    assert not _flagged(fixed, "Fix `push`: it overflows by one item when the stack is at its size.", STACK)
    assert not _flagged(edited, "Fix `push`: it overflows by one, and a frozen stack must take items.", STACK)
    assert not _flagged(edited, "Simplify `push` and fix its off-by-one overflow.", STACK)


AVERAGE = """def average(values):
    return int(sum(values) / len(values) + 1)


def scaled(values, k):
    total = float(sum(values))
    return total * k
"""


def test_dropping_a_conversion_on_the_fixed_line_is_flagged_on_its_statement():
    edited = AVERAGE.replace("int(sum(values) / len(values) + 1)", "sum(values) / len(values)")
    [flag] = _statements(AVERAGE, edited, "Fix `average`: it adds one to the mean.")
    assert flag.kinds == ("logic",) and "`int(...)`" in flag.reason and flag.start_line == flag.end_line == 2
    # kept, asked for by its word, or another expression altogether: no flag
    kept = AVERAGE.replace("int(sum(values) / len(values) + 1)", "int(sum(values) / len(values))")
    assert not _statements(AVERAGE, kept, "Fix `average`: it adds one to the mean.")
    assert not _statements(AVERAGE, edited, "Fix `average`: it adds one to the mean and should not be an integer.")
    other = AVERAGE.replace("    total = float(sum(values))\n", "    total = max(values)\n")
    assert not _statements(AVERAGE, other, "Make `scaled` scale the largest value.")


SHAPES = """class Shapes:
    def draw(self, shape):
        if shape == "square":
            self.draw_square()
        self.count = 1

    def draw_square(self):
        return "[]"
"""


def test_a_call_switched_to_the_name_of_an_unrequested_rename_follows_it():
    edited = SHAPES.replace("self.draw_square()", "self.render_box()").replace(
        "    def draw_square(self):", "    def render_box(self):"
    )
    edited = edited.replace("        self.count = 1\n", "        self.count = 2\n")
    flagged = {h.new_start_line: v for h, v in _flagged(edited, "Make `draw` count two shapes.", SHAPES)}
    assert set(flagged) == {4, 7}  # the call site and the rename itself; the requested count is not flagged
    assert flagged[4].unrequested == ("rename",) and "`render_box`, the name of a rename" in flagged[4].reason
    # a rename the instruction asks for: its call sites are requested too
    assert not any(
        "rename" in v.unrequested
        for _, v in _flagged(edited, "Rename `draw_square` to `render_box`; `draw` counts two.", SHAPES)
    )
