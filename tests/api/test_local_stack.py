"""End to end over real HTTP: the local stack (moto's server, the API adapter, the cascade poller), as
`make run` starts it."""

from __future__ import annotations

import base64
import json
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

from infra.local import devtoken
from infra.local.aws import local_client
from infra.local.stack import LocalStack, local_stack
from store import SessionStore


@pytest.fixture(scope="module")
def stack() -> Iterator[LocalStack]:
    with local_stack(port=0) as running:
        yield running


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def http(
    method: str, url: str, *, token: str | None = None, body: Any = None, raw: bytes | None = None, headers: Any = None
) -> tuple[int, dict[str, str], bytes]:
    hdrs = dict(headers or {})
    data = raw
    if body is not None:
        data = json.dumps(body).encode()
        hdrs["Content-Type"] = "application/json"
    if token is not None:
        hdrs["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=data, method=method, headers=hdrs)
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(request, timeout=30) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def test_a_session_over_http(stack: LocalStack) -> None:
    api, token = stack.api_url, stack.token("alice")
    status, _, body = http("POST", f"{api}/sessions", token=token, body={"title": "over HTTP"})
    assert status == 201
    sid = json.loads(body)["id"]
    msgs = {"messages": [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi!"}]}
    first = http("POST", f"{api}/sessions/{sid}/messages", token=token, body=msgs, headers={"Idempotency-Key": "t1"})
    again = http("POST", f"{api}/sessions/{sid}/messages", token=token, body=msgs, headers={"Idempotency-Key": "t1"})
    assert first[0] == again[0] == 201 and json.loads(first[2]) == json.loads(again[2])
    status, _, body = http("GET", f"{api}/sessions/{sid}/messages?limit=10", token=token)
    assert status == 200 and [m["content"] for m in json.loads(body)["items"]] == ["hello", "hi!"]
    # an artifact through a presigned PUT, confirmed, then downloaded through the presigned redirect
    status, _, body = http(
        "POST",
        f"{api}/sessions/{sid}/artifact-uploads",
        token=token,
        body={"name": "notes/a.txt", "content_type": "text/plain"},
    )
    upload = json.loads(body)
    assert status == 201 and upload["url"].startswith(stack.aws_endpoint)
    assert http("PUT", upload["url"], raw=b"uploaded bytes", headers=upload["headers"])[0] == 200
    assert http("PUT", upload["url"], raw=b"replaced", headers=upload["headers"])[0] == 412  # the URL writes once
    status, _, body = http(
        "POST",
        f"{api}/sessions/{sid}/artifact-uploads/{upload['upload_id']}/confirm",
        token=token,
        body={"name": "notes/a.txt"},
    )
    assert status == 201 and json.loads(body)["version"] == 1
    path = f"{api}/sessions/{sid}/artifacts/{quote('notes/a.txt', safe='')}"
    status, headers, _ = http("GET", path, token=token)
    assert status == 302
    assert http("GET", headers["Location"])[2] == b"uploaded bytes"
    status, headers, body = http("GET", f"{path}?inline=true", token=token)
    assert (status, body) == (200, b"uploaded bytes") and headers["Content-Type"] == "text/plain"
    assert headers["Content-Disposition"].startswith("attachment") and headers["X-Content-Type-Options"] == "nosniff"
    binary = os.urandom(3000)
    status, _, body = http(
        "PUT",
        f"{api}/sessions/{sid}/artifacts/raw.bin",
        token=token,
        raw=binary,
        headers={"Content-Type": "application/octet-stream"},
    )
    assert (
        status == 201 and http("GET", f"{api}/sessions/{sid}/artifacts/raw.bin?inline=true", token=token)[2] == binary
    )
    assert http("DELETE", f"{api}/sessions/{sid}", token=token)[0] == 204
    assert http("GET", f"{api}/sessions/{sid}", token=token)[0] == 404


@pytest.mark.parametrize(
    "make_token",
    [
        lambda stack: None,
        lambda stack: "not-a-jwt",
        lambda stack: "a.b.c",
        lambda stack: devtoken.issue(devtoken.new_secret(), "alice"),  # signed by someone else
        lambda stack: devtoken.issue(stack.secret, "alice", now=time.time() - 7200, ttl=60),  # expired
        lambda stack: stack.token("alice").rsplit(".", 1)[0] + ".",  # signature stripped
        lambda stack: signed(stack, exp=time.time() + 600, iat=time.time() + 300),  # issued in the future
        lambda stack: signed(stack, exp=time.time() + 600, nbf=time.time() + 300),  # not valid yet
        lambda stack: signed(stack, exp=float("nan")),  # never compares as expired
        lambda stack: signed(stack, exp=float("inf")),
        lambda stack: signed(stack, exp="tomorrow"),
        lambda stack: signed(stack, exp=True),
    ],
    ids=[
        "none",
        "garbage",
        "malformed",
        "wrong-signature",
        "expired",
        "unsigned",
        "future-iat",
        "future-nbf",
        "nan-exp",
        "infinite-exp",
        "text-exp",
        "bool-exp",
    ],
)
def test_bad_tokens_are_refused(stack: LocalStack, make_token: Any) -> None:
    token = make_token(stack)
    for method, path in (("GET", "/sessions"), ("POST", "/sessions"), ("GET", "/search?q=x")):
        status, _, body = http(method, stack.api_url + path, token=token, body={} if method == "POST" else None)
        assert status == 401 and json.loads(body)["code"] == "unauthorized"
    assert http("GET", f"{stack.api_url}/health")[0] == 200
    assert json.loads(http("GET", f"{stack.api_url}/openapi.json")[2])["info"]["title"] == "agent-session-store"


def signed(stack: LocalStack, **times: Any) -> str:
    """A development token for alice, correctly signed, with the time claims given (json allows NaN)."""
    import hashlib
    import hmac

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    claims = {"sub": "alice", "iss": devtoken.ISSUER, "aud": devtoken.AUDIENCE, **times}
    head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64(json.dumps(claims).encode())
    signature = hmac.new(stack.secret, f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64(signature)}"


def raw_request(stack: LocalStack, head: str, body: bytes = b"") -> tuple[int, bytes]:
    """Send bytes as they are (what urllib would refuse to send) and read the status line and body."""
    import socket
    from urllib.parse import urlsplit

    where = urlsplit(stack.api_url)
    with socket.create_connection((where.hostname, where.port), timeout=10) as conn:
        conn.sendall(head.encode() + b"\r\n\r\n" + body)
        conn.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    status = int(answer.split(b" ", 2)[1])
    return status, answer.split(b"\r\n\r\n", 1)[1]


@pytest.mark.parametrize("length", ["-5", "abc", "1e3", "5, 5", " "])
def test_a_bad_content_length_is_a_400(stack: LocalStack, length: str) -> None:
    """Never a skipped size check or a dropped connection: an answer in the API's error shape."""
    token = stack.token("alice")
    head = f"POST /sessions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\nContent-Length: {length}"
    status, body = raw_request(stack, head, b"{}")
    assert status == 400 and json.loads(body)["code"] == "invalid_request"
    assert http("GET", f"{stack.api_url}/health")[0] == 200  # and the server is still serving


def test_another_owner_sees_nothing_over_http(stack: LocalStack) -> None:
    api = stack.api_url
    sid = json.loads(http("POST", f"{api}/sessions", token=stack.token("alice"), body={})[2])["id"]
    bob = stack.token("bob")
    for method, path in (("GET", ""), ("GET", "/messages"), ("GET", "/state"), ("GET", "/artifacts"), ("PATCH", "")):
        status, _, body = http(method, f"{api}/sessions/{sid}{path}", token=bob, body={} if method == "PATCH" else None)
        assert status == 404 and json.loads(body)["code"] == "session_not_found"


def test_the_cascade_reclaims_a_replaced_state(stack: LocalStack) -> None:
    """The stream poller feeds the cascade function: a replaced spilled state's object is deleted."""
    from infra.local.aws import local_client

    api, token = stack.api_url, stack.token("carol")
    sid = json.loads(http("POST", f"{api}/sessions", token=token, body={})[2])["id"]
    s3 = local_client("s3", endpoint_url=stack.aws_endpoint)

    def objects() -> list[str]:
        listed = s3.list_objects_v2(Bucket=stack.tables.bucket, Prefix="sessions/")
        return [o["Key"] for o in listed.get("Contents", []) if sid in o["Key"]]

    for _ in range(2):
        big = base64.b64encode(os.urandom(600_000)).decode()
        assert http("PUT", f"{api}/sessions/{sid}/state", token=token, body={"state": big})[0] == 200
    deadline = time.time() + 20
    while len(objects()) != 1 and time.time() < deadline:
        time.sleep(0.5)
    assert len(objects()) == 1, objects()
    assert stack.cascade.processed > 0


def test_make_run_prints_a_working_curl_and_stops_on_ctrl_c() -> None:
    """`python -m infra.cli local` (what `make run` runs): prints the URL, a token and a curl that works; SIGINT
    stops everything and the process exits cleanly."""
    import re
    import signal
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-m", "infra.cli", "local", "--port", "0", "--aws-port", "0", "--no-browser"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    lines: list[str] = []
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            line = proc.stdout.readline()
            lines.append(line)
            if "Press Ctrl-C" in line or not line:
                break
        text = "".join(lines)
        url = re.search(r"API:\s+(http://127\.0\.0\.1:\d+)", text)
        token = re.search(r"export TOKEN=(\S+)", text)
        assert url and token, text
        status, _, body = http("POST", f"{url.group(1)}/sessions", token=token.group(1), body={"title": "first"})
        assert status == 201 and json.loads(body)["owner"] == "dev-user"
        assert "data:     in memory: it is gone when the stack stops" in text
        exports = dict(re.findall(r"^  export (\w+)=(\S+)$", text, re.M))
        assert exports["AGENT_STORE_API"] == url.group(1) and exports["AWS_ENDPOINT_URL"].startswith(
            "http://127.0.0.1:"
        )
        # the printed environment is enough for SessionStore.from_env() to reach the same tables
        env = {k: v for k, v in exports.items() if k != "TOKEN"}
        probe = "from store import SessionStore; print(SessionStore.from_env().list_sessions('x').items)"
        found = subprocess.run([sys.executable, "-c", probe], env=os.environ | env, capture_output=True, text=True)
        assert found.returncode == 0 and found.stdout.strip() == "[]", found.stderr
    finally:
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0 and "stopped." in out
    assert re.search(r"^POST /sessions 201 \d+ ms$", out, re.M), out  # one line per request


def test_a_taken_port_is_a_one_line_error() -> None:
    import socket
    import subprocess
    import sys

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "infra.cli", "local", "--port", str(port), "--aws-port", "0", "--no-browser"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"agent-store local: the API's port {port} is taken (another `make run`?): use --port N"
    ]


def test_data_kept_in_a_directory_survives_a_restart(tmp_path: Any) -> None:
    data = tmp_path / "stack-data"
    with local_stack(port=0, cascade=False, prefix="keep", data=data) as first:
        token = first.token("alice")
        status, _, body = http("POST", f"{first.api_url}/sessions", token=token, body={"session_id": "kept"})
        assert status == 201
        msgs = {"messages": [{"role": "user", "content": "remember me"}]}
        assert http("POST", f"{first.api_url}/sessions/kept/messages", token=token, body=msgs)[0] == 201
        binary = {"Content-Type": "application/octet-stream"}
        put = http(
            "PUT", f"{first.api_url}/sessions/kept/artifacts/a.bin", token=token, raw=b"\x00\x01bin", headers=binary
        )
        assert put[0] == 201
    assert (data / "tables").is_dir() and (data / "secret").exists()
    with local_stack(port=0, cascade=False, prefix="keep2", data=data) as second:  # moto's state is per process
        # the same token works: the secret was kept with the data
        status, _, body = http("GET", f"{second.api_url}/sessions/kept/messages", token=token)
        assert status == 200 and [m["content"] for m in json.loads(body)["items"]] == ["remember me"]
        got = http("GET", f"{second.api_url}/sessions/kept/artifacts/a.bin?inline=true", token=token)
        assert got[0] == 200 and got[2] == b"\x00\x01bin"


def test_a_token_for_another_owner_without_a_restart(stack: LocalStack) -> None:
    import io

    from store.tools.cli import main

    key = devtoken.operator_key(stack.secret)
    out = io.StringIO()
    assert main(["token", "--sub", "zoe", "--api", stack.api_url, "--operator-key", key], out=out) == 0
    zoe = out.getvalue().strip()
    status, _, body = http("POST", f"{stack.api_url}/sessions", token=zoe, body={"session_id": "zoes"})
    assert status == 201 and json.loads(body)["owner"] == "zoe", body
    # an owner's development token mints nothing (it made every development token every owner's)
    route = f"{stack.api_url}/_local/token"
    assert http("POST", route, token=stack.token("mallory"), body={"sub": "zoe"})[0] == 403
    assert http("POST", route, body={"sub": "zoe"})[0] == 403
    forged = {"X-Agent-Store-Operator": devtoken.operator_key(b"another stack's secret")}
    assert http("POST", route, body={"sub": "zoe"}, headers=forged)[0] == 403
    assert main(["token", "--sub", "zoe", "--api", stack.api_url, "--operator-key", "guess"], out=io.StringIO()) == 1


def test_every_route_refuses_missing_malformed_expired_and_wrongly_signed_tokens(stack: LocalStack) -> None:
    from tests.api.test_api_isolation import OWNER_ROUTES, ROUTES

    ids = {"s": "s-1", "m": "m-1", "u": "0" * 32, "k": "runs", "r": "run-1", "b": "b-1"}
    tokens = {
        "none": None,
        "malformed": "x.y",
        "expired": devtoken.issue(stack.secret, "alice", now=time.time() - 7200, ttl=60),
        "wrongly signed": devtoken.issue(devtoken.new_secret(), "alice"),
    }
    routes = [(m, p, b) for m, p, b, _ in ROUTES] + OWNER_ROUTES
    for name, token in tokens.items():
        for method, template, body in routes:
            status, _, raw = http(method, stack.api_url + template.format(**ids), token=token, body=body)
            assert status == 401 and json.loads(raw)["code"] == "unauthorized", (name, method, template)


def test_the_function_runs_one_event_at_a_time(stack: LocalStack, monkeypatch: pytest.MonkeyPatch) -> None:
    """Many clients at once: each request is one invocation, one at a time, as in a Lambda container (the
    resolver keeps the current event on the app object; two at once mixed their route arguments up)."""
    import threading

    import functions.api.app as api_app

    real = api_app.lambda_handler
    inside, most = [0], [0]
    lock = threading.Lock()

    def observed(event: Any, context: Any) -> Any:
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        time.sleep(0.02)
        try:
            return real(event, context)
        finally:
            with lock:
                inside[0] -= 1

    monkeypatch.setattr(api_app, "lambda_handler", observed)
    token = stack.token("concurrent")
    sid = json.loads(http("POST", f"{stack.api_url}/sessions", token=token, body={})[2])["id"]
    statuses: list[int] = []

    def client(i: int) -> None:
        for j in range(5):
            body = {"messages": [{"role": "user", "content": f"c{i}-{j}"}]}
            statuses.append(http("POST", f"{stack.api_url}/sessions/{sid}/messages", token=token, body=body)[0])
            statuses.append(http("GET", f"{stack.api_url}/sessions/{sid}/last-messages?n=3", token=token)[0])

    threads = [threading.Thread(target=client, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most[0] == 1, f"{most[0]} invocations ran at once"
    assert sorted(set(statuses)) == [200, 201], statuses


def test_the_request_log_shows_control_characters_visibly(stack: LocalStack, caplog: pytest.LogCaptureFixture) -> None:
    """A request path with terminal controls (sent raw: HTTP clients refuse to) is logged with them escaped."""
    import logging
    import socket

    host, port = stack.api_url.removeprefix("http://").split(":")
    with caplog.at_level(logging.INFO, logger="agent-store.local"), socket.create_connection((host, int(port))) as conn:
        conn.sendall(
            b"GET /health\x1b]0;pwned\x07\x1b[2J HTTP/1.1\r\nHost: " + host.encode() + b"\r\nConnection: close\r\n\r\n"
        )
        while conn.recv(65536):
            pass
    lines = [r.getMessage() for r in caplog.records if r.name == "agent-store.local"]
    assert any("/health\\u001b]0;pwned\\u0007\\u001b[2J" in line for line in lines), lines
    assert not any(re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", line) for line in lines)


def test_the_storage_port_answers_no_browser_and_no_other_host(stack: LocalStack) -> None:
    """moto answers anyone who reaches it: a page of any origin read every owner's data with a Scan and
    wiped the stack with a no-cors POST /moto-api/reset. Now a request with an Origin (what a browser
    sends) or for another Host (DNS rebinding) is a 403, and no answer carries CORS headers."""
    store = SessionStore(
        stack.tables.sessions, stack.tables.messages, client=local_client(endpoint_url=stack.aws_endpoint)
    )
    sid = store.create_session("vera").id
    scan = json.dumps({"TableName": stack.tables.sessions}).encode()
    target = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810.Scan"}
    for headers in (
        {**target, "Origin": "https://evil.example"},
        {**target, "Origin": "null"},  # a file:// page
        {**target, "Host": "evil.example:8001"},
    ):
        status, answered, _ = http("POST", stack.aws_endpoint + "/", raw=scan, headers=headers)
        assert status == 403 and not any(k.lower().startswith("access-control") for k in answered), headers
    status, answered, _ = http(
        "OPTIONS",
        stack.aws_endpoint + "/",
        headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"},
    )
    assert status == 403 and "Access-Control-Allow-Origin" not in answered
    status, _, _ = http("POST", stack.aws_endpoint + "/moto-api/reset", raw=b"", headers={"Origin": "null"})
    assert status == 403
    assert store.get_session(sid) is not None  # nothing was wiped; boto3 (no Origin) is served


def test_the_local_stack_backs_up_only_the_items_a_transaction_names(
    stack: LocalStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """moto deep-copies every table a transaction touches (300 appends grew the stack by ~320 MB): the stack
    installs per-item backups, so a table passes through moto's copy untouched and only the named items
    are saved."""
    import moto.dynamodb.models as models
    from moto.dynamodb.models.table import Table

    copied: list[bool] = []
    shim = models.copy  # type: ignore[attr-defined]
    real = shim.deepcopy

    def spy(value: Any, memo: Any = None) -> Any:
        out = real(value, memo)
        if isinstance(value, Table):
            copied.append(out is not value)
        return out

    monkeypatch.setattr(shim, "deepcopy", staticmethod(spy))
    store = SessionStore(
        stack.tables.sessions, stack.tables.messages, client=local_client(endpoint_url=stack.aws_endpoint)
    )
    sid = store.create_session("wes").id
    store.append_messages(sid, [{"role": "user", "content": "x" * 1000}])
    assert copied and not any(copied)  # moto asked to copy the tables it touched, and none was copied


def test_kept_data_is_private_and_never_follows_a_link(tmp_path: Any) -> None:
    """--data holds every owner's data and the token key: 0700/0600 from the start under umask 022, a link
    planted at DIR.saving is refused (it was followed: everything went where it pointed), and a manifest
    naming a file outside objects/ is refused on load (it was read into the bucket)."""
    import stat

    from infra.local import persist

    data = tmp_path / "kept"
    previous = os.umask(0o022)
    try:
        with local_stack(port=0, cascade=False, prefix="priv", data=data) as stack:
            token = stack.token("alice")
            assert http("POST", f"{stack.api_url}/sessions", token=token, body={"session_id": "p"})[0] == 201
            put = http(
                "PUT",
                f"{stack.api_url}/sessions/p/artifacts/a.bin",
                token=token,
                raw=b"x",
                headers={"Content-Type": "application/octet-stream"},
            )
            assert put[0] == 201
            stack.save()
            modes = {p.relative_to(data): stat.S_IMODE(p.stat().st_mode) for p in [data, *data.rglob("*")]}
            assert all(m == (0o700 if (data / p).is_dir() else 0o600) for p, m in modes.items()), modes
            elsewhere = tmp_path / "attacker"
            elsewhere.mkdir()
            (tmp_path / "kept.saving").symlink_to(elsewhere)
            with pytest.raises(persist.DataDirError, match="symbolic link"):
                stack.save()
            assert list(elsewhere.iterdir()) == []  # nothing written through the link
            (tmp_path / "kept.saving").unlink()
    finally:
        os.umask(previous)
    secret_file = tmp_path / "secret-of-someone"
    secret_file.write_bytes(b"not the stack's")
    manifest = json.loads((data / "objects.json").read_text())
    manifest[0]["file"] = "../../secret-of-someone"
    (data / "objects.json").chmod(0o600)
    (data / "objects.json").write_text(json.dumps(manifest))
    with (
        pytest.raises(persist.DataDirError, match="not one of the stack's own"),
        local_stack(port=0, cascade=False, prefix="priv2", data=data),
    ):
        pass
    manifest[0]["file"] = "00000000"
    (data / "objects.json").write_text(json.dumps(manifest))
    (data / "objects" / "00000000").unlink()
    (data / "objects" / "00000000").symlink_to(secret_file)
    with pytest.raises(persist.DataDirError), local_stack(port=0, cascade=False, prefix="priv3", data=data):
        pass


def test_the_operator_key_parses_as_an_option_value_whatever_the_secret() -> None:
    """A key that began with a dash (one secret in 64) was taken by argparse for an option of its own."""
    from store.tools.cli import parser

    for i in range(200):
        key = devtoken.operator_key(i.to_bytes(4, "big"))
        assert not key.startswith("-")
        args = parser().parse_args(["token", "--sub", "zoe", "--operator-key", key])
        assert args.operator_key == key and devtoken.is_operator(i.to_bytes(4, "big"), key)


def test_a_port_a_stopped_stack_left_in_time_wait_is_free() -> None:
    """`make run` right after stopping one: the old stack's sockets wait out TIME_WAIT for a minute, which is
    no listener; a port something listens on is still taken."""
    import socket

    from infra.local.stack import PortTaken, _check_free

    with socket.socket() as server:
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the stack's servers bind
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        client = socket.create_connection(("127.0.0.1", port))
        accepted, _ = server.accept()
        with pytest.raises(PortTaken):
            _check_free(port, "the API's", "--port")  # listening
        accepted.close()  # the server's side closes first: its socket waits in TIME_WAIT
        client.close()
    _check_free(port, "the API's", "--port")


def test_a_refusal_closes_its_connection_and_says_so(stack: LocalStack) -> None:
    """The local adapter's own refusals (a spent sign-in code, a token minted without the operator key, a bad
    Content-Length) answer with `Connection: close` before closing, so that a keep-alive client opens a new
    connection for its next request instead of failing on the closed one."""
    import http.client
    from urllib.parse import urlsplit

    where = urlsplit(stack.api_url)
    connection = http.client.HTTPConnection(where.hostname or "127.0.0.1", where.port, timeout=10)
    refusals = [
        ("POST", "/_local/console-sign-in", b'{"code": "spent"}', {}),
        ("POST", "/_local/token", b'{"sub": "mallory"}', {}),
        ("POST", "/sessions", b"{}", {"Content-Length": "1e3"}),
    ]
    for method, path, body, headers in refusals:
        connection.request(method, path, body=body, headers=headers)
        answer = connection.getresponse()
        answer.read()
        assert answer.status in (400, 403) and answer.getheader("Connection") == "close", (path, answer.status)
        assert answer.will_close  # http.client opens a new connection for the next request
        connection.request("GET", "/health")
        healthy = connection.getresponse()
        healthy.read()
        assert healthy.status == 200, path
    connection.close()


def test_a_memories_index_the_local_embedder_cannot_fill_is_refused_at_start() -> None:
    """`make run` embeds with wordllama's 256 dimensions: a template whose index has others (or whose parameters
    CloudFormation would refuse) stops the stack before it starts, saying what to change."""
    from infra.local.stack import EmbedderMismatch

    for parameters, said in (
        ({"MemoryEmbeddingDimensions": "1024"}, "holds embeddings of 1024 dimensions"),
        ({"MemoryEmbeddingDimensions": "1536"}, "256, 512 or 1024"),
    ):
        with pytest.raises(EmbedderMismatch, match=said), local_stack(port=0, aws_port=0, parameters=parameters):
            pass
