"""The local stack's data kept in a directory across restarts (`make run ARGS="--data DIR"`): every item
of every table and every object of the bucket, written when the stack stops (and every `interval`
seconds while it runs), read back into the fresh moto when it starts. The development token's secret is
kept there too, so tokens printed before a restart still work.

The directory holds `tables/<VARIABLE>.json` (SESSIONS_TABLE.json, ...: items in DynamoDB's JSON, binary
values base64), `objects/` (each object's bytes, with `objects.json` naming their keys, types and
metadata) and `secret`. A save writes a new directory beside the old one and renames it over, so a
save cut short leaves the last one.

What is kept is every owner's data and the key that signs their tokens, so the directory is private from
the start (0700, files 0600, whatever the umask), nothing is written or read through a symbolic link (one
planted at `DIR.saving` or inside the directory is refused, not followed), and the files a manifest names
are this module's own names inside `objects/` (a `"file": "../../x"` is refused)."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import stat
from pathlib import Path
from typing import Any

from store.core import codec

SECRET = "secret"
OBJECT_FILE = re.compile(r"[0-9]{8}")  # the names `save` gives objects' files


class DataDirError(Exception):
    """The data directory cannot be used safely (a symbolic link where a file or directory is written or
    read, a manifest naming a file outside it, a file that is not this module's)."""


def _no_link(path: Path) -> None:
    """DataDirError when `path` is a symbolic link (it would be followed)."""
    if path.is_symlink():
        raise DataDirError(f"{path} is a symbolic link: the local stack does not write or read through one")


def _private_dir(path: Path) -> None:
    """Create `path` (not there before) as a directory only its owner can enter."""
    _no_link(path)
    os.mkdir(path, 0o700)
    os.chmod(path, 0o700)  # whatever the umask took away, nothing more is granted


def _write(path: Path, data: bytes) -> None:
    """A new file of `data`, readable by its owner only from the moment it exists, never through a link."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)


def _read(path: Path) -> bytes:
    """A regular file's bytes, never through a link."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as exc:
        raise DataDirError(f"{path} cannot be read as the stack's own file: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as source:
        if not stat.S_ISREG(os.fstat(source.fileno()).st_mode):
            raise DataDirError(f"{path} is not a regular file")
        return source.read()


def _remove(path: Path) -> None:
    """Remove what a save left at `path` (a directory, or a planted link itself, never what it points at)."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)


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
    return _read(path) if path.exists() or path.is_symlink() else None


def save(
    directory: Path, dynamodb: Any, s3: Any, tables: dict[str, str], bucket: str | None, key: bytes
) -> dict[str, int]:
    """Write everything to `directory` (replacing what was there); returns the counts written. `tables`:
    each table's name by the variable that names it (SESSIONS_TABLE, ...), which names its file."""
    fresh = directory.with_name(directory.name + ".saving")
    _no_link(fresh)
    _remove(fresh)
    _private_dir(fresh)
    _private_dir(fresh / "tables")
    _private_dir(fresh / "objects")
    counts = {"items": 0, "objects": 0}
    for env, table in tables.items():
        items = []
        for page in dynamodb.get_paginator("scan").paginate(TableName=table):
            items += [{k: as_json(v) for k, v in item.items()} for item in page["Items"]]
        _write(fresh / "tables" / f"{env}.json", json.dumps(items).encode())
        counts["items"] += len(items)
    manifest: list[dict[str, Any]] = []
    if bucket is not None:
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
            for entry in page.get("Contents", []):
                got = s3.get_object(Bucket=bucket, Key=entry["Key"])
                name = f"{len(manifest):08d}"
                _write(fresh / "objects" / name, got["Body"].read())
                manifest.append(
                    {
                        "key": entry["Key"],
                        "file": name,
                        "content_type": got.get("ContentType", "binary/octet-stream"),
                        "metadata": got.get("Metadata", {}),
                    }
                )
    _write(fresh / "objects.json", json.dumps(manifest).encode())
    counts["objects"] = len(manifest)
    _write(fresh / SECRET, key)
    old = directory.with_name(directory.name + ".old")
    _no_link(old)
    _remove(old)
    if directory.exists():
        directory.rename(old)
    fresh.rename(directory)
    _remove(old)
    return counts


def load(directory: Path, dynamodb: Any, s3: Any, tables: dict[str, str], bucket: str | None) -> dict[str, int]:
    """Put back what `save` wrote (nothing on a first start); returns the counts read."""
    counts = {"items": 0, "objects": 0}
    for env, table in tables.items():
        path = directory / "tables" / f"{env}.json"
        if not path.exists():
            continue
        items = codec.parse(_read(path), str(path), max_depth=codec.MAX_DEPTH + 8)
        for start in range(0, len(items), 25):
            chunk = items[start : start + 25]
            pending = {table: [{"PutRequest": {"Item": {k: _decode(v) for k, v in i.items()}}} for i in chunk]}
            while pending:
                pending = dynamodb.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
        counts["items"] += len(items)
    manifest_path = directory / "objects.json"
    if bucket is not None and manifest_path.exists():
        for entry in codec.parse(_read(manifest_path), str(manifest_path), max_depth=4):
            name = entry.get("file") if isinstance(entry, dict) else None
            if not isinstance(name, str) or not OBJECT_FILE.fullmatch(name):
                raise DataDirError(f"{manifest_path} names a file that is not one of the stack's own: {name!r}")
            s3.put_object(
                Bucket=bucket,
                Key=entry["key"],
                Body=_read(directory / "objects" / name),
                ContentType=entry["content_type"],
                Metadata=entry["metadata"],
            )
            counts["objects"] += 1
    return counts
