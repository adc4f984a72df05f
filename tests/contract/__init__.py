"""The contract: the same tests on every backend (memory, DynamoDB, async DynamoDB)."""
