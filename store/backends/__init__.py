"""Backends besides the two storage backends (`store.memory`, `store.aws`): the store over the HTTP API
(`http`, with its transport and the API's error table) and an owner's namespace over any sync backend
(`scoped`)."""
