"""Plans for versioned artifacts: bytes in S3, the index in the session's partition.

Items (sessions table, the session's partition; `<d>` is the digest of the artifact's name):
- `ART#<d>`: the name's index: `latest` version, `deleted_through` (versions up to it were deleted),
  `live`, and the latest version's fields (so listing and reading the latest take one read);
- `ARTV#<d>#<version>`: one version: its object key (`object`), size, sha256, content type, metadata.

A version number is allocated when the upload commits: one transaction moves the index from
`latest` = v-1 to v (a condition), puts the version item (which must not exist), touches the
session head and settles the upload's intent (removes it; a presigned upload's is marked committed and
kept until its URL has expired, see `confirm_artifact_upload`). Two writers cannot both move the index from the same
value, so they cannot get the same version; the loser re-reads the index and takes the next one.
Version numbers are never reused, even after `delete_artifact`."""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from store.artifact_reader import ArtifactReader
from store.aws import keys, object_keys
from store.aws.attrs import Expr, Item, boolean, get_int, get_n, get_s, n, need_s, s
from store.aws.calls import AwsError, Call, Plan
from store.aws.items import Head
from store.aws.plans.base import (
    Context,
    Position,
    again,
    batch_delete,
    batch_get,
    count_edit,
    find_head,
    get_item,
    live_head,
    partition_prefix,
    query,
    read_head,
    touch_head,
    unpinned,
)
from store.aws.plans.objects import (
    COMMITTED,
    OBJECTS,
    Intent,
    abandon,
    bucket,
    delete_objects,
    intent_key,
    load_intent,
    record_intent,
    s3,
    session_owner,
)
from store.aws.plans.transactions import Actions, IndexMoved, UploadSettled, VersionExists
from store.aws.plans.uploads import Stored, Uploaded, copy_object, digest_object, head_object, upload
from store.aws.plans.writes import write_session
from store.core import rules
from store.core.http_headers import attachment, sha256_base64, upload_headers
from store.core.timeutil import from_epoch, iso, parse_iso
from store.errors import ArtifactNotFound, Conflict, InvalidInput, PayloadTooLarge, StoreError
from store.models import ArtifactVersion, PresignedUpload
from store.requests import (
    ConfirmArtifactUpload,
    DeleteArtifact,
    GetArtifact,
    ListArtifacts,
    ListArtifactVersions,
    OpenArtifact,
    Presign,
    PresignArtifact,
    PresignArtifactUpload,
    PutArtifact,
)

OBJECT = "object"  # the attribute of a version item holding its S3 key (a pointer, for the reclaimer)
LATEST_KEY = "latest_key"
KIND_ARTIFACT = "artifact"


# ---------------------------------------------------------------- items


def _fields(name: str, version: int, up: Uploaded, content_type: str, metadata: dict[str, str], at: str) -> Item:
    return {
        "name": s(name),
        "version": n(version),
        "size": n(up.size),
        "sha256": s(up.sha256),
        "content_type": s(content_type),
        "metadata": s(json.dumps(metadata, sort_keys=True)),
        "created_at": s(at),
    }


def version_from_item(session_id: str, item: Item) -> ArtifactVersion:
    return ArtifactVersion(
        session_id=session_id,
        name=need_s(item, "name"),
        version=get_int(item, "version"),
        size=get_int(item, "size"),
        sha256=need_s(item, "sha256"),
        content_type=need_s(item, "content_type"),
        metadata=json.loads(get_s(item, "metadata") or "{}"),
        created_at=parse_iso(need_s(item, "created_at")),
    )


def index_live(item: Item | None) -> bool:
    return item is not None and bool(item.get("live", {}).get("BOOL")) and get_int(item, "latest") > 0


def visible(index: Item | None, version: int) -> bool:
    """True when `version` of the name is readable: the name is live and the version was not deleted."""
    return index_live(index) and get_int(index or {}, "deleted_through") < version <= get_int(index or {}, "latest")


