"""The AWS backend: every DynamoDB and S3 operation written once as a plan (`plans/`), run by the sync
driver (boto3, `driver.py`) or the async one (aiobotocore, `async_driver.py`); `DynamoBackend` hands the
plans to its driver. Keys, item shapes and error mapping live beside them."""
