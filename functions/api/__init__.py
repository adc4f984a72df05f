"""The HTTP API (API Gateway HTTP API + Lambda, Powertools event handler)."""