# ---------------------------------------------------------------- reads


def read_index(
    ctx: Context, session_id: str, owner: str | None, name: str, version: int | None
) -> Plan[tuple[Item | None, Item | None]]:
    """The name's index and the wanted version's item (the latest's fields come from the index), in one
    BatchGetItem with the session head; SessionNotFound when the session is not live for `owner`."""
    _, index, item = yield from read_index_head(ctx, session_id, owner, name, version)
    return index, item


def read_index_head(
    ctx: Context, session_id: str, owner: str | None, name: str, version: int | None
) -> Plan[tuple[Head, Item | None, Item | None]]:
    """`read_index`, with the session's head it read."""
    d = object_keys.digest(name)
    wanted = [keys.head_key(session_id), keys.session_key(session_id, keys.artifact_sk(d))]
    if version is not None:
        wanted.append(keys.session_key(session_id, keys.artifact_version_sk(d, version)))
    items = yield from batch_get(ctx, ctx.sessions_table, wanted)
    head = yield from live_head(ctx, session_id, find_head(items, session_id), owner)
    by_sk = {i[keys.SK]["S"]: i for i in items}
    index = by_sk.get(keys.artifact_sk(d))
    if version is None:
        if index is None or not index_live(index):
            return head, index, None
        return head, index, {**index, OBJECT: index[LATEST_KEY]}
    item = by_sk.get(keys.artifact_version_sk(d, version))
    return head, index, item if item is not None and visible(index, version) else None


def find_version(
    ctx: Context, session_id: str, owner: str | None, name: str, version: int | None
) -> Plan[tuple[ArtifactVersion, str] | None]:
    """The version (latest when None) and its object key, or None when absent."""
    _, item = yield from read_index(ctx, session_id, owner, name, version)
    if item is None:
        return None
    return version_from_item(session_id, item), need_s(item, OBJECT)


def get_artifact(ctx: Context, request: GetArtifact) -> Plan[bytes | None]:
    session_id, owner, name, version = request.session_id, request.owner, request.name, request.version
    found = yield from find_version(ctx, session_id, owner, name, version)
    if found is None:
        return None
    resp = yield from _get_object(ctx, found[1])
    return bytes(resp["Body"])


def open_artifact(ctx: Context, request: OpenArtifact) -> Plan[ArtifactReader | None]:
    """A reader of the version over the driver's streaming body, or None when absent (the async store
    reads it through `AsyncArtifactReader.over`: the async driver's body reads with `await`)."""
    session_id, owner, name, version = request.session_id, request.owner, request.name, request.version
    found = yield from find_version(ctx, session_id, owner, name, version)
    if found is None:
        return None
    resp = yield from _get_object(ctx, found[1], stream=True)
    body = resp["Body"]
    return ArtifactReader(found[0], body.read, body.close)


def _get_object(ctx: Context, key: str, *, stream: bool = False) -> Plan[dict[str, Any]]:
    try:
        resp: dict[str, Any] = yield s3("get_object", ctx, stream=stream, Key=key)
    except AwsError as err:
        if err.code in ("NoSuchKey", "404"):
            raise StoreError(f"an artifact's object is missing from the bucket: {key}") from err
        raise
    return resp


def list_artifacts(ctx: Context, request: ListArtifacts) -> Plan[list[ArtifactVersion]]:
    """The latest version of every live name, sorted by name: one GetItem and one Query per 1 MB."""
    session_id, owner = request.session_id, request.owner
    yield from read_head(ctx, session_id, owner)
    items = yield from partition_prefix(ctx, session_id, keys.ARTIFACT_PREFIX)
    found = [version_from_item(session_id, i) for i in items if index_live(i)]
    return sorted(found, key=lambda a: a.name)


