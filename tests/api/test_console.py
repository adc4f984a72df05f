"""The session console in a real browser: Debian's Chromium driven by Playwright against the local stack,
with data created through the API. Screenshots go to $AGENT_STORE_SCREENSHOTS (`make screenshots` writes the
README's, docs/screenshots/) or to the test's temporary directory."""

from __future__ import annotations

import datetime
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from functions.api import console_routes
from infra.local.stack import LocalStack, local_stack
from store import SessionStore
from store.backends.http import HttpBackend
from tests.api.browser import open_console, shots
from tests.api_client import call

TURN: list[dict[str, Any]] = [
    {"role": "user", "content": "What is the weather in Paris? Also, here is my itinerary."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
        ],
        "usage": {"input_tokens": 120, "output_tokens": 14},
    },
    {"role": "tool", "tool_call_id": "c1", "content": "18 °C, sunny"},
    {
        "role": "assistant",
        "content": "It is 18 °C and sunny in Paris.",
        "usage": {"input_tokens": 150, "output_tokens": 11},
    },
]
RUN = [
    {"name": "invoke_agent travel", "span_id": "a", "start": 100.0, "end": 101.8},
    {"name": "chat gpt-x", "span_id": "b", "parent_id": "a", "start": 100.05, "end": 100.7,
     "attributes": {"gen_ai.usage.input_tokens": 120, "message.seq": 2}},
    {"name": "execute_tool get_weather", "span_id": "c", "parent_id": "a", "start": 100.7, "end": 101.1,
     "attributes": {"tool.name": "get_weather"}},
    {"name": "chat gpt-x", "span_id": "d", "parent_id": "a", "start": 101.1, "end": 101.8, "error": True},
]  # fmt: skip
UNTIMED_RUN = [{"type": "llm_call", "ms": 812}, {"type": "tool", "duration_ms": 40}]  # the README's own events


# a run as the OpenTelemetry exporter stores it (OTLP's names, times in nanoseconds)
OTLP_RUN = [
    {"trace_id": "0af7651916cd43dd8448eb211c80319c", "span_id": "00000000000000a1", "parent_span_id": None,
     "name": "invoke_agent otel", "start_time_unix_nano": 1_700_000_000_000_000_000,
     "end_time_unix_nano": 1_700_000_000_250_000_000, "attributes": {}, "status": {"code": "OK", "message": ""}},
]  # fmt: skip


@pytest.fixture(scope="module")
def stack() -> Iterator[LocalStack]:
    with local_stack(port=0, cascade=False, prefix="console") as running:
        alice = SessionStore(backend=HttpBackend(running.api_url, running.token("alice")))
        alice.create_session(
            "alice", session_id="paris", title="Weekend in Paris", model="gpt-x", metadata={"team": "a"}
        )
        alice.append_messages("paris", TURN)
        alice.save_state("paris", {"city": "Paris", "booked": False})
        alice.put_artifact("paris", "itinerary.md", b"# Day 1\nLouvre", content_type="text/markdown")
        alice.append_trace_events("paris", "run-1", RUN)
        alice.append_trace_events("paris", "0af7651916cd43dd8448eb211c80319c", OTLP_RUN)
        alice.append_trace_events("paris", "untimed", UNTIMED_RUN)
        alice.save_records("paris", "notes", [{"note": "window seat"}])
        alice.create_session("alice", session_id="long", title="A long session")
        for start in range(0, 250, 50):
            alice.append_messages(
                "long", [{"role": "user", "content": f"line {i + 1}"} for i in range(start, start + 50)]
            )
        bob = SessionStore(backend=HttpBackend(running.api_url, running.token("bob")))
        bob.create_session("bob", session_id="bobs-secret", title="Bob's plans")
        bob.put_memory("bob", ("secrets",), "s", {"text": "bob prefers the aisle seat"})
        alice.put_memory("alice", ("preferences",), "seat", {"text": "I prefer a window seat on long flights"})
        alice.put_memory("alice", ("preferences",), "food", {"text": "vegetarian, no mushrooms"})
        alice.put_memory("alice", ("projects", "lisbon"), "dates", {"text": "the Lisbon trip is 10 to 17 May"})
        yield running


