"""Recall: a session's messages found by meaning and by words (the message index, written off the turn's path),
and the context a model should see for its next turn (`SessionStore.context`): the recent messages that fit,
a running summary of what lies before them, and the older messages and memories that matter to the question,
under a token budget. Written once as flows of the store's operations, driven by both fronts."""
