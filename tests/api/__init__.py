"""The HTTP API and the local stack: routes, limits, isolation, the cascade."""