def list_artifact_versions(ctx: Context, request: ListArtifactVersions) -> Plan[list[ArtifactVersion]]:
    """Every live version of a name, oldest first."""
    session_id, owner, name = request.session_id, request.owner, request.name
    index, _ = yield from read_index(ctx, session_id, owner, name, None)
    if index is None or not index_live(index):
        return []
    d = object_keys.digest(name)
    lo = get_int(index, "deleted_through") + 1
    items = yield from _version_range(ctx, session_id, d, lo, get_int(index, "latest"))
    return [version_from_item(session_id, i) for i in items]


def _version_range(ctx: Context, session_id: str, d: str, lo: int, hi: int) -> Plan[list[Item]]:
    if lo > hi:
        return []
    expr = Expr()
    items: list[Item] = yield from query(
        {
            "TableName": ctx.sessions_table,
            "ConsistentRead": True,
            "KeyConditionExpression": f"{expr.name(keys.PK)} = {expr.value(s(keys.session_pk(session_id)))} AND "
            f"{expr.name(keys.SK)} BETWEEN {expr.value(s(keys.artifact_version_sk(d, lo)))} AND "
            f"{expr.value(s(keys.artifact_version_sk(d, hi)))}",
            **expr.params(),
        }
    )
    return items


# ---------------------------------------------------------------- writes


def _intent_for(
    ctx: Context, session_id: str, owner: str | None, name: str, upload: Presign | None = None
) -> Plan[tuple[Intent, str]]:
    """Record the intent for one artifact object of this session; returns it and the object's key. For a
    presigned `upload` the object is its incoming key (never a version's), and the intent remembers the
    owner and the life (creation time) of the session it was issued in, and what the upload promised."""
    attempt = 0
    while True:
        life = None
        if upload is None:
            owner_of = yield from session_owner(ctx, session_id, owner)
        else:
            head = yield from read_head(ctx, session_id, owner)
            owner_of, life = head.session.owner, iso(head.session.created_at)
        upload_id = ctx.new_id()
        prefix = object_keys.session_prefix(owner_of, session_id)
        extra: Item = {"kind": s(KIND_ARTIFACT), "session_id": s(session_id), "name": s(name), "owner": s(owner_of)}
        grace = None
        if upload is None:
            key = object_keys.artifact_key(prefix, name, upload_id)
        else:
            key = object_keys.incoming_key(prefix, upload_id)
            grace = ctx.settings.upload_grace + timedelta(seconds=upload.expires_in)
            extra.update(_promised(upload), session_created=s(life or ""))
        intent = yield from record_intent(
            ctx, [key], session=(session_id, owner, owner_of), upload_id=upload_id, extra=extra, grace=grace, life=life
        )
        if intent is not None:
            return intent, key
        attempt = yield from again(ctx, attempt, "put_artifact")  # the session turned out to be another


def _promised(upload: Presign) -> Item:
    """What a presigned upload's intent records of its request (read back by `confirm_artifact_upload`)."""
    out: Item = {
        "content_type": s(upload.content_type),
        "metadata": s(json.dumps(upload.metadata, sort_keys=True)),
        "max_size": n(upload.max_size),
    }
    if upload.size is not None:
        out["size"] = n(upload.size)
    if upload.sha256 is not None:
        out["sha256"] = s(upload.sha256)
    return out


def put_artifact(ctx: Context, request: PutArtifact) -> Plan[ArtifactVersion]:
    """Upload `data` behind an intent, then commit it as the name's next version."""
    session_id, owner, name = request.session_id, request.owner, request.name
    data, content_type, metadata = request.data, request.content_type, request.metadata
    bucket(ctx)  # before anything is written
    intent, key = yield from _intent_for(ctx, session_id, owner, name)
    try:
        uploaded = yield from upload(ctx, key, data, content_type)
    except (AwsError, StoreError):
        yield from abandon(ctx, intent)
        raise
    done = intent.release(ctx)
    return (yield from commit(ctx, session_id, owner, name, key, uploaded, content_type, metadata, intent, done))


