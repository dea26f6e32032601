"""magic."""
