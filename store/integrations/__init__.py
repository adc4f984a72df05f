"""Adapters that make this store the persistence of agent frameworks. Each module imports its framework
only when used and installs through an extra: `agent-session-store[strands]` (strands.py),
`[openai-agents]` (openai_agents.py), `[adk]` (adk.py). Importing `store` never imports a framework."""
