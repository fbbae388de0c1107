"""The sans-I/O core: which document a request names, what must be read for it, and the
answer (status, validators, headers), without I/O."""
