"""Where the DynamoDB backend puts things in the bucket: spilled bodies under the session's prefix, presigned
URLs signed with SigV4 for the asked expiry, and a confirmed upload's version under a key no URL was issued
for. (What every backend must hold, or no longer hold, is the contract suite's, through `leftovers()`.)"""

from __future__ import annotations

import base64
import os
from urllib.parse import urlsplit

import pytest

from store.aws import object_keys
from tests.conftest import Harness
from tests.contract.test_artifacts import put_through_url

MB = 1024 * 1024


def blob(n: int) -> str:
    return base64.b64encode(os.urandom(n * 3 // 4)).decode()


def test_a_large_message_and_state_spill_under_the_sessions_prefix(dyn: Harness) -> None:
    sid = dyn.store.create_session("alice").id
    dyn.store.append_messages(sid, [{"role": "tool", "content": blob(2 * MB)}])
    dyn.store.save_state(sid, {"blob": blob(2 * MB)})
    prefix = object_keys.session_prefix("alice", sid)
    assert len(dyn.objects()) == 2 and dyn.objects(prefix) == dyn.objects()
    assert dyn.leftovers("body") == [f"body:{key}" for key in dyn.objects()]


@pytest.mark.settings(spill_item_bytes=10_000)
def test_the_spill_threshold_is_a_setting(dyn: Harness) -> None:
    sid = dyn.store.create_session("alice").id
    dyn.store.append_messages(sid, [{"role": "user", "content": blob(9_000)}])
    assert dyn.objects() == []
    dyn.store.append_messages(sid, [{"role": "user", "content": blob(20_000)}])
    assert len(dyn.objects()) == 1


def test_a_presigned_get_is_signed_for_the_asked_expiry(dyn: Harness) -> None:
    sid = dyn.store.create_session("alice").id
    dyn.store.put_artifact(sid, "a.txt", b"x")
    url = dyn.store.presign_artifact(sid, "a.txt", expires_in=60)
    assert "X-Amz-Signature=" in url and "X-Amz-Expires=60" in url and "X-Amz-Algorithm=AWS4-HMAC-SHA256" in url


def test_a_confirmed_version_lives_under_a_key_no_url_was_issued_for(dyn: Harness) -> None:
    sid = dyn.store.create_session("alice").id
    up = dyn.store.presign_artifact_upload(sid, "report.html", content_type="text/html")
    assert put_through_url(dyn, up.url, b"<p>the report</p>", up.headers)
    dyn.store.confirm_artifact_upload(sid, "report.html", up.upload_id)
    prefix = object_keys.session_prefix("alice", sid)
    assert urlsplit(up.url).path.endswith(object_keys.incoming_key(prefix, up.upload_id))
    assert dyn.objects(prefix + "artifacts/") == [object_keys.artifact_key(prefix, "report.html", up.upload_id)]
