"""`agent-store`: the operator's commands on the memory backend and on DynamoDB (moto), each seen as one
owner exactly as the API presents it; over HTTP in tests/api/test_cli_over_http.py."""

from __future__ import annotations

import io
import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from store import SessionStore
from store.backends.scoped import ScopedBackend
from store.tools.cli import main
from tests.conftest import FakeClock, Harness, make_harness

TOOL_TURN: list[dict[str, Any]] = [
    {"role": "user", "content": "what is the weather in Paris?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "18 C and sunny"},
    {
        "role": "assistant",
        "content": "It is 18 C and sunny in Paris.",
        "usage": {"input_tokens": 40, "output_tokens": 9},
    },
]
SPANS = [
    {"name": "invoke_agent", "span_id": "a", "start": 100.0, "end": 101.5},
    {"name": "chat gpt-x", "span_id": "b", "parent_id": "a", "start": 100.1, "end": 100.9, "input_tokens": 40},
    {"name": "execute_tool get_weather", "span_id": "c", "parent_id": "a", "start": 100.9, "end": 101.2, "error": True},
]


@pytest.fixture(params=["memory", "dynamodb"])
def h(request: pytest.FixtureRequest, clock: FakeClock) -> Harness:
    if request.param == "memory":
        return make_harness("memory", clock)
    client, s3 = request.getfixturevalue("dynamodb_client"), request.getfixturevalue("s3_client")
    return make_harness("dynamodb", clock, client, request.getfixturevalue("inspector_client"), s3)


def as_owner(store: SessionStore, owner: str) -> SessionStore:
    """The store as the API shows it to `owner` (ids as the owner names them)."""
    return SessionStore(backend=ScopedBackend(store.backend, owner), settings=store.settings)


def run(store: SessionStore, *argv: str, owner: str = "alice") -> tuple[int, str]:
    out = io.StringIO()
    code = main([*argv, "--owner", owner], store=store, out=out)
    return code, out.getvalue()


def seed(store: SessionStore) -> SessionStore:
    alice = as_owner(store, "alice")
    alice.create_session("alice", session_id="chat-1", title="Weather in Paris", model="gpt-x")
    alice.append_messages("chat-1", TOOL_TURN)
    alice.save_state("chat-1", {"city": "Paris", "step": 3})
    alice.save_interrupt("chat-1", {"question": "book a table?"})
    alice.save_records("chat-1", "notes", [{"n": 1}, {"n": 2}])
    alice.put_artifact("chat-1", "report.txt", b"first", content_type="text/plain")
    alice.put_artifact("chat-1", "report.txt", b"second version", content_type="text/plain", metadata={"k": "v"})
    alice.append_trace_events("chat-1", "run-1", SPANS)
    return alice


def test_list_and_show_name_sessions_as_their_owner_does(h: Harness, capsys: pytest.CaptureFixture[str]) -> None:
    seed(h.store)
    as_owner(h.store, "bob").create_session("bob", session_id="bobs", title="not alice's")
    code, out = run(h.store, "sessions", "list")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["ID", "TITLE", "MESSAGES", "TOKENS", "UPDATED"]
    assert lines[2].startswith("chat-1") and "Weather in Paris" in lines[2] and "bobs" not in out
    code, out = run(h.store, "sessions", "list", "--json")
    assert code == 0 and [s["id"] for s in json.loads(out)["items"]] == ["chat-1"]
    code, out = run(h.store, "sessions", "show", "chat-1")
    assert code == 0
    assert 'tool call: get_weather({"city": "Paris"})' in out  # the call with its arguments
    assert "tool result: 18 C and sunny" in out
    assert "#4 assistant  (input_tokens 40, output_tokens 9, total_tokens 49)" in out  # the total derived
    assert "state (version 1, as of message 4)" in out and "interrupt pending" in out
    assert "report.txt  2" in out and "trace runs: run-1" in out
    # another owner's session is absent, said in one line
    code, out = run(h.store, "sessions", "show", "chat-1", owner="bob")
    assert code == 1 and out == ""
    assert capsys.readouterr().err.strip().splitlines() == ["agent-store: session 'chat-1' not found"]


def test_export_then_import_moves_a_session_whole_and_twice_writes_nothing(h: Harness, tmp_path: Path) -> None:
    alice = seed(h.store)
    dump = tmp_path / "chat-1.jsonl"
    assert run(h.store, "sessions", "export", "chat-1", "-o", str(dump), "--records", "notes", "-q")[0] == 0
    kinds = [json.loads(line)["type"] for line in dump.read_text().splitlines()]
    assert kinds == ["session"] + ["message"] * 4 + ["state", "interrupt", "records", "artifact", "artifact", "trace"]
    target = SessionStore.memory()
    code, out = run(target, "sessions", "import", str(dump), "-q", owner="carol")
    assert code == 0 and "written: 1 session, 4 messages" in out
    carol = as_owner(target, "carol")
    copied, original = carol.load_full("chat-1"), alice.load_full("chat-1")
    strip = {"created_at", "session_id"}
    assert [m.model_dump(exclude=strip) for m in copied.messages] == [
        m.model_dump(exclude=strip) for m in original.messages
    ]
    assert copied.state is not None and copied.state.state == {"city": "Paris", "step": 3}
    assert copied.session.title == "Weather in Paris" and copied.session.usage == original.session.usage
    assert carol.load_interrupt("chat-1") == {"question": "book a table?"}
    assert carol.load_records("chat-1", "notes") == [{"n": 1}, {"n": 2}]
    versions = carol.list_artifact_versions("chat-1", "report.txt")
    assert [v.size for v in versions] == [5, 14] and versions[1].metadata == {"k": "v"}
    assert carol.get_artifact("chat-1", "report.txt", version=1) == b"first"
    assert carol.load_trace_events("chat-1", "run-1") == SPANS
    # again: nothing new is written
    code, out = run(target, "sessions", "import", str(dump), "-q", "--json", owner="carol")
    assert code == 0 and json.loads(out)["written"] == {}
    assert len(carol.load_full("chat-1").messages) == 4
    assert len(carol.list_artifact_versions("chat-1", "report.txt")) == 2


def test_an_import_cut_short_is_finished_by_running_it_again(h: Harness, tmp_path: Path) -> None:
    alice = as_owner(h.store, "alice")
    alice.create_session("alice", session_id="long")
    for i in range(3):
        alice.append_messages("long", [{"role": "user", "content": f"m{j}"} for j in range(i * 60, i * 60 + 60)])
    full = tmp_path / "long.jsonl"
    assert run(h.store, "sessions", "export", "long", "-o", str(full), "-q")[0] == 0
    lines = full.read_text().splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:131]))  # the session line and 130 messages: two batches of 50, 30 pending
    target = SessionStore.memory()
    assert run(target, "sessions", "import", str(cut), "-q", owner="alice")[0] == 0
    assert len(as_owner(target, "alice").list_messages("long", limit=1000).items) == 130  # what the cut file held
    code, out = run(target, "sessions", "import", str(full), "-q", "--json", owner="alice")
    assert code == 0 and json.loads(out)["written"] == {"messages": 50}
    texts = [m.content for m in as_owner(target, "alice").list_messages("long", limit=1000).items]
    assert texts == [f"m{j}" for j in range(180)]


