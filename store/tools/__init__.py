"""Operator tools, built on the public store alone (they work on every backend): the `agent-store` CLI,
JSON-lines export and import, the trace waterfall, and OpenTelemetry's OTLP mapping."""
