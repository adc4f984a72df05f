"""Lambda handlers: thin adapters from API Gateway and DynamoDB stream events to the library (`store`)."""
