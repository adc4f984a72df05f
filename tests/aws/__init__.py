"""The AWS backend: its requests, failures, concurrency and retries on moto."""
