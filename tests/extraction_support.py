"""A model for extraction tests: the caller's function (`store.extraction.FunctionModel`, a model users may
give) answering from a script, and recording what it was asked. The recorded answers of real APIs (Bedrock's
Converse, OpenAI-compatible endpoints) are tests/extraction/test_model_apis.py's."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from store.extraction import FunctionModel, ModelRequest

Answer = dict[str, Any] | Exception | Callable[[ModelRequest], dict[str, Any]]


class Scripted(FunctionModel):
    """Answers each question with the next of `answers` (an exception is raised; a callable is called with the
    request), by the question's schema name when `answers` is a dict of lists; `asked` keeps every request."""

    def __init__(self, answers: dict[str, list[Answer]], model_id: str = "scripted-model") -> None:
        self.answers = {k: list(v) for k, v in answers.items()}
        self.asked: list[ModelRequest] = []
        super().__init__(self._answer, model_id)

    def _answer(self, request: ModelRequest) -> dict[str, Any]:
        self.asked.append(request)
        queue = self.answers.get(request.schema_name)
        if not queue:
            raise AssertionError(f"no scripted answer left for {request.schema_name}")
        answer = queue.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer(request) if callable(answer) else answer

    def names(self) -> list[str]:
        return [r.schema_name for r in self.asked]


def memories(*texts: str, evidence: list[int] | None = None) -> dict[str, Any]:
    """An answer of the memories schema."""
    return {"memories": [{"text": t, "evidence": evidence or [1]} for t in texts]}


def decisions(*given: tuple[int, str, str, str]) -> dict[str, Any]:
    """An answer of the consolidation schema: (candidate, action, target, text) each."""
    return {"decisions": [{"candidate": i, "action": a, "target": t, "text": x} for i, a, t, x in given]}


def completion(content: str | None, *, finish: str = "stop", refusal: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
        "object": "chat.completion",
        "created": 1741570283,
        "model": "qwen2.5:7b-instruct",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": refusal, "annotations": []},
                "logprobs": None,
                "finish_reason": finish,
            }
        ],
        "usage": {"prompt_tokens": 300, "completion_tokens": 40, "total_tokens": 340},
    }


class Replay:
    """A chat completions endpoint on 127.0.0.1 answering each POST with the next (status, body, delay)."""

    def __init__(self) -> None:
        self.answers: list[tuple[int, Any, float]] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        replay = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                replay.requests.append(json.loads(body))
                replay.headers.append(dict(self.headers))
                status, answer, delay = replay.answers.pop(0)
                time.sleep(delay)
                data = answer.encode() if isinstance(answer, str) else json.dumps(answer).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client gave up (a timeout test)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