def test_a_bad_export_is_refused_in_one_line_and_writes_nothing(
    h: Harness, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "message", "message": {}}\n')
    assert run(h.store, "sessions", "import", str(bad), "-q")[0] == 1
    assert capsys.readouterr().err == (
        "agent-store: line 1: an export starts with its session line (format 'agent-session-store/export')\n"
    )
    bad.write_text("not json\n")
    assert run(h.store, "sessions", "import", str(bad), "-q")[0] == 1
    assert "line 1 is not JSON" in capsys.readouterr().err
    assert run(h.store, "sessions", "import", str(tmp_path / "missing.jsonl"))[0] == 1
    assert "cannot read" in capsys.readouterr().err
    assert h.store.list_sessions("alice").items == []


def test_tail_follows_new_messages(h: Harness) -> None:
    alice = as_owner(h.store, "alice")
    alice.create_session("alice", session_id="live")
    alice.append_messages("live", [{"role": "user", "content": f"old {i}"} for i in range(5)])

    def writer() -> None:
        time.sleep(0.5)
        alice.append_messages("live", [{"role": "assistant", "content": "new one"}])

    thread = threading.Thread(target=writer)
    thread.start()
    code, out = run(h.store, "messages", "tail", "live", "-n", "2", "--follow", "--interval", "0.2", "--for", "1.5")
    thread.join()
    assert code == 0
    assert out.splitlines() == ["#4 user", "    old 3", "#5 user", "    old 4", "#6 assistant", "    new one"]


