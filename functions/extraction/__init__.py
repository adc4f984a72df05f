"""The extraction function: memory that writes itself, fed by the sessions table's stream."""
