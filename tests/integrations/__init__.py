"""The framework adapters, run with the real frameworks."""
