"""Tooling: the template, the bundle, the wheel, the benchmarks and the reliability tools."""