@dataclass(frozen=True)
class Attempt:
    """One try at committing an upload as `version`, the index being at `latest`."""

    session_id: str
    owner: str | None
    digest: str
    key: str
    done: dict[str, Any]
    fields: Item
    version: int
    latest: int
    deleted_through: int
    now: datetime

    def actions(self, ctx: Context, pos: Position) -> Actions:
        """The head's touch, the index's move latest -> version ("index"), the version's put ("version"),
        and `done` ("intent"), the action that settles the upload's intent (its release; or, for a
        presigned upload, marking it committed)."""
        head = touch_head(ctx, self.session_id, self.owner, pos, self.now)
        iexpr = Expr()
        lat = iexpr.name("latest")
        sets = [f"{iexpr.name(k)} = {iexpr.value(v)}" for k, v in self.fields.items()]
        sets += [
            f"{iexpr.name(LATEST_KEY)} = {iexpr.value(s(self.key))}",
            f"{iexpr.name('live')} = {iexpr.value(boolean(True))}",
            f"{iexpr.name('deleted_through')} = {iexpr.value(n(self.deleted_through))}",
            f"{lat} = {iexpr.value(n(self.version))}",
        ]
        expected = iexpr.as_read("latest", self.latest or None)
        index = {
            "Update": {
                "TableName": ctx.sessions_table,
                "Key": keys.session_key(self.session_id, keys.artifact_sk(self.digest)),
                "UpdateExpression": "SET " + ", ".join(sets),
                "ConditionExpression": expected,
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                **iexpr.params(),
            }
        }
        vexpr = Expr()
        vkey = keys.session_key(self.session_id, keys.artifact_version_sk(self.digest, self.version))
        put = {
            "Put": {
                "TableName": ctx.sessions_table,
                "Item": {**vkey, **self.fields, OBJECT: s(self.key)},
                "ConditionExpression": f"attribute_not_exists({vexpr.name(keys.PK)})",
                **vexpr.params(),
            }
        }
        return Actions(head=head, index=index, version=put, intent=self.done)

    def landed(self, ctx: Context, pos: Position) -> Plan[bool]:
        """True when this attempt's version item is stored (a resent commit whose response was lost)."""
        vkey = keys.session_key(self.session_id, keys.artifact_version_sk(self.digest, self.version))
        item = yield from get_item(ctx.sessions_table, vkey)
        return item is not None and item.get(OBJECT) == s(self.key)


def commit(
    ctx: Context,
    session_id: str,
    owner: str | None,
    name: str,
    key: str,
    uploaded: Uploaded,
    content_type: str,
    metadata: dict[str, str],
    intent: Intent,
    done: dict[str, Any],
) -> Plan[ArtifactVersion]:
    """Make the uploaded object the name's next version (see the module docstring); `done` is the action
    that settles its intent. If the commit fails for good, the intent and its objects are removed."""
    d = object_keys.digest(name)
    ikey = keys.session_key(session_id, keys.artifact_sk(d))
    latest, deleted_through, attempt = 0, 0, 0
    while True:
        now = ctx.now()
        fields = _fields(name, latest + 1, uploaded, content_type, metadata, iso(now))
        tr = Attempt(session_id, owner, d, key, done, fields, latest + 1, latest, deleted_through, now)
        try:
            yield from write_session(
                ctx,
                session_id,
                owner,
                partial(tr.actions, ctx),
                what="put_artifact",
                landed=partial(tr.landed, ctx),
                expected=(UploadSettled, IndexMoved, VersionExists),
            )
            return version_from_item(session_id, fields)
        except UploadSettled as settled:
            mine = yield from _committed_version(ctx, session_id, d, key)
            if mine is not None:
                return mine
            yield from abandon(ctx, intent)
            raise StoreError("the upload expired before it was committed; upload again") from settled
        except (IndexMoved, VersionExists) as exc:
            old = exc.failed.old(IndexMoved.action) or (yield from get_item(ctx.sessions_table, ikey))
            latest = get_int(old or {}, "latest")
            if isinstance(exc, VersionExists):
                latest = max(latest, tr.version)  # a version item exists beyond the index: skip past it
            deleted_through = get_int(old or {}, "deleted_through") if index_live(old) else latest
            attempt = yield from again(ctx, attempt, "put_artifact")
        except StoreError:  # any other cancellation, or a failure: nothing of the upload may stay
            yield from abandon(ctx, intent)
            raise


