"""A stand-in for a chat model, so that memory extraction can be tried on the local stack with no model at all
(`EXTRACTION_MODEL=demo make run`): an OpenAI-compatible `/v1/chat/completions` endpoint on 127.0.0.1 that
answers extraction's questions by rules, in the shape a model answers them (a chat completion whose content is
JSON of the schema asked for, with usage). It is not a model and extracts little: first-person sentences
("I live in Porto." -> "The user lives in Porto."), preferences by their verbs (prefer, like, love, hate,
always, never), a summary made of the user's first sentences, and a contradiction when a new fact begins as a
near one does ("The user lives in ..."). Point EXTRACTION_MODEL at a real endpoint for real extraction."""

from __future__ import annotations

import contextlib
import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "demo-rules"
_SENTENCE = re.compile(r"[^.!?]+[.!?]?")
_LINE = re.compile(r"^\[(\d+)\] (user|assistant): (.+)$", re.MULTILINE)
_PREFERS = re.compile(r"\b(prefer|like|love|hate|enjoy|always|never|favou?rite|can't stand)\b", re.IGNORECASE)
_IRREGULAR = {"am": "is", "'m": "is", "have": "has", "do": "does", "go": "goes", "was": "was"}


def third_person(sentence: str) -> str | None:
    """A first-person sentence of the user's as a memory ("I live in Porto" -> "The user lives in Porto."), or
    None when it is not one."""
    text = sentence.strip().rstrip(".!?").strip()
    lowered = text.lower()
    if lowered.startswith("my "):
        return f"The user's {text[3:]}."
    match = re.match(r"i('m| am| \w+)\b(.*)$", text, flags=re.IGNORECASE)
    if match is None:
        return None
    verb, rest = match[1].strip().lower(), match[2]
    if verb in ("'m", "am"):
        return f"The user is{rest}."
    if verb in _IRREGULAR:
        return f"The user {_IRREGULAR[verb]}{rest}."
    if verb.endswith("ed") or verb in ("can", "will", "would", "should", "must", "don't", "didn't", "won't"):
        return f"The user {verb}{rest}."
    ending = "es" if verb.endswith(("s", "sh", "ch", "x", "o")) else "s"
    return f"The user {verb}{ending}{rest}."


def _user_sentences(prompt: str) -> list[tuple[int, str]]:
    return [
        (int(seq), s.strip())
        for seq, role, text in _LINE.findall(prompt)
        if role == "user"
        for s in _SENTENCE.findall(text)
        if s.strip()
    ]


def answer(schema_name: str, system: str, prompt: str) -> dict[str, Any]:
    """The JSON a model would give for one of extraction's questions (by the schema it was asked for)."""
    if schema_name in ("record_facts", "record_preferences", "record_custom"):
        wanted = schema_name != "record_facts"
        found = []
        for seq, sentence in _user_sentences(prompt):
            memory = third_person(sentence)
            if memory is not None and bool(_PREFERS.search(sentence)) == wanted:
                found.append({"text": memory, "evidence": [seq]})
        return {"memories": found}
    if schema_name == "consolidate_memories":
        return {"decisions": _decisions(prompt)}
    if schema_name == "record_summary":
        said = [s for _, s in _user_sentences(prompt)][:8]
        return {"summary": "The user talked about: " + " ".join(said) if said else "Nothing yet."}
    if schema_name == "record_episode":
        said = [s for _, s in _user_sentences(prompt)]
        first = said[0] if said else "a conversation"
        return {"episode": {"goal": first, "actions": "The assistant answered.", "outcome": "Answered.", "text": first}}
    return {"memories": []}


def _decisions(prompt: str) -> list[dict[str, Any]]:
    """Per candidate: `supersede` the nearest memory that begins with the same four words but says otherwise,
    `none` for one that says the same, else `add`."""
    out = []
    for block in prompt.split("\n\nCandidate ")[0:]:
        head = re.match(r"(?:Candidate )?(\d+): (.+)", block)
        if head is None:
            continue
        index, text = int(head[1]), head[2].strip()
        near = re.findall(r'- id ("(?:[^"\\]|\\.)*"): (.+)', block)
        decision = {"candidate": index, "action": "add", "target": "", "text": ""}
        for key, other in near:
            if other.strip().lower() == text.lower():
                decision = {"candidate": index, "action": "none", "target": "", "text": ""}
                break
            if other.split()[:4] == text.split()[:4]:
                decision = {"candidate": index, "action": "supersede", "target": json.loads(key), "text": text}
                break
        out.append(decision)
    return out


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            system, prompt = (m.get("content") or "" for m in body["messages"][:2])
            shape = body.get("response_format") or {}
            name = (shape.get("json_schema") or {}).get("name") or "record_facts"
            content = json.dumps(answer(name, system, prompt))
        except (ValueError, KeyError, TypeError):
            self._send(400, {"error": {"message": "not a chat completion request", "type": "invalid_request_error"}})
            return
        self._send(
            200,
            {
                "id": "chatcmpl-demo",
                "object": "chat.completion",
                "model": MODEL,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content, "refusal": None},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": (len(system) + len(prompt)) // 4,
                    "completion_tokens": len(content) // 4,
                    "total_tokens": (len(system) + len(prompt) + len(content)) // 4,
                },
            },
        )

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@contextlib.contextmanager
def demo_endpoint() -> Iterator[str]:
    """The stand-in's endpoint on 127.0.0.1 (a free port), as EXTRACTION_MODEL names one
    (`openai:<base URL>#demo-rules`); stopped on exit."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, name="agent-store-demo-model", daemon=True).start()
    try:
        yield f"openai:http://127.0.0.1:{server.server_address[1]}/v1#{MODEL}"
    finally:
        server.shutdown()
        server.server_close()
