"""The embedded example: a one-token bug, the minimal fix, and a typical over-edit of it."""

ORIGINAL = '''\
import statistics


def summarize(scores, cutoff=50):
    """Return the mean of the passing scores and how many passed."""
    # keep only the scores at or above the cutoff
    passing = [s for s in scores if s > cutoff]
    return statistics.mean(passing), len(passing)
'''

GOLD = ORIGINAL.replace("if s > cutoff", "if s >= cutoff")

OVER_EDITED = '''\
import statistics


def summarize(values, cutoff=50):
    """Return the mean of the passing scores and how many passed."""
    if not isinstance(values, list):
        raise TypeError("values must be a list")
    passing_values = [value for value in values if value >= cutoff]
    return statistics.mean(passing_values), len(passing_values)
'''

INSTRUCTION = "Fix the bug: a score equal to the cutoff should pass."
