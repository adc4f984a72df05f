"""A model for extraction tests: the caller's function (`store.extraction.FunctionModel`, a model users may
give) answering from a script, and recording what it was asked. The recorded answers of real APIs (Bedrock's
Converse, OpenAI-compatible endpoints) are tests/extraction/test_model_apis.py's."""

from __future__ import annotations

from collections.abc import Callable
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
