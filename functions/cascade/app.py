"""The tables' stream consumers. The cascade (`lambda_handler`): for each record it lets the
library purge what remains of a session whose head was removed (TTL expiry, or the end of an explicit
delete: a backstop that also catches uploads that landed late), finish handed-on deletes of sessions and
branches, delete the S3 objects the record releases (uploads whose intent expired uncommitted, items
removed or replaced), and, fed the memories table's forget markers, carry an owner's forget on. The copy
function (`copy_handler`, its own event source mapping, batch size 1): carries long forks' and rewinds'
copies on. The cascade also keeps the message index (`SessionStore.index_messages`): a session head whose
`last_seq` moved has its new messages indexed, off the turn's path. Failed records are reported one by one
(`ReportBatchItemFailures`); Lambda retries from the first of them, a bounded number of times, and then
sends the batch's description to the SQS failure destination."""

from __future__ import annotations

import functools
import os
import time
import warnings
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.runtime import TRACED_MODULES, store
from store import deadline
from store.core.rules import CASCADE_JOBS, COPY_JOBS
from store.errors import SessionNotFound
from store.extraction.triggers import head_moves

logger = Logger(service=os.environ.get("POWERTOOLS_SERVICE_NAME", "agent-session-store-cascade"))
tracer = Tracer(patch_modules=TRACED_MODULES)
warnings.filterwarnings("ignore", message="No application metrics to publish")
metrics = Metrics(namespace=os.environ.get("POWERTOOLS_METRICS_NAMESPACE", "AgentSessionStore"))
processor = BatchProcessor(event_type=EventType.DynamoDBStreams)


SAFETY_SECONDS = 5.0  # left at the end of an invocation: the batch's answer, metrics and logs
HAND_ON_SECONDS = 0.5  # what a record needs at least: to hand its work on to the next invocation (a write or two)


class Batch:
    """The time an invocation has, shared out between its records: each record may work until the end, less
    what the records after it need to hand their work on; a purge, a copy or a branch's delete that runs out
    of its share hands the rest on (a change on the stream that a later invocation picks up), so every
    invocation ends within its timeout whatever its batch holds, and nothing is left undone."""

    def __init__(self) -> None:
        self.end = float("inf")
        self.left = 0

    def start(self, seconds: float, records: int) -> None:
        self.end, self.left = time.monotonic() + seconds, records

    def share(self) -> float:
        """The seconds the next record may use (at least enough to hand its work on)."""
        self.left = max(0, self.left - 1)
        return max(HAND_ON_SECONDS, self.end - time.monotonic() - self.left * HAND_ON_SECONDS)


batch = Batch()


# nothing of a record, nor of an error about one, is put in a trace: records carry the sessions' data
@tracer.capture_method(capture_response=False, capture_error=False)
def handle_record(record: DynamoDBRecord, jobs: frozenset[str] = CASCADE_JOBS) -> None:
    """Apply one stream record's `jobs` within its share of the invocation's time (idempotent: a retried
    record does nothing twice); what does not fit is handed on as a new stream record."""
    with deadline(batch.share()):
        released = store().reclaim([record.raw_event], jobs=jobs)
        if jobs is CASCADE_JOBS:
            _index(record.raw_event)
    if released:
        metrics.add_metric(name="ObjectsReclaimed", unit=MetricUnit.Count, value=released)


def _index(record: dict[str, Any]) -> None:
    """Index the new messages of a session whose head this record shows moving (a session gone since: nothing
    to do). Logs name the session and the count, never content."""
    if not os.environ.get("MEMORIES_TABLE"):  # a stack without long-term memory keeps no index
        return
    for move in head_moves([record], backward=True):
        try:
            state = store().index_messages(move.session_id)
        except SessionNotFound:
            continue
        metrics.add_metric(name="MessageIndexRuns", unit=MetricUnit.Count, value=1)
        logger.debug("messages indexed", extra={"session_id": move.session_id, "indexed_seq": state.indexed_seq})


def _process(event: dict[str, Any], context: LambdaContext, jobs: frozenset[str]) -> dict[str, Any]:
    """One invocation of a stream function: its batch's records, each with `jobs`, failures reported one by one."""
    records = event.get("Records") or []
    batch.start(context.get_remaining_time_in_millis() / 1000 - SAFETY_SECONDS, len(records))
    handler = functools.partial(handle_record, jobs=jobs)
    return dict(process_partial_response(event=event, record_handler=handler, processor=processor, context=context))


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False, capture_error=False)
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """The cascade: purges, handed-on deletes of sessions and branches, released objects."""
    return _process(event, context, CASCADE_JOBS)


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False, capture_error=False)
@metrics.log_metrics
def copy_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """The copy function: its own event source mapping on the sessions table's stream (batch size 1, only
    heads that hold a copy), so a long copy never holds up the cascade's purges and releases."""
    return _process(event, context, COPY_JOBS)