def _committed_version(ctx: Context, session_id: str, d: str, key: str) -> Plan[ArtifactVersion | None]:
    """The version whose object is `key`, if one was committed (searched newest first)."""
    expr = Expr()
    items = yield from query(
        {
            "TableName": ctx.sessions_table,
            "ConsistentRead": True,
            "ScanIndexForward": False,
            "KeyConditionExpression": f"{expr.name(keys.PK)} = {expr.value(s(keys.session_pk(session_id)))} AND "
            f"begins_with({expr.name(keys.SK)}, {expr.value(s(keys.artifact_versions_prefix(d)))})",
            **expr.params(),
        },
        limit=100,
    )
    mine = next((i for i in items if i.get(OBJECT) == s(key)), None)
    return None if mine is None else version_from_item(session_id, mine)


def delete_artifact(ctx: Context, request: DeleteArtifact) -> Plan[None]:
    """Hide every version at once (the index is marked deleted through its latest version, in one
    conditional write with the head's touch), then delete the version items and their objects.
    Idempotent; repeating it finishes a deletion that was interrupted."""
    session_id, owner, name = request.session_id, request.owner, request.name
    d = object_keys.digest(name)
    ikey = keys.session_key(session_id, keys.artifact_sk(d))
    attempt = 0
    while True:
        head, index, _ = yield from read_index_head(ctx, session_id, owner, name, None)
        if index is None:
            return
        latest = get_int(index, "latest")
        if index_live(index):
            now = ctx.now()

            def build(pos: Position, latest: int = latest, now: Any = now) -> Actions:
                rules.check_unpinned("delete_artifact", 0, pos.pinned)  # a fork's copy takes the objects along
                head = touch_head(
                    ctx, session_id, owner, pos, now, lambda e: [count_edit(e)], lambda e: [unpinned(e, 0)]
                )
                iexpr = Expr()
                mark = {
                    "Update": {
                        "TableName": ctx.sessions_table,
                        "Key": ikey,
                        "UpdateExpression": f"SET {iexpr.name('live')} = {iexpr.value(boolean(False))}, "
                        f"{iexpr.name('deleted_through')} = {iexpr.value(n(latest))}",
                        "ConditionExpression": f"{iexpr.name('latest')} = {iexpr.value(n(latest))}",
                        **iexpr.params(),
                    }
                }
                return Actions(head=head, index=mark)

            try:
                yield from write_session(ctx, session_id, owner, build, what="delete_artifact", expected=(IndexMoved,))
            except IndexMoved:  # a new version was committed meanwhile: delete through it too, at once
                attempt = yield from again(ctx, attempt, "delete_artifact")
                continue
        break
    items = yield from _version_range(ctx, session_id, d, 1, latest)
    yield from batch_delete(ctx, ctx.sessions_table, [{keys.PK: i[keys.PK], keys.SK: i[keys.SK]} for i in items])
    # only the session's own objects: a fork's versions name its source's until its copy has made its own
    mine = object_keys.session_prefix(head.session.owner, session_id)
    yield from delete_objects(ctx, [o for i in items if (o := need_s(i, OBJECT)).startswith(mine)])


# ---------------------------------------------------------------- presigned URLs


def presign(method: str, params: dict[str, Any], expires_in: int) -> Call:
    """Signing a URL is local to the SDK (no request), but it is the S3 client's method, so a driver runs it."""
    return Call(
        "generate_presigned_url",
        {"ClientMethod": method, "Params": params, "ExpiresIn": expires_in, "HttpMethod": method.split("_")[0].upper()},
        service="s3",
    )


