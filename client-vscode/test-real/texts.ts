// The workspace's Python file (every test has its own copy) and what happens to it.

export const SAMPLE = `import math


def mean_above(values, limit):
    """Mean of the values above limit."""
    total = 0
    count = 0
    for v in values:
        # only the large ones
        if v < limit:
            total += v
            count += 1
    return total / count if count else 0.0


def scaled(items, factor):
    # multiply each item
    out = []
    for i in items:
        out.append(i * factor)
    return out
`;

/** The requested change alone: what "revert unrequested" leaves of REWRITTEN. */
export const FIXED = SAMPLE.replace("if v < limit:", "if v > limit:");

/**
 * Another assistant's whole-file rewrite: the fix, and besides it input validation, renames and two
 * comments dropped (13 lines differ: over the default largeChangeLines of 10).
 */
export const REWRITTEN = `import math


def mean_above(values, limit):
    """Mean of the values above limit."""
    if values is None:
        raise ValueError("values must not be None")
    acc = 0
    n = 0
    for value in values:
        if value > limit:
            acc += value
            n += 1
    return acc / n if n else 0.0


def scaled(items, factor):
    result = []
    for item in items:
        result.append(item * factor)
    return result
`;

/** One file per test, so that no test sees another's proposals or observations. */
export const FILES = ["sample.py", "accept.py", "accept_all.py", "observe.py", "checkout.py", "switch.py", "compare.py", "crash.py"] as const;

/** The git branch on which checkout.py holds REWRITTEN. */
export const ASSISTANT_BRANCH = "assistant";

/** mean_above's lines (0-based, the end exclusive): the selection the edit requests are for. */
export const FUNCTION_LINES = { start: 3, end: 13 } as const;

export const INSTRUCTION = "fix the comparison bug";