def test_the_transcript_shows_tool_calls_results_and_usage(page: Any, stack: LocalStack, tmp_path: Path) -> None:
    open_console(page, stack, "alice")
    assert page.locator("#who").inner_text() == "signed in as alice"
    page.get_by_role("link", name="Weekend in Paris").click()
    page.wait_for_selector("article.msg")
    messages = page.locator("article.msg")
    assert messages.count() == 4
    call_part = messages.nth(1).locator(".part.call")
    assert call_part.locator(".label .kind").inner_text().lower() == "tool call"
    assert call_part.locator(".label .name").inner_text() == " · get_weather"  # the tool's name as written
    assert json.loads(call_part.locator("pre").inner_text()) == {"city": "Paris"}
    assert "18 °C, sunny" in messages.nth(2).locator(".part.result").inner_text()
    assert "in 150 · out 11" in messages.nth(3).inner_text()
    page.screenshot(path=str(shots(tmp_path) / "transcript.png"), full_page=True)
    page.get_by_role("tab", name="State").click()
    page.wait_for_selector("pre[aria-label=State]")
    assert json.loads(page.locator("pre[aria-label=State]").inner_text()) == {"city": "Paris", "booked": False}
    assert "version 1" in page.locator("h2").first.inner_text()
    page.get_by_label("Records of kind").fill("notes")
    page.get_by_role("button", name="Show").click()
    page.wait_for_selector("pre[aria-label=Records]")
    assert json.loads(page.locator("pre[aria-label=Records]").inner_text()) == [{"note": "window seat"}]
    page.get_by_role("tab", name="Artifacts").click()
    page.wait_for_selector("table[aria-label=Artifacts]")
    assert "itinerary.md" in page.locator("table[aria-label=Artifacts]").inner_text()
    with page.expect_download() as download:
        page.get_by_role("button", name="Download v1").click()
    assert Path(download.value.path()).read_bytes() == b"# Day 1\nLouvre"


def test_the_timeline_shows_the_run_and_a_spans_attributes(page: Any, stack: LocalStack, tmp_path: Path) -> None:
    open_console(page, stack, "alice", "/s/paris/traces")
    expect(page.locator("section.run")).to_have_count(3)
    runs = page.locator("section.run")
    assert runs.count() == 3  # the latest run first: events with durations and no times, one after the other
    assert runs.nth(1).locator("h2").inner_text().endswith("1 span · 250.0 ms")
    untimed = runs.nth(0).locator(".span-row")
    assert [untimed.nth(i).get_attribute("aria-label") for i in range(2)] == ["llm_call, 812.0 ms", "tool, 40.0 ms"]
    assert runs.nth(1).locator(".span-row").get_attribute("aria-label") == "invoke_agent otel, 250.0 ms"
    assert "Run run-1" in runs.nth(2).locator("h2").inner_text()
    rows = runs.nth(2).locator(".span-row")
    assert rows.count() == 4
    assert rows.nth(0).get_attribute("aria-label") == "invoke_agent travel, 1800.0 ms"
    assert rows.nth(3).get_attribute("aria-label").endswith(", error")
    widths = [rows.nth(i).locator(".span-bar").evaluate("b => b.getBoundingClientRect().width") for i in range(4)]
    assert widths[0] > widths[1] > widths[2] > 0  # 1.8 s, 0.65 s, 0.4 s on one axis
    rows.nth(1).focus()
    page.keyboard.press("Enter")  # keyboard works as well as a click
    attrs = page.locator("table[aria-label='Span attributes']")
    assert "gen_ai.usage.input_tokens" in attrs.inner_text() and "120" in attrs.inner_text()
    page.screenshot(path=str(shots(tmp_path) / "timeline.png"), full_page=True)
    page.get_by_role("link", name="The message it produced (#2)").click()
    page.wait_for_selector("#m-2")


