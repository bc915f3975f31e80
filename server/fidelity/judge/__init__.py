"""The fourth stage: whether each unit was asked for, by the instruction (and, where there are tests, by the
tests), and how loud a flagged unit is.
"""