def test_traces_show_draws_the_run_as_a_waterfall(h: Harness) -> None:
    seed(h.store)
    code, out = run(h.store, "traces", "show", "chat-1", "--width", "30")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "run run-1: 3 events over 1500.0 ms"
    assert lines[1].startswith("invoke_agent") and "1500.0 ms" in lines[1]
    assert lines[2].startswith("  chat gpt-x") and "800.0 ms" in lines[2] and "in 40" in lines[2]
    assert lines[3].startswith("  execute_tool get_weather") and lines[3].endswith("ERROR")
    bar = lines[2][lines[2].index("█") :]
    assert bar.startswith("█" * 16)  # 0.8 s of 1.5 s on a 30-character axis
    code, _ = run(h.store, "traces", "show", "chat-1", "nope")
    assert code == 1


def test_artifacts_get_and_delete(h: Harness, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seed(h.store)
    target = tmp_path / "report.txt"
    assert run(h.store, "artifacts", "get", "chat-1", "report.txt", "--version", "1", "-o", str(target))[0] == 0
    assert target.read_bytes() == b"first"
    assert run(h.store, "artifacts", "get", "chat-1", "report.txt", "-o", str(target))[0] == 1  # never overwrites
    capsys.readouterr()
    assert run(h.store, "sessions", "delete", "chat-1")[0] == 1  # no terminal to ask: --yes is needed
    assert "add --yes" in capsys.readouterr().err
    code, out = run(h.store, "sessions", "delete", "chat-1", "--yes")
    assert code == 0 and out == "deleted chat-1\n"
    assert as_owner(h.store, "alice").get_session("chat-1") is None


def test_errors_are_one_line_and_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    store = SessionStore.memory()
    assert main(["sessions", "list"], store=store) == 1  # no owner
    assert capsys.readouterr().err.startswith("agent-store: name the owner whose sessions to use")
    with pytest.raises(SystemExit) as exc:
        main(["sessions", "frobnicate"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.startswith("agent-store ")
    with pytest.raises(SystemExit):
        main(["sessions", "export", "--help"])
    assert "--records" in capsys.readouterr().out


HOSTILE = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b]0;pwned\x07\x1b[2J\x9b31m\u202etxt.exe\rOK"  # clipboard, title, clear, CSI


def test_stored_control_characters_never_reach_the_terminal(h: Harness) -> None:
    """Text an attacker put into a tool's output (or a title, a span name) is shown with its controls
    written visibly, in every command that prints what a session holds; JSON output stays equal."""
    alice = as_owner(h.store, "alice")
    alice.create_session("alice", session_id="evil", title=f"title {HOSTILE}")
    alice.append_messages("evil", [{"role": "tool", "tool_call_id": "c1", "content": f"result {HOSTILE}"}])
    alice.append_trace_events("evil", "run-1", [{"name": f"span {HOSTILE}", "start": 1.0, "end": 2.0}])
    raw = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]")
    outputs = {
        "list": run(h.store, "sessions", "list")[1],
        "show": run(h.store, "sessions", "show", "evil", "--full")[1],
        "tail": run(h.store, "messages", "tail", "evil", "-n", "1")[1],
        "traces": run(h.store, "traces", "show", "evil")[1],
        "json": run(h.store, "sessions", "show", "evil", "--json")[1],
    }
    for name, out in outputs.items():
        assert not raw.search(out), (name, out)
        assert "\\u001b]52;c;" in out or name == "list", (name, out)  # the list shortens the title
    assert "\\u001b]0;pwned" in outputs["list"]
    assert "\\u009b31m" in outputs["show"] and "\\u202etxt.exe\\u000dOK" in outputs["show"]
    shown = json.loads(outputs["json"])  # JSON's own escapes: the same text as stored
    assert shown["full"]["session"]["title"] == f"title {HOSTILE}"


def test_an_import_never_writes_into_another_owners_session(h: Harness, tmp_path: Path) -> None:
    """`import_session(store, "mallory", ...)` with an export naming bob's store id: refused, bob's session
    untouched (it appended into it and replaced its state before)."""
    from store import SessionExists
    from store.tools.export import export_session, import_session

    bob = h.store.create_session("bob", session_id="bobs-store-id")
    h.store.append_messages(bob.id, [{"role": "user", "content": "bob's"}], owner="bob")
    h.store.save_state(bob.id, {"bob": True}, owner="bob")
    forged = SessionStore.memory()
    forged.create_session("mallory", session_id="bobs-store-id")
    forged.append_messages("bobs-store-id", [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])
    forged.save_state("bobs-store-id", {"bob": False})
    buffer = io.StringIO()
    export_session(forged, "bobs-store-id", buffer)
    lines = buffer.getvalue().splitlines(keepends=True)
    before = h.snapshot()
    with pytest.raises(SessionExists):
        import_session(h.store, "mallory", lines)
    assert h.snapshot() == before
    assert [m.content for m in h.store.list_messages(bob.id, owner="bob").items] == ["bob's"]
    assert h.store.load_state(bob.id, owner="bob").state == {"bob": True}
    # the CLI on the tables, importing as alice into bob's stored id (--unscoped), is refused the same way
    dump = tmp_path / "forged.jsonl"
    dump.write_text("".join(lines))
    code, _ = run(h.store, "sessions", "import", str(dump), "-q", "--unscoped", owner="alice")
    assert code == 1 and h.snapshot() == before


def test_an_owners_tools_act_on_that_owners_sessions_only(h: Harness, capsys: pytest.CaptureFixture[str]) -> None:
    """--unscoped shows ids as stored, still as --owner: bob's session is absent to alice; acting across
    owners is the operator's --any-owner, named for what it does."""
    bob = h.store.create_session("bob", session_id="bobs-store-id", title="bob's")
    h.store.append_messages(bob.id, [{"role": "user", "content": "private"}], owner="bob")
    for command in (("sessions", "show", bob.id), ("sessions", "export", bob.id), ("messages", "tail", bob.id)):
        code, out = run(h.store, *command, "--unscoped", owner="alice")
        assert code == 1 and "private" not in out, command
    assert "not found" in capsys.readouterr().err
    code, out = run(h.store, "sessions", "delete", bob.id, "--yes", "--unscoped", owner="alice")
    assert code == 1 and h.store.get_session(bob.id, owner="bob") is not None
    code, out = run(h.store, "sessions", "show", bob.id, "--unscoped", owner="bob")  # bob's own, as stored
    assert code == 0 and "private" in out
    code, out = run(h.store, "sessions", "show", bob.id, "--any-owner", owner="alice")  # the operator, by name
    assert code == 0 and "private" in out


def test_an_import_line_nested_past_any_limit_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A line nested 100,000 deep crashed `sessions import` with a traceback: now one line, exit 1."""
    store = SessionStore.memory()
    bad = tmp_path / "deep.jsonl"
    bad.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    assert run(store, "sessions", "import", str(bad), "-q")[0] == 1
    err = capsys.readouterr().err
    assert err.startswith("agent-store: line 1 is nested deeper than") and err.count("\n") == 1
    assert store.list_sessions("alice").items == []


def test_fork_rewind_branches_and_restore(h: Harness) -> None:
    alice = as_owner(h.store, "alice")
    alice.create_session("alice", session_id="trip", title="Trip")
    alice.append_messages("trip", TOOL_TURN)
    code, out = run(h.store, "sessions", "fork", "trip", "--at", "2", "--id", "trip-b")
    assert code == 0 and out == "forked trip at message 2 into trip-b: 2 messages\n"
    assert [m.content for m in alice.list_messages("trip-b").items] == [TOOL_TURN[0]["content"], None]
    code, out = run(h.store, "sessions", "show", "trip-b")
    assert code == 0 and "forked from trip at message 2\n" in out
    code, out = run(h.store, "sessions", "rewind", "trip", "--to", "1", "--branch", "before")
    assert code == 0 and out.startswith("rewound trip: 1 messages\n")
    assert "agent-store sessions restore trip before" in out
    code, out = run(h.store, "sessions", "branches", "trip")
    assert code == 0 and re.search(r"^before\s+1\s+4\s+", out.splitlines()[2]), out
    code, out = run(h.store, "sessions", "show", "trip")
    assert "branches (agent-store sessions branches trip): before (after message 1)" in out
    code, out = run(h.store, "sessions", "restore", "trip", "before", "--keep-as", "short", "--json")
    assert code == 0 and json.loads(out)["last_seq"] == 4
    code, out = run(h.store, "sessions", "branches", "trip", "--json")
    assert [b["id"] for b in json.loads(out)["items"]] == ["short"]
    code, out = run(h.store, "sessions", "fork", "trip", "--at", "9")
    assert code == 1 and out == ""
    code, out = run(h.store, "sessions", "fork", "trip", owner="mallory")
    assert code == 1 and out == ""


def test_the_sessions_the_library_made_for_an_owner_are_the_owners_with_no_flag(h: Harness) -> None:
    """The README's example: `store.create_session("user-42", title="Trip planning")`, then the owner's CLI
    lists and shows it under the id the library returned (it once needed --unscoped)."""
    made = h.store.create_session("user-42", title="Trip planning")
    h.store.append_messages(made.id, [{"role": "user", "content": "Lisbon in May?"}])
    code, out = run(h.store, "sessions", "list", owner="user-42")
    assert code == 0 and made.id in out and "Trip planning" in out
    code, out = run(h.store, "sessions", "show", made.id, owner="user-42")
    assert code == 0 and "Lisbon in May?" in out
    code, out = run(h.store, "sessions", "list", owner="somebody-else")
    assert code == 0 and made.id not in out


def test_a_fork_still_copying_shows_its_progress_then_its_transcript(h: Harness) -> None:
    """A long fork is readable once its copy is done: meanwhile `fork` and `show` say how far the copy got
    (exit 0, not the Conflict a read of its transcript gets), and `show` has the transcript after."""
    alice = as_owner(h.store, "alice")
    alice.create_session("alice", session_id="long")
    count = h.store.settings.fork_inline_messages + 50
    for start in range(0, count, 97):
        alice.append_messages(
            "long", [{"role": "user", "content": f"m{i}"} for i in range(start, min(count, start + 97))]
        )
    code, out = run(h.store, "sessions", "fork", "long", "--id", "later")
    assert code == 0 and f"being copied (0 of {count}), readable once it is done" in out
    code, out = run(h.store, "sessions", "show", "later")
    assert code == 0 and f"its transcript is being copied: 0 of {count} messages" in out
    h.cascade()
    h.cascade()
    code, out = run(h.store, "sessions", "show", "later", "--last", "1")
    assert code == 0 and "being copied" not in out and f"m{count - 1}" in out


@pytest.fixture(params=["memory", "dynamodb"])
def remembering(request: pytest.FixtureRequest, clock: FakeClock) -> Harness:
    from store.embeddings import WordLlamaEmbedder

    if request.param == "memory":
        return make_harness("memory", clock, embedder=WordLlamaEmbedder())
    fixtures = ("dynamodb_client", "inspector_client", "s3_client", "inspector_s3")
    clients = [request.getfixturevalue(name) for name in fixtures]
    return make_harness("dynamodb", clock, *clients, embedder=WordLlamaEmbedder())


def test_memories_put_list_search_get_export_delete(remembering: Harness) -> None:
    """What an operator does with an owner's memories: put text and JSON, list namespaces and items, search
    with scores shown, get one, export JSON lines, delete; another owner sees none of it."""
    store = remembering.store
    assert run(store, "memories", "put", "preferences", "seat", "I prefer a window seat on long flights")[0] == 0
    assert run(store, "memories", "put", "projects/lisbon-trip", "dates", '{"text": "in May", "days": 7}')[0] == 0
    assert run(store, "memories", "put", '["a/b"]', "k", "slash label")[0] == 0
    code, out = run(store, "memories", "list")
    assert code == 0 and "preferences" in out and "projects/lisbon-trip" in out
    code, out = run(store, "memories", "list", "--namespace", "projects")
    assert code == 0 and "dates" in out and "in May" in out
    code, out = run(store, "memories", "search", "where do I like to sit on a plane?")
    first = out.splitlines()[2]  # header, rule, then the best hit
    assert code == 0 and "seat" in first and re.match(r"\s*0\.\d{3}\s", first)
    assert out.splitlines()[-1] == "searched by words and meaning (hybrid)"  # how it ran: auto, with an embedder
    code, out = run(store, "memories", "search", "window seat", "--mode", "keyword", "--json")
    page = json.loads(out)
    assert code == 0 and page["mode"] == "keyword" and [h["key"] for h in page["items"]] == ["seat"]
    code, out = run(store, "memories", "get", "projects/lisbon-trip", "dates", "--json")
    assert code == 0 and json.loads(out)["value"] == {"text": "in May", "days": 7}
    code, out = run(store, "memories", "export")
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and sorted(x["key"] for x in lines) == ["dates", "k", "seat"]
    assert {tuple(x["namespace"]) for x in lines} == {("preferences",), ("projects", "lisbon-trip"), ("a/b",)}
    assert run(store, "memories", "list", owner="mallory")[1].count("\n") <= 2  # a header, nothing of alice's
    assert run(store, "memories", "delete", "preferences", "seat")[0] == 0
    code, out = run(store, "memories", "get", "preferences", "seat")
    assert code == 1


def test_a_memory_search_without_an_embedder_says_it_searched_by_words(h: Harness) -> None:
    assert run(h.store, "memories", "put", "preferences", "seat", "I prefer a window seat")[0] == 0
    code, out = run(h.store, "memories", "search", "window seat")
    assert code == 0 and "seat" in out.splitlines()[2]
    assert out.splitlines()[-1] == "searched by words (keyword): the store has no embedder"


def test_memories_extract_runs_and_show_with_a_local_model_endpoint(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An operator extracts from a session with the model EXTRACTION_MODEL names (an OpenAI-compatible server
    on 127.0.0.1 replaying recorded completions), lists the runs, and shows a memory with its source messages
    and, after a contradiction, its earlier text."""
    from tests.extraction_support import Replay, completion

    store = as_owner(h.store, "alice")
    store.create_session("alice", session_id="trip")
    store.append_messages(
        "trip", [{"role": "user", "content": "I fly to Lisbon on 10 May."}, {"role": "assistant", "content": "Noted."}]
    )
    endpoint = Replay()
    try:
        monkeypatch.delenv("EXTRACTION_MODEL", raising=False)
        code, out = run(h.store, "memories", "extract", "trip")
        assert code == 1 and store.list_extraction_runs("trip") == []  # no model named: refused, nothing written
        monkeypatch.setenv("EXTRACTION_MODEL", f"openai:{endpoint.url}#qwen2.5")
        fact = {"memories": [{"text": "The user flies to Lisbon on 10 May.", "evidence": [1]}]}
        endpoint.answers.append((200, completion(json.dumps(fact)), 0))
        code, out = run(h.store, "memories", "extract", "trip", "--strategy", "facts")
        assert code == 0 and "succeeded" in out and "add facts facts-" in out
        code, out = run(h.store, "memories", "runs", "trip", "--json")
        (made,) = json.loads(out)
        assert code == 0 and made["strategy"] == "facts" and made["model"] == "qwen2.5" and made["input_tokens"] == 300
        key = made["changes"][0]["key"]
        store.append_messages("trip", [{"role": "user", "content": "Change: Lisbon on 12 May."}])
        moved = {"memories": [{"text": "The user flies to Lisbon on 12 May.", "evidence": [3]}]}
        decide = {
            "decisions": [
                {"candidate": 0, "action": "supersede", "target": key, "text": "The user flies to Lisbon on 12 May."}
            ]
        }
        endpoint.answers += [(200, completion(json.dumps(moved)), 0), (200, completion(json.dumps(decide)), 0)]
        assert run(h.store, "memories", "extract", "trip", "--strategy", "facts")[0] == 0
        code, out = run(h.store, "memories", "show", "facts", key)
        assert code == 0 and "The user flies to Lisbon on 12 May." in out.splitlines()[1]
        assert "from session trip messages 3, by facts (qwen2.5)" in out
        assert "[3] user: Change: Lisbon on 12 May." in out and "was (supersede" in out and "10 May" in out
        assert run(h.store, "memories", "runs", "trip", owner="mallory")[0] == 1  # another owner's session: absent
        code, out = run(h.store, "memories", "correct", "facts", key, "The user flies to Lisbon on 14 May.")
        assert code == 0 and out == f"corrected facts {key}\n"
        code, out = run(h.store, "memories", "show", "facts", key)
        assert "14 May" in out.splitlines()[1] and "was (corrected" in out and "was (supersede" in out
        assert run(h.store, "memories", "correct", "facts", "nope", "x")[0] == 1  # no such memory
        assert run(h.store, "memories", "forget")[0] == 1  # asks for --yes
        assert store.get_memory("alice", ("facts",), key) is not None
        code, out = run(h.store, "memories", "forget", "--yes")
        assert code == 0 and out == "forgotten\n" and store.get_memory("alice", ("facts",), key) is None
        assert [(r.trigger, r.changes) for r in store.list_extraction_runs("trip")] == [("forget", [])]
        code, out = run(h.store, "memories", "runs", "trip")
        assert code == 0 and "forgotten" in out.splitlines()[2] and "qwen" not in out
        code, out = run(h.store, "memories", "extraction", "--off")
        assert code == 0 and out == "extraction off; strategies: the store's default\n"
        assert run(h.store, "memories", "extract", "trip")[0] == 1  # switched off: refused
        code, out = run(h.store, "memories", "extraction", "--on", "--strategy", "facts", "--json")
        assert code == 0 and json.loads(out)["strategies"] == ["facts"] and json.loads(out)["enabled"] is True
    finally:
        endpoint.close()


def test_context_shows_each_part_its_source_and_the_budgets_use(h: Harness) -> None:
    """`agent-store context`: what the model sees for the session's next turn, part by part, within the budget;
    `messages search` names the session and sequence number of each hit; another owner's session is absent."""
    alice = as_owner(h.store, "alice")
    alice.create_session("alice", session_id="trip")
    filler = [{"role": "user", "content": f"filler message number {i}"} for i in range(40)]
    alice.append_messages("trip", [{"role": "user", "content": "My daughter is allergic to peanuts."}, *filler])
    alice.append_messages("trip", [{"role": "user", "content": "Which restaurants are safe for peanuts?"}])
    alice.index_messages("trip")  # what the stack's cascade does after the writes
    code, out = run(h.store, "context", "trip", "--budget", "120")
    lines = out.splitlines()
    assert code == 0 and lines[0].split()[:4] == ["PART", "FROM", "TOKENS", "TEXT"]
    assert any(line.startswith("message  #1 ") and "allergic to peanuts" in line for line in lines)
    assert re.fullmatch(r'\d+ of 120 tokens \(\d+%\) for "Which restaurants are safe for peanuts\?"', lines[-1])
    code, out = run(h.store, "context", "trip", "--budget", "120", "--json")
    assert code == 0 and json.loads(out)["used_tokens"] <= 120
    code, out = run(h.store, "context", "trip", "--text", "-q", "peanuts")
    assert code == 0 and out.startswith("Earlier in this conversation:\nuser: My daughter is allergic to peanuts.")
    code, out = run(h.store, "messages", "search", "peanuts", "--mode", "keyword")
    assert code == 0 and {line.split()[1:3][1] for line in out.splitlines()[2:-1]} == {"1", "42"}
    assert out.splitlines()[-1] == "searched by words"
    assert run(h.store, "context", "trip", owner="mallory")[0] == 1
    assert run(h.store, "context", "trip", "--budget", "10")[0] == 1
