"""Reliability tools: fault injection, crash testing, the invariant checker and reclaim."""
