"""The `messages` channel by reference (store/integrations/langgraph_messages.py): runs of the conversation's
sequence numbers, inline what it does not hold exactly, read back only where a run's ids match."""

from __future__ import annotations

import base64
import pickle  # nosec B403: the test's own objects, round-tripped in memory
from datetime import UTC, datetime
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, message_to_dict

from store.integrations import langgraph_messages as lm
from store.models import MessageRecord


def record(seq: int, message: BaseMessage) -> MessageRecord:
    content = message_to_dict(message)
    return MessageRecord(
        seq=seq, id=f"m{seq}", session_id="s", role=message.type, content=content, created_at=datetime.now(UTC)
    )


def dumps(value: Any) -> list[str]:
    return ["pickle", base64.b64encode(pickle.dumps(value)).decode()]


def loads(stored: list[str]) -> Any:
    return pickle.loads(base64.b64decode(stored[1]))  # nosec B301: bytes this test made


def test_runs_follow_the_conversation_and_what_it_does_not_hold_is_inline() -> None:
    said = [HumanMessage("hi", id="a"), AIMessage("hello", id="b"), HumanMessage("weather?", id="c")]
    known = lm.Known()
    known.learn([record(1, said[0]), record(2, said[1]), record(4, said[2])])  # 3 is someone else's
    edited = AIMessage("hello!", id="b")  # same id, other content: not what the conversation holds
    new = AIMessage("sunny", id="d")
    entries = lm.entries_of([said[0], said[1], said[2], new], known, dumps)
    assert [e[:2] for e in entries[:2]] == [[1, 2], [4, 4]] and entries[2][0] == lm.INLINE
    assert entries[0][2] == lm.ids_digest(["a", "b"])
    again = lm.entries_of([said[0], edited], known, dumps)
    assert again[0][:2] == [1, 1] and again[1][0] == lm.INLINE
    rebuilt = lm.rebuild(entries, [known.by_seq], loads)
    assert rebuilt == [*said, new]


def test_a_run_is_read_only_from_a_line_whose_ids_match() -> None:
    said = [HumanMessage("one", id="a"), AIMessage("two", id="b")]
    entries = [[1, 2, lm.ids_digest(["a", "b"])]]
    rewound = lm.line_of([record(1, said[0]), record(2, AIMessage("other", id="x"))])
    branch = lm.line_of([record(1, said[0]), record(2, said[1])])
    assert lm.rebuild(entries, [rewound], loads) is None
    assert lm.rebuild(entries, [rewound, branch], loads) == said
    assert lm.rebuild(entries, [lm.line_of([record(1, said[0])])], loads) is None  # a message missing


def test_what_a_saver_knows_of_a_thread_is_bounded(monkeypatch: Any) -> None:
    monkeypatch.setattr(lm, "KNOWN_MAX", 5)
    known = lm.Known()
    known.learn(record(i, HumanMessage(f"m{i}", id=f"id{i}")) for i in range(1, 9))
    assert sorted(known.by_seq) == [4, 5, 6, 7, 8] and "id1" not in known.by_id and known.by_id["id8"] == 8
    assert known.seq_of(HumanMessage("m2", id="id2")) is None and known.seq_of(HumanMessage("m7", id="id7")) == 7


def test_a_bounded_map_makes_a_missing_value_once_and_drops_the_least_recent() -> None:
    from store.core.lru import Lru

    made: list[str] = []

    def make(name: str) -> list[str]:
        made.append(name)
        return [name]

    lru: Lru[list[str]] = Lru(2)
    first = lru.get_or_make("a", lambda: make("a"))
    assert lru.get_or_make("a", lambda: make("again")) is first and made == ["a"]
    lru.get_or_make("b", list)
    lru.get("a")  # used: "b" is now the least recent
    lru.get_or_make("c", list)
    assert lru.get("b") is None and lru.get("a") is first and len(lru) == 2
