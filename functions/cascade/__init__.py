"""The sessions table's stream consumer: purges removed sessions and reclaims released S3 objects."""
