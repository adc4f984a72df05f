"""Shared pure code: what every layer may use and none of it does I/O (the codec, ids and their scoping,
cursors and pages, windows, search scoring, the write rules, time, limits and checks of input)."""
