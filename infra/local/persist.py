"""The local stack's data kept in a directory across restarts (`make run ARGS="--data DIR"`): every item
of every table and every object of the bucket, written when the stack stops (and every `interval`
seconds while it runs), read back into the fresh moto when it starts. The development token's secret is
kept there too, so tokens printed before a restart still work.

The directory holds `tables/<VARIABLE>.json` (SESSIONS_TABLE.json, ...: items in DynamoDB's JSON, binary
values base64), `objects/` (each object's bytes, with `objects.json` naming their keys, types and
metadata) and `secret`. A save writes a new directory beside the old one and renames it over, so a
save cut short leaves the last one."""

from __future__ import annotations

import base64
import json
import os
import shutil
from pathlib import Path
from typing import Any

SECRET = "secret"


def as_json(av: dict[str, Any]) -> dict[str, Any]:
    """A DynamoDB attribute value with its binary values base64-encoded (as Lambda's stream events and
    this module's files carry them)."""
    ((kind, value),) = av.items()
    if kind == "B":
        return {"B": base64.b64encode(bytes(value)).decode()}
    if kind == "BS":
        return {"BS": [base64.b64encode(bytes(v)).decode() for v in value]}
    if kind == "M":
        return {"M": {k: as_json(v) for k, v in value.items()}}
    if kind == "L":
        return {"L": [as_json(v) for v in value]}
    return {kind: value}


def _decode(av: dict[str, Any]) -> dict[str, Any]:
    ((kind, value),) = av.items()
    if kind == "B":
        return {"B": base64.b64decode(value)}
    if kind == "BS":
        return {"BS": [base64.b64decode(v) for v in value]}
    if kind == "M":
        return {"M": {k: _decode(v) for k, v in value.items()}}
    if kind == "L":
        return {"L": [_decode(v) for v in value]}
    return {kind: value}


def secret(directory: Path) -> bytes | None:
    """The kept development-token secret, or None on a first start."""
    path = directory / SECRET
    return path.read_bytes() if path.exists() else None


def save(
    directory: Path, dynamodb: Any, s3: Any, tables: dict[str, str], bucket: str | None, key: bytes
) -> dict[str, int]:
    """Write everything to `directory` (replacing what was there); returns the counts written. `tables`:
    each table's name by the variable that names it (SESSIONS_TABLE, ...), which names its file."""
    fresh = directory.with_name(directory.name + ".saving")
    shutil.rmtree(fresh, ignore_errors=True)
    (fresh / "tables").mkdir(parents=True)
    (fresh / "objects").mkdir()
    counts = {"items": 0, "objects": 0}
    for env, table in tables.items():
        items = []
        for page in dynamodb.get_paginator("scan").paginate(TableName=table):
            items += [{k: as_json(v) for k, v in item.items()} for item in page["Items"]]
        (fresh / "tables" / f"{env}.json").write_text(json.dumps(items))
        counts["items"] += len(items)
    manifest: list[dict[str, Any]] = []
    if bucket is not None:
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
            for entry in page.get("Contents", []):
                got = s3.get_object(Bucket=bucket, Key=entry["Key"])
                name = f"{len(manifest):08d}"
                (fresh / "objects" / name).write_bytes(got["Body"].read())
                manifest.append(
                    {
                        "key": entry["Key"],
                        "file": name,
                        "content_type": got.get("ContentType", "binary/octet-stream"),
                        "metadata": got.get("Metadata", {}),
                    }
                )
    (fresh / "objects.json").write_text(json.dumps(manifest))
    counts["objects"] = len(manifest)
    (fresh / SECRET).write_bytes(key)
    os.chmod(fresh / SECRET, 0o600)
    old = directory.with_name(directory.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if directory.exists():
        directory.rename(old)
    fresh.rename(directory)
    shutil.rmtree(old, ignore_errors=True)
    return counts


def load(directory: Path, dynamodb: Any, s3: Any, tables: dict[str, str], bucket: str | None) -> dict[str, int]:
    """Put back what `save` wrote (nothing on a first start); returns the counts read."""
    counts = {"items": 0, "objects": 0}
    for env, table in tables.items():
        path = directory / "tables" / f"{env}.json"
        if not path.exists():
            continue
        items = json.loads(path.read_text())
        for start in range(0, len(items), 25):
            chunk = items[start : start + 25]
            pending = {table: [{"PutRequest": {"Item": {k: _decode(v) for k, v in i.items()}}} for i in chunk]}
            while pending:
                pending = dynamodb.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
        counts["items"] += len(items)
    manifest_path = directory / "objects.json"
    if bucket is not None and manifest_path.exists():
        for entry in json.loads(manifest_path.read_text()):
            s3.put_object(
                Bucket=bucket,
                Key=entry["key"],
                Body=(directory / "objects" / entry["file"]).read_bytes(),
                ContentType=entry["content_type"],
                Metadata=entry["metadata"],
            )
            counts["objects"] += 1
    return counts
