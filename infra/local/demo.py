"""`make demo`: a short agent conversation against an embedded AWS (moto), with the tables created from
template.yaml. An invocation is cut off mid-loop, as a Lambda timeout would, and a fresh store resumes it.
It prints what was stored and how many AWS requests each step took."""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from typing import Any

from moto import mock_aws

from infra.local.aws import create_tables, local_client
from store import Checkpointer, SessionStore
from store.session_store import s3_config


class RequestLog:
    """Counts AWS requests by API name."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def __call__(self, model: Any, **_: Any) -> None:
        self.counts[model.name] += 1

    def take(self) -> str:
        text = ", ".join(f"{n} {name}" for name, n in sorted(self.counts.items())) or "none"
        self.counts.clear()
        return text


def step(log: RequestLog, label: str) -> None:
    print(f"  {label:<58} requests: {log.take()}")


def run() -> None:
    for name, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing")):
        os.environ.setdefault(name, value)
    with mock_aws():
        client = local_client()
        s3 = local_client("s3", config=s3_config())
        tables = create_tables(client, prefix="demo", s3=s3)
        print(
            f"Embedded AWS (moto): tables {tables.sessions}, {tables.messages} and bucket {tables.bucket} "
            "created from template.yaml\n"
        )
        log = RequestLog()
        client.meta.events.register("before-call.dynamodb.*", log)
        s3.meta.events.register("before-call.s3.*", log)

        def open_store() -> SessionStore:
            return SessionStore(tables.sessions, tables.messages, bucket=tables.bucket, client=client, s3_client=s3)

        print("Invocation 1 (the agent starts, then times out mid-loop):")
        store = open_store()
        session = store.create_session(
            "user-42",
            title="Weather in Paris",
            model="claude-sonnet",
            metadata={"channel": "web"},
            retention=7 * 24 * 3600,
        )
        step(log, f"create_session -> {session.id[:8]}…")
        store.append_messages(session.id, [{"role": "user", "content": "What's the weather in Paris?"}])
        step(log, "append user message (position known: 1 request)")
        store.append_messages(
            session.id,
            [
                {
                    "role": "assistant",
                    "content": [
                        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
                    ],
                    "usage": {"input_tokens": 412, "output_tokens": 38, "cost": 0.0018},
                }
            ],
        )
        step(log, "append assistant tool call (with token usage)")
        Checkpointer(store).save("run", f"{session.id}.loop", {"step": 2, "pending_tool": "toolu_1"}, ttl=900)
        step(log, "checkpoint the agent loop (TTL 15 min)")
        store.save_state(session.id, {"phase": "calling_tool", "tool": "get_weather"})
        step(log, "save state")
        print("  -- the Lambda times out here; nothing in memory survives --\n")

        print("Invocation 2 (a cold start resumes the same session):")
        store = open_store()
        checkpoint = store.load_checkpoint("run", f"{session.id}.loop")
        step(log, f"load checkpoint -> step {checkpoint.data['step'] if checkpoint else None}")
        full = store.load_full(session.id)
        step(log, f"load_full -> {len(full.messages)} messages, state v{full.state.version if full.state else 0}")
        snapshot = store.save_full(
            session.id,
            [
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "18°C, clear"}],
                },
                {
                    "role": "assistant",
                    "content": "It is 18°C and clear in Paris.",
                    "usage": {"input_tokens": 470, "output_tokens": 12, "cost": 0.0016},
                },
            ],
            {"phase": "done"},
            expected_seq=full.session.last_seq,
        )
        step(log, f"save_full (2 messages + state, one transaction) -> seq {snapshot.seq}")
        page = "".join(hashlib.sha256(str(i).encode()).hexdigest() for i in range(16_000))  # 500 KB+ zipped
        store.append_messages(session.id, [{"role": "tool", "tool_call_id": "toolu_2", "content": page}])
        step(log, f"append a {len(page) // 1024} KB tool result (too big for an item: spilled to S3)")
        report = store.put_artifact(
            session.id, "reports/paris.md", b"# Paris\n18 C, clear.\n", content_type="text/markdown"
        )
        step(log, f"put_artifact reports/paris.md -> version {report.version}")
        store.append_trace_events(
            session.id, "run-1", [{"type": "llm_call", "ms": 812}, {"type": "tool_call", "name": "get_weather"}]
        )
        step(log, "append_trace_events (one gzip JSON-lines object)")
        store.delete_checkpoint("run", f"{session.id}.loop")
        step(log, "delete the loop checkpoint")
        last = store.last_messages(session.id, 2)
        step(log, "last_messages(2)")
        hits = store.search("user-42", "paris")
        step(log, f"search('paris') -> {len(hits)} hits")

        print("\nWhat is stored:")
        s = store.get_session(session.id)
        assert s is not None
        print(
            f"  session {s.id} owner={s.owner} title={s.title!r} last_seq={s.last_seq} state_version={s.state_version}"
        )
        print(f"  usage totals: {s.usage.model_dump(exclude_none=True)}; expires_at={s.expires_at:%Y-%m-%d %H:%M} UTC")
        for m in store.list_messages(session.id).items:
            text = (m.content if isinstance(m.content, str) else str(m.content))[:70]
            print(f"  #{m.seq} {m.role:<9} {text}")
        print(f"  artifacts: {[(a.name, a.version, a.size) for a in store.list_artifacts(session.id)]}")
        print(f"  trace events: {len(store.load_trace_events(session.id))} in runs {store.list_trace_runs(session.id)}")
        print(f"  state: {store.load_state(session.id).state}")  # type: ignore[union-attr]
        print(f"  latest message: {str(last[-1].content)[:40]!r}... ({len(str(last[-1].content))} characters)")
        items = {t: client.scan(TableName=t)["Count"] for t in (tables.sessions, tables.messages)}
        print(f"  items: {items} (scanned here for display only; the store never scans)")
        print(f"  objects in the bucket: {s3.list_objects_v2(Bucket=tables.bucket).get('KeyCount', 0)}")
        log.take()
        print()
        store.delete_session(session.id)
        step(log, "delete_session (cascades over everything)")
        items = {t: client.scan(TableName=t)["Count"] for t in (tables.sessions, tables.messages)}
        print(f"  items after delete: {items}")
        print(f"  objects after delete: {s3.list_objects_v2(Bucket=tables.bucket).get('KeyCount', 0)}")


def main() -> None:
    run()


if __name__ == "__main__":
    main()