def presign_get(
    ctx: Context, session_id: str, owner: str | None, name: str, version: int | None, expires_in: int
) -> Plan[str | None]:
    """A SigV4 URL for downloading a version (None when absent), served as an attachment of its type."""
    found = yield from find_version(ctx, session_id, owner, name, version)
    if found is None:
        return None
    av, key = found
    params = {
        "Bucket": ctx.bucket,
        "Key": key,
        "ResponseContentType": av.content_type,
        "ResponseContentDisposition": attachment(av.name),
    }
    url: str = yield presign("get_object", params, expires_in)
    return url


def presign_artifact_upload(ctx: Context, request: PresignArtifactUpload) -> Plan[PresignedUpload]:
    """A SigV4 URL for uploading a new version once, behind an intent that outlives the URL by the upload
    grace. What the client must send is signed (`http_headers.upload_headers`). The bytes become a
    version only through `confirm_artifact_upload`."""
    session_id, owner, spec = request.session_id, request.owner, request.presign
    bucket(ctx)
    intent, key = yield from _intent_for(ctx, session_id, owner, spec.name, spec)
    params: dict[str, Any] = {"Bucket": ctx.bucket, "Key": key, "ContentType": spec.content_type, "IfNoneMatch": "*"}
    if spec.size is not None:
        params["ContentLength"] = spec.size
    if spec.sha256 is not None:
        params["ChecksumSHA256"] = sha256_base64(spec.sha256)
    url: str = yield presign("put_object", params, spec.expires_in)
    return PresignedUpload(
        url=url,
        upload_id=intent.key[keys.PK]["S"].split("#", 1)[1],
        session_id=session_id,
        name=spec.name,
        expires_at=from_epoch(int(ctx.now().timestamp()) + spec.expires_in),
        headers=upload_headers(spec.content_type, spec.size, spec.sha256),
        max_size=spec.max_size,
        size=spec.size,
        sha256=spec.sha256,
    )


def presign_artifact(ctx: Context, request: PresignArtifact) -> Plan[str]:
    """`presign_artifact`: a GET URL of a version (ArtifactNotFound if absent) or a PUT URL of a new upload."""
    session_id, owner, spec = request.session_id, request.owner, request.presign
    if spec.method == "PUT":
        upload = yield from presign_artifact_upload(
            ctx, PresignArtifactUpload(session_id=session_id, owner=owner, presign=spec)
        )
        return upload.url
    url = yield from presign_get(ctx, session_id, owner, spec.name, spec.version, spec.expires_in)
    if url is None:
        raise ArtifactNotFound(session_id, spec.name, spec.version)
    return url


