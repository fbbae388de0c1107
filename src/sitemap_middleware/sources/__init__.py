"""Sources: the one extension point for data."""