def test_search_finds_a_session_and_filters_narrow_the_list(page: Any, stack: LocalStack) -> None:
    open_console(page, stack, "alice")
    assert page.locator("table[aria-label=Sessions] tbody tr").count() == 2
    assert "2 sessions · 254 messages" in page.locator("#totals").inner_text()
    page.get_by_label("Metadata").fill("team=a")
    page.get_by_role("button", name="Apply").click()
    expect(page.locator("table[aria-label=Sessions] tbody tr")).to_have_count(1)
    page.get_by_label("Metadata").fill("")
    tomorrow = (datetime.date.today() + datetime.timedelta(days=1)).isoformat()
    page.get_by_label("Created after").fill(tomorrow)  # the created range goes to the API's list
    page.get_by_role("button", name="Apply").click()
    expect(page.locator("#totals")).to_have_text("No sessions yet.")
    page.get_by_label("Created after").fill((datetime.date.today() - datetime.timedelta(days=1)).isoformat())
    page.get_by_role("button", name="Apply").click()
    expect(page.locator("table[aria-label=Sessions] tbody tr")).to_have_count(2)
    page.get_by_label("Search").fill("itinerary")
    page.get_by_label("Search").press("Enter")
    page.wait_for_selector("table[aria-label='Search results']")
    results = page.locator("table[aria-label='Search results']")
    assert "Weekend in Paris" in results.inner_text() and "message #1" in results.inner_text()
    assert "Searched 2 sessions" in page.locator(".totals").inner_text()
    for field in page.locator("input").all():  # every field has a label
        assert field.evaluate("f => f.labels.length") > 0


def test_another_owners_session_is_not_reachable(page: Any, stack: LocalStack) -> None:
    open_console(page, stack, "alice", "/s/bobs-secret")
    page.wait_for_selector("h1:text('Session not found')")
    open_console(page, stack, "bob")
    assert page.locator("table[aria-label=Sessions] tbody").inner_text().count("Bob's plans") == 1
    assert "Weekend in Paris" not in page.content()


def test_a_long_transcript_loads_older_pages_on_scroll_and_new_messages_live(page: Any, stack: LocalStack) -> None:
    open_console(page, stack, "alice", "/s/long")
    page.wait_for_selector("#m-250")
    assert page.locator("article.msg").count() == 100  # only the newest page is rendered at first
    page.locator(".sentinel").scroll_into_view_if_needed()
    page.wait_for_selector("#m-150")
    assert page.locator("article.msg").count() == 200
    SessionStore(backend=HttpBackend(stack.api_url, stack.token("alice"))).append_messages(
        "long", [{"role": "assistant", "content": "a live one"}]
    )
    page.wait_for_selector("#m-251", timeout=10_000)
    assert page.locator("#m-251 .text").inner_text() == "a live one"


def test_sign_in_with_a_pasted_token(page: Any, stack: LocalStack) -> None:
    page.goto(f"{stack.api_url}/console/")
    page.wait_for_selector("form.signin")
    page.get_by_label("Token").fill(stack.token("alice"))
    page.get_by_role("button", name="Use this token").click()
    page.wait_for_selector("table[aria-label=Sessions] tbody tr")
    started = time.monotonic()
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_selector("form.signin")
    assert time.monotonic() - started < 10


def test_the_api_function_serves_the_console_with_a_strict_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    moved = call("GET", "/console", owner=None)
    assert moved.status == 302 and {k.lower(): v for k, v in moved.headers.items()}["location"] == "console/"
    index = call("GET", "/console/", owner=None)
    assert index.status == 200 and b'<script src="console.js" defer></script>' in index.body
    assert "script-src 'self'" in {k.lower(): v for k, v in index.headers.items()}["content-security-policy"]
    assert call("GET", "/console/console.js", owner=None).headers["content-type"].startswith("text/javascript")
    assert call("GET", "/console/secrets.txt", owner=None).status == 404
    assert call("GET", "/console/config.json", owner=None).json() == {"oidc": None}
    monkeypatch.setenv("CONSOLE_CLIENT_ID", "abc")
    monkeypatch.setenv("CONSOLE_AUTHORIZE_URL", "https://idp.example/oauth2/authorize")
    monkeypatch.setenv("CONSOLE_TOKEN_URL", "https://idp.example/oauth2/token")
    assert console_routes.sign_in_settings() == {
        "oidc": {
            "client_id": "abc",
            "authorize_url": "https://idp.example/oauth2/authorize",
            "token_url": "https://idp.example/oauth2/token",
            "scope": "openid",
        }
    }
    policy = {k.lower(): v for k, v in call("GET", "/console/", owner=None).headers.items()}["content-security-policy"]
    assert "connect-src 'self' https://idp.example;" in policy and "form-action 'self';" in policy
    monkeypatch.setenv("CONSOLE_TOKEN_URL", "http://plain.example/token")  # never a token over plain HTTP
    assert console_routes.sign_in_settings() == {"oidc": None}
    monkeypatch.setenv("CONSOLE_TOKEN_URL", "https://idp.example/token; script-src *")  # nothing to widen it with
    assert console_routes.sign_in_settings() == {"oidc": None}


