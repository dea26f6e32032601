"""``mas rerun``: re-execute a recorded run offline, compare it with the original, or re-score it from its events."""