def confirm_artifact_upload(ctx: Context, request: ConfirmArtifactUpload) -> Plan[ArtifactVersion]:
    """Check the object a presigned PUT wrote and commit it as the name's next version:
    1. the upload must be a pending upload of this session and name, issued in this life of the session
       (one issued before the id was deleted and taken again is discarded: nobody can confirm it);
    2. its size, from the object's metadata, must be within its limit (and the declared size); its
       SHA-256 is S3's checksum when one was declared, else read back (within the limit); a refused
       object is deleted, so the URL can upload again while it is valid;
    3. it is copied, server-side and only while it is the object checked, to the version's key, which
       no URL was ever issued for: no URL can change a committed version;
    4. one transaction makes the copy the next version and marks the intent committed; the intent stays
       until the URL has expired (then the cascade deletes what is at the upload's key);
    5. the upload's key is left holding an empty object, so that the URL, whose PUT is conditional on
       nothing being there (If-None-Match), writes nothing more: it has written once.
    Confirming twice returns the version the first confirm made."""
    session_id, owner, name, upload_id = request.session_id, request.owner, request.name, request.upload
    bucket(ctx)
    head = yield from read_head(ctx, session_id, owner)
    version_key = object_keys.artifact_key(object_keys.session_prefix(head.session.owner, session_id), name, upload_id)
    item = yield from load_intent(ctx, upload_id)
    if item is None:
        return (yield from _confirmed_before(ctx, session_id, name, version_key))
    if get_s(item, "session_id") != session_id or get_s(item, "name") != name or get_s(item, "kind") != KIND_ARTIFACT:
        raise InvalidInput("upload does not belong to this session and artifact name")
    intent = Intent(intent_key(upload_id), [v["S"] for v in item[OBJECTS]["L"]])
    if (get_s(item, "owner"), get_s(item, "session_created")) != (head.session.owner, iso(head.session.created_at)):
        yield from abandon(ctx, intent)
        raise InvalidInput("upload was issued for an earlier session with this id; it has been discarded")
    if COMMITTED in item:
        return (yield from _confirmed_before(ctx, session_id, name, need_s(item, COMMITTED)))
    incoming = intent.objects[0]
    stored = yield from head_object(ctx, incoming)
    if stored is None:
        raise InvalidInput("nothing has been uploaded to that URL yet")
    sha256 = yield from _checked(ctx, item, incoming, stored)
    content_type = get_s(item, "content_type") or "application/octet-stream"
    metadata = json.loads(get_s(item, "metadata") or "{}")
    covered = Intent(intent.key, [incoming, version_key])
    try:  # the intent covers the copy before it is made
        yield Call("update_item", intent.cover(ctx, covered.objects)["Update"])
    except AwsError as err:
        if err.code != "ConditionalCheckFailedException":
            raise
        return (yield from _confirmed_before(ctx, session_id, name, version_key))  # confirmed meanwhile, or expired
    try:
        yield from copy_object(ctx, incoming, version_key, stored, content_type)
    except (AwsError, StoreError):
        with contextlib.suppress(AwsError):
            yield from delete_objects(ctx, [version_key])
        raise
    done = intent.cover(ctx, [incoming], committed=version_key)
    uploaded = Uploaded(stored.size, sha256)
    version = yield from commit(
        ctx, session_id, owner, name, version_key, uploaded, content_type, metadata, covered, done
    )
    with contextlib.suppress(AwsError):  # best effort: the intent reclaims what is at the key when it expires
        yield s3("put_object", ctx, Key=incoming, Body=b"", ContentType=SPENT_UPLOAD)
    return version


SPENT_UPLOAD = "application/x-agent-store-spent-upload"  # an empty object where a confirmed upload's bytes were


def _checked(ctx: Context, intent: Item, incoming: str, stored: Stored) -> Plan[str]:
    """The SHA-256 of an uploaded object that keeps its upload's promises (limit, declared size and
    digest); otherwise the object is deleted and the refusal raised."""
    limit, size, declared = get_int(intent, "max_size"), get_n(intent, "size"), get_s(intent, "sha256")
    refusal: StoreError | None = None
    sha256 = stored.sha256
    if stored.size > limit:
        refusal = PayloadTooLarge(f"the upload holds {stored.size} bytes, over its limit of {limit}; it was discarded")
    elif size is not None and stored.size != size:
        refusal = InvalidInput(f"the upload holds {stored.size} bytes, not the {size} declared; it was discarded")
    elif sha256 is None:  # S3 has no checksum for it (none was declared): hash it, while it is the object checked
        read = yield from digest_object(ctx, incoming, if_match=stored.etag)
        if read is None:
            raise Conflict("the upload changed while it was being confirmed; confirm again")
        sha256 = read.sha256
    if refusal is None and declared is not None and sha256 != declared:
        refusal = InvalidInput("the uploaded bytes do not match the declared sha256; they were discarded")
    if refusal is not None:
        yield from delete_objects(ctx, [incoming])
        raise refusal
    return str(sha256)


def _confirmed_before(ctx: Context, session_id: str, name: str, version_key: str) -> Plan[ArtifactVersion]:
    """The version an earlier confirm of the upload made (its object is `version_key`)."""
    mine = yield from _committed_version(ctx, session_id, object_keys.digest(name), version_key)
    if mine is None:
        raise InvalidInput("no pending upload with that id (it expired, or was never issued)")
    return mine
