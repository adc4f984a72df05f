"""The public front, by domain: each module holds the operations of one domain, composed into
`SessionStore` (and, wrapped, `AsyncSessionStore`)."""
