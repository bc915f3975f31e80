"""The third stage: how far two texts are apart (token distances, localised where a side does not parse)."""
