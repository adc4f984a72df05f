"""The local stack: moto with the tables and bucket of template.yaml, the HTTP API served by the
same handlers as in Lambda, development tokens, and the demo."""