def test_the_policy_allows_exactly_this_origin() -> None:
    """`connect-src 'self' https:` let the page talk to any https host: now exactly this origin, and the
    configured issuer's token endpoint when there is one (above); forms post only here."""
    policy = {k.lower(): v for k, v in call("GET", "/console/", owner=None).headers.items()}["content-security-policy"]
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert directives["connect-src"] == "'self'" and directives["form-action"] == "'self'"
    assert "https:" not in policy


def test_sign_in_with_the_stacks_oidc_issuer_using_pkce(
    browser: Any, stack: LocalStack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stand-in issuer on HTTPS: its authorize endpoint sends the code back, its token endpoint gives a token
    only for the verifier whose S256 challenge the console sent."""
    import base64
    import hashlib
    import ssl
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from urllib.parse import parse_qs, urlencode, urlsplit

    cert, key = self_signed(tmp_path)
    seen: dict[str, str] = {}

    class Issuer(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            return None

        def do_GET(self) -> None:
            query = {k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()}
            seen.update(query)
            assert query["code_challenge_method"] == "S256" and query["response_type"] == "code"
            self.send_response(302)
            self.send_header(
                "Location", f"{query['redirect_uri']}?{urlencode({'code': 'c0de', 'state': query['state']})}"
            )
            self.end_headers()

        def do_POST(self) -> None:
            form = {k: v[0] for k, v in parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode()).items()}
            digest = hashlib.sha256(form["code_verifier"].encode()).digest()
            good = base64.urlsafe_b64encode(digest).rstrip(b"=").decode() == seen["code_challenge"]
            good = good and form["code"] == "c0de" and form["grant_type"] == "authorization_code"
            body = json.dumps({"access_token": stack.token("oidc-user")} if good else {"error": "invalid_grant"})
            self.send_response(200 if good else 400)
            self.send_header("Content-Type", "application/json")
            self.send_header("Access-Control-Allow-Origin", "*")
            self.end_headers()
            self.wfile.write(body.encode())

    server = ThreadingHTTPServer(("127.0.0.1", 0), Issuer)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    server.socket = tls.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    issuer = f"https://127.0.0.1:{server.server_address[1]}"
    monkeypatch.setenv("CONSOLE_CLIENT_ID", "console-client")
    monkeypatch.setenv("CONSOLE_AUTHORIZE_URL", f"{issuer}/authorize")
    monkeypatch.setenv("CONSOLE_TOKEN_URL", f"{issuer}/token")
    context = browser.new_context(ignore_https_errors=True)  # the stand-in's certificate is self-signed
    try:
        page = context.new_page()
        page.goto(f"{stack.api_url}/console/")
        page.get_by_role("button", name="Sign in with your identity provider").click()
        expect(page.locator("#who")).to_have_text("signed in as oidc-user")
        page.wait_for_selector("#totals:text('No sessions yet.')")
        assert seen["client_id"] == "console-client" and seen["redirect_uri"] == f"{stack.api_url}/console/"
        assert "code=" not in page.url  # the code is not left in the address bar
    finally:
        context.close()
        server.shutdown()


def self_signed(directory: Path) -> tuple[str, str]:
    """A certificate and key for 127.0.0.1, valid for a day."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "issuer.pem", directory / "issuer.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return str(cert_path), str(key_path)


def test_the_token_is_in_no_url_the_browser_visits(page: Any, stack: LocalStack) -> None:
    """`make run`'s link carries a one-time code, traded for the token once: no URL the browser went to (so no
    history entry, no session restore) holds the token, the code leaves the address bar at once, and the
    link does not sign in twice."""
    token = stack.token("alice")
    link = stack.sign_in_link(token)
    visited: list[str] = []
    page.on("framenavigated", lambda frame: visited.append(frame.url))
    page.on("request", lambda request: visited.append(request.url))
    page.goto(link)
    expect(page.locator("#who")).to_have_text("signed in as alice")
    assert token not in " ".join(visited) and "sign-in=" not in page.url
    assert page.evaluate("location.hash") in ("#/", "")
    again = page.context.new_page()
    again.goto(link)  # the same link, later: spent
    again.wait_for_selector("form.signin")
    expect(again.locator("[role=alert], .error").first).to_contain_text("used already or has expired")
    again.close()


def test_a_token_in_the_fragment_signs_nobody_in(page: Any, stack: LocalStack) -> None:
    """`#token=` was read on every hash change: a link anywhere could sign the viewer in as someone else."""
    page.goto(f"{stack.api_url}/console/#token={stack.token('bob')}")
    page.wait_for_selector("form.signin")
    open_console(page, stack, "alice")
    page.evaluate(f"location.hash = '#/s/paris/transcript?seq=1&token={stack.token('bob')}'")
    page.wait_for_selector("article.msg")
    expect(page.locator("#who")).to_have_text("signed in as alice")


def test_a_stored_link_cannot_switch_who_is_signed_in(page: Any, stack: LocalStack) -> None:
    """A span whose `message.seq` is `1&token=<bob's token>`: the waterfall makes no link of a value that is
    not a sequence number, encodes what it puts into a URL, and following any link keeps alice signed in."""
    alice = SessionStore(backend=HttpBackend(stack.api_url, stack.token("alice")))
    alice.create_session("alice", session_id="linked")
    hostile = f"1&token={stack.token('bob')}"
    alice.append_trace_events(
        "linked",
        "r",
        [{"name": "evil", "span_id": "a", "start": 1.0, "end": 2.0, "attributes": {"message.seq": hostile}}],
    )
    alice.append_trace_events(
        "linked", "s", [{"name": "fine", "span_id": "b", "start": 1.0, "end": 2.0, "attributes": {"message.seq": 1}}]
    )
    alice.append_messages("linked", [{"role": "user", "content": "first"}])
    open_console(page, stack, "alice", "/s/linked/traces")
    page.get_by_text("evil").first.click()
    expect(page.get_by_role("heading", name="evil")).to_be_visible()  # its attributes are shown: no link
    assert hostile in page.content() or "1&amp;token=" in page.content()
    expect(page.get_by_role("link", name="The message it produced (#1)")).to_have_count(0)
    page.get_by_text("fine").first.click()
    link = page.get_by_role("link", name="The message it produced (#1)")
    assert link.get_attribute("href") == "#/s/linked/transcript?seq=1"
    link.click()
    page.wait_for_selector("article.msg")
    expect(page.locator("#who")).to_have_text("signed in as alice")


def test_fork_from_here_opens_the_fork_linked_to_its_source(page: Any, stack: LocalStack, tmp_path: Path) -> None:
    carol = SessionStore(backend=HttpBackend(stack.api_url, stack.token("carol")))
    carol.create_session("carol", session_id="plan", title="Plan a trip")
    carol.append_messages("plan", TURN)
    open_console(page, stack, "carol", "/s/plan")
    page.wait_for_selector("article#m-4")
    page.locator("article#m-2").get_by_role("button", name="Fork from here").click()
    confirm = page.get_by_role("group", name="Confirm the fork")
    expect(confirm).to_contain_text("A new session holding messages 1 to 2?")
    confirm.get_by_role("button", name="Cancel").click()  # one click made nothing
    assert [s.id for s in carol.list_sessions("carol").items] == ["plan"]
    page.locator("article#m-2").get_by_role("button", name="Fork from here").click()
    page.get_by_role("group", name="Confirm the fork").get_by_role("button", name="Fork").click()
    expect(page.locator("p.source")).to_contain_text("Forked from plan at message #2")
    expect(page.locator("article.msg")).to_have_count(2)
    fork_id = page.evaluate("decodeURIComponent(location.hash.split('/')[2])")
    fork = carol.get_session(fork_id)
    assert fork is not None and fork.metadata["forked_from"] == {"session_id": "plan", "seq": 2}
    assert [m.content for m in carol.list_messages(fork_id).items] == [TURN[0]["content"], None]
    assert carol.list_messages("plan").items[-1].seq == 4, "the source is as it was"
    page.screenshot(path=str(shots(tmp_path) / "fork.png"), full_page=True)
    page.locator("p.source").get_by_role("link", name="plan").click()  # back to the source, at that message
    page.wait_for_selector("article#m-4")
    assert page.locator("h1").inner_text() == "Plan a trip"
    # a rewind's branch is listed under the session, readable, and restored with one click
    carol.rewind_session("plan", 1, branch="first-try")
    page.reload()
    expect(page.locator("p.branches")).to_contain_text("first-try (after #1: 3 messages of its own)")
    page.locator("p.branches").get_by_role("link", name="first-try").click()
    expect(page.locator("article.msg")).to_have_count(4)
    page.get_by_role("button", name="Restore this branch").click()
    page.wait_for_selector("article#m-4")
    assert carol.get_session("plan").last_seq == 4


def test_the_list_counts_in_words_and_marks_forks_and_a_session_page_asks_for_nothing_absent(
    page: Any, stack: LocalStack, tmp_path: Path
) -> None:
    """ "1 session · 1 message", a fork marked in the list with its source, and a session page (every tab)
    whose requests all succeed: nothing absent is asked for (its state, interrupt and checkpoint come in one
    overview, null when absent), so the browser's console shows no error."""
    dave = SessionStore(backend=HttpBackend(stack.api_url, stack.token("dave")))
    dave.create_session("dave", session_id="solo", title="Alone")
    dave.append_messages("solo", [{"role": "user", "content": "hi", "usage": {"input_tokens": 5, "output_tokens": 2}}])
    failures: list[str] = []
    page.on("response", lambda r: failures.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.on("console", lambda m: failures.append(m.text) if m.type == "error" else None)
    open_console(page, stack, "dave")
    expect(page.locator("#totals")).to_have_text("1 session · 1 message · 7 tokens")
    dave.fork_session("solo", new_session_id="solo-again")
    open_console(page, stack, "dave")
    expect(page.locator("#totals")).to_have_text("2 sessions · 2 messages · 14 tokens")
    expect(page.locator("tr", has_text="solo-again").locator(".fork-of")).to_have_text("fork of solo @ #1")
    page.screenshot(path=str(shots(tmp_path) / "list.png"), full_page=True)
    for tab in ("transcript", "state", "artifacts", "traces"):
        open_console(page, stack, "dave", f"/s/solo/{tab}")
        page.wait_for_selector("[role=tabpanel] > *")
        page.wait_for_load_state("networkidle")
    assert "1 message ·" in page.locator("p.meta").first.inner_text()
    assert failures == []


def test_a_fork_still_copying_shows_its_progress_then_opens(page: Any, stack: LocalStack, tmp_path: Path) -> None:
    """A long fork's page shows how far its copy got (no error, no request its transcript would refuse), and
    opens on its transcript by itself once the copy job is done."""
    from functions.cascade.app import copy_handler
    from infra.local.apigw import LambdaContext
    from infra.local.aws import local_client
    from infra.local.stack import lambda_stream_record
    from tests.streams import stream_records

    carol = SessionStore(backend=HttpBackend(stack.api_url, stack.token("carol")))
    carol.create_session("carol", session_id="carols-long")
    count = carol.settings.fork_inline_messages + 20
    for start in range(0, count, 97):
        carol.append_messages(
            "carols-long", [{"role": "user", "content": f"line {i + 1}"} for i in range(start, min(count, start + 97))]
        )
    carol.fork_session("carols-long", new_session_id="carols-fork")
    refused: list[str] = []
    page.on("response", lambda r: refused.append(r.url) if r.status >= 400 else None)
    open_console(page, stack, "carol", "/s/carols-fork")
    panel = page.locator("[aria-label=Copying]")
    expect(panel).to_contain_text(f"being copied: 0 of {count} messages")
    page.screenshot(path=str(shots(tmp_path) / "copying.png"), full_page=True)
    assert refused == [] and page.locator("#status").inner_text() == ""
    # the copy function takes the fork's record (the stack here runs no stream functions of its own)
    records = stream_records(stack.dynamodb, stack.tables.sessions, local_client("dynamodbstreams", stack.aws_endpoint))
    with stack.invoke:
        for record in records:
            copy_handler({"Records": [lambda_stream_record(record)]}, LambdaContext(function_name="copy"))
    page.wait_for_selector(f"#m-{count}", timeout=15_000)
    assert refused == []


def test_the_memory_tab_lists_namespaces_and_recalls_by_meaning_with_scores(
    page: Any, stack: LocalStack, tmp_path: Path
) -> None:
    """What alice's agents remembered: her namespaces, a namespace's memories, and a search by meaning that
    ranks the window seat first for a question about planes (the local stack's embedder), scored;
    nothing of bob's; every request answered below 400."""
    failures: list[str] = []
    page.on("response", lambda r: failures.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    open_console(page, stack, "alice")
    page.get_by_role("link", name="Memory").click()
    page.wait_for_selector("table[aria-label=Memories] tbody tr")
    names = page.locator("ul[aria-label=Namespaces]").inner_text()
    assert "preferences" in names and "projects / lisbon" in names and "secrets" not in names
    assert page.locator("table[aria-label=Memories] tbody tr").count() == 3
    page.get_by_label("Recall").fill("where do I like to sit on a plane?")
    page.get_by_role("button", name="Search memories").click()
    page.wait_for_selector("table[aria-label='Memory search results'] tbody tr")
    best = page.locator("table[aria-label='Memory search results'] tbody tr").first.inner_text()
    assert "window seat" in best and re.match(r"0\.\d{3}", best.strip())
    expect(page.get_by_text("Searched by words and meaning.")).to_be_visible()  # auto, with an embedder: hybrid
    assert "aisle" not in page.content()
    page.screenshot(path=str(shots(tmp_path) / "memory.png"), full_page=True)
    page.get_by_role("link", name="projects / lisbon").first.click()
    expect(page.locator("h1")).to_have_text("Memory · projects / lisbon")
    expect(page.locator("table[aria-label=Memories] tbody tr")).to_have_count(1)
    assert failures == []


def test_extracted_memories_show_their_runs_source_messages_and_history(
    page: Any, stack: LocalStack, tmp_path: Path
) -> None:
    """A session's Memory tab lists the extraction runs that read it (what each wrote, linked); a memory they
    wrote shows where it came from, its source messages and, once superseded, its earlier text."""
    from tests.extraction_support import Scripted, decisions, memories

    erin = SessionStore(backend=HttpBackend(stack.api_url, stack.token("erin")))
    erin.create_session("erin", session_id="trip")
    erin.append_messages(
        "trip", [{"role": "user", "content": "I fly to Lisbon on 10 May."}, {"role": "assistant", "content": "Noted."}]
    )
    erin.extract_memories(
        "trip",
        strategies=["facts"],
        model=Scripted({"record_facts": [memories("The user flies to Lisbon on 10 May.")]}),
    )
    (old,) = erin.search_memories("erin", ("facts",)).items
    erin.append_messages("trip", [{"role": "user", "content": "Change of plan: 12 May."}])
    moved = Scripted(
        {
            "record_facts": [memories("The user flies to Lisbon on 12 May.", evidence=[3])],
            "consolidate_memories": [decisions((0, "supersede", old.key, "The user flies to Lisbon on 12 May."))],
        }
    )
    erin.extract_memories("trip", strategies=["facts"], model=moved)
    failures: list[str] = []
    page.on("response", lambda r: failures.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    open_console(page, stack, "erin", "/s/trip/memory")
    rows = page.locator("table[aria-label='Memory runs'] tbody tr")
    expect(rows).to_have_count(2)
    assert "supersede" in rows.first.inner_text() and "#3–#3" in rows.first.inner_text()
    assert "add" in rows.nth(1).inner_text() and "scripted-model" in rows.nth(1).inner_text()
    page.screenshot(path=str(shots(tmp_path) / "memory-runs.png"), full_page=True)
    rows.first.get_by_role("link", name="facts").click()
    memory = page.locator("table[aria-label=Memories] tbody tr").first
    expect(memory).to_contain_text("The user flies to Lisbon on 12 May.")
    expect(memory.locator(".provenance")).to_contain_text("From trip · messages 3 · facts · scripted-model")
    memory.get_by_text("Source messages and history").click()
    expect(memory.locator("ul[aria-label='Source messages']")).to_contain_text("#3 user: Change of plan: 12 May.")
    expect(memory.locator("ul[aria-label=History]")).to_contain_text("The user flies to Lisbon on 10 May.")
    page.screenshot(path=str(shots(tmp_path) / "memory-provenance.png"), full_page=True)
    # the owner corrects it (the old text goes to its history), then deletes it; and switches extraction off
    memory.get_by_role("button", name="Correct").click()
    memory.get_by_label("Corrected text").fill("The user flies to Lisbon on 14 May.")
    memory.get_by_role("button", name="Save").click()
    expect(page.locator("#status")).to_have_text("Corrected: the earlier text is in its history.")
    memory = page.locator("table[aria-label=Memories] tbody tr").first
    expect(memory).to_contain_text("The user flies to Lisbon on 14 May.")
    stored = erin.get_memory("erin", ("facts",), old.key)
    assert stored is not None and [h["change"] for h in stored.value["history"]] == ["corrected", "supersede"]
    memory.get_by_text("Source messages and history").click()
    expect(memory.locator("ul[aria-label=History]")).to_contain_text("Was (corrected")
    page.screenshot(path=str(shots(tmp_path) / "memory-corrected.png"), full_page=True)
    memory.get_by_role("button", name="Delete").click()
    page.get_by_role("group", name="Confirm the delete").get_by_role("button", name="Delete").click()
    expect(page.locator("table[aria-label=Memories] tbody")).to_contain_text("No memories here.")
    assert erin.get_memory("erin", ("facts",), old.key) is None
    choice = page.get_by_label("Memory extraction")
    expect(choice).to_contain_text("Memory extraction is on")
    choice.get_by_role("button", name="Switch extraction off").click()
    expect(page.get_by_label("Memory extraction")).to_contain_text("Memory extraction is off")
    assert erin.get_extraction("erin").enabled is False
    expect(page.locator("#status")).to_have_text("")
    page.screenshot(path=str(shots(tmp_path) / "memory-extraction-off.png"), full_page=True)
    assert erin.forget_owner("erin") is True  # the runs' history goes too: how far each strategy read stays
    page.evaluate("location.hash = '#/s/trip/memory'")
    rows = page.locator("table[aria-label='Memory runs'] tbody tr")
    expect(rows).to_have_count(1)
    assert "forgotten" in rows.first.inner_text() and "scripted-model" not in rows.first.inner_text()
    assert failures == []


def test_the_context_tab_shows_what_the_model_sees_and_the_budgets_use(
    page: Any, stack: LocalStack, tmp_path: Path
) -> None:
    """A session's Context tab: what the model sees for its next turn, part by part (recalled, recent), each with
    where it comes from and its tokens, and how much of the budget it uses; a smaller budget asked for holds
    less; every request answered below 400."""
    from functions.runtime import store as api_store
    from store.core.scoped_ids import scoped_id

    failures: list[str] = []
    page.on("response", lambda r: failures.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    alice = SessionStore(backend=HttpBackend(stack.api_url, stack.token("alice")))
    alice.create_session("alice", session_id="mia", title="Dinner plans")
    alice.append_messages("mia", [{"role": "user", "content": "My daughter Mia is allergic to peanuts."}])
    alice.append_messages("mia", [{"role": "user", "content": f"Weather note {i}, nothing more."} for i in range(60)])
    alice.append_messages("mia", [{"role": "user", "content": "Which restaurants suit Mia's allergy?"}])
    with stack.invoke:  # what the stack's cascade does after the writes (it is off in this module)
        api_store().index_messages(scoped_id("alice", "mia"))
    open_console(page, stack, "alice", "/s/mia/context")
    page.wait_for_selector("table[aria-label='What the model sees'] tbody tr")
    rows = page.locator("table[aria-label='What the model sees'] tbody tr")
    shown = [rows.nth(i).inner_text() for i in range(rows.count())]
    assert any(r.startswith("recalled\t#1\tuser") and "allergic to peanuts" in r for r in shown)
    assert (
        rows.last.inner_text().startswith("recent")
        and "Which restaurants suit Mia's allergy?" in rows.last.inner_text()
    )
    budget = page.get_by_label("Budget", exact=True).inner_text()
    assert re.fullmatch(r"[\d,]+ of 2,000 tokens \(\d+%\) for “Which restaurants suit Mia's allergy\?”", budget)
    share = int(re.findall(r"\((\d+)%\)", budget)[0])
    meter, fill = page.get_by_role("meter").bounding_box(), page.locator("[role=meter] span").bounding_box()
    assert meter is not None and fill is not None
    assert abs(fill["width"] / meter["width"] - share / 100) < 0.02  # the bar shows the share, not a full bar
    page.screenshot(path=str(shots(tmp_path) / "context.png"), full_page=True)
    page.get_by_label("Budget in tokens").fill("120")
    page.get_by_role("button", name="Assemble").click()
    expect(page.get_by_label("Budget", exact=True)).to_contain_text("of 120 tokens")
    assert rows.count() < 12
    assert failures == []
