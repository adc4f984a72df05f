"""What a model's answers hold, read strictly: memories (MEMORIES_SCHEMA), a summary, an episode. An answer of
another shape is ModelOutputInvalid (asked again at once, `store.extraction.retries`)."""

from __future__ import annotations

from typing import Any

from store.extraction import consolidation as c
from store.extraction.models import ModelOutputInvalid
from store.extraction.strategies import MAX_TEXT


def candidates(data: dict[str, Any], seqs: set[int], limit: int) -> list[c.ExtractedMemory]:
    """The memories of an answer of MEMORIES_SCHEMA's shape (a custom schema's other fields kept): at most
    `limit`, evidence kept to the seqs shown. An answer of another shape is ModelOutputInvalid."""
    given = data.get("memories")
    if not isinstance(given, list) or not all(isinstance(x, dict) for x in given):
        raise ModelOutputInvalid("the answer holds no list of memories")
    out: list[c.ExtractedMemory] = []
    for item in given[:limit]:
        text = item.get("text")
        if not isinstance(text, str) or len(text) > MAX_TEXT:
            raise ModelOutputInvalid("a memory's text is missing or too long")
        if not text.strip() or any(c.normalised(text) == c.normalised(o.text) for o in out):
            continue
        evidence = item.get("evidence") if isinstance(item.get("evidence"), list) else []
        kept = tuple(sorted({e for e in evidence if isinstance(e, int) and not isinstance(e, bool) and e in seqs}))
        extra = {k: v for k, v in item.items() if k not in ("text", "evidence")}
        out.append(c.ExtractedMemory(text.strip(), kept, extra))
    return out


def summary_text(data: dict[str, Any]) -> str:
    """The summary of an answer of SUMMARY_SCHEMA's shape."""
    text = data.get("summary")
    if not isinstance(text, str) or not text.strip() or len(text) > 4 * MAX_TEXT:
        raise ModelOutputInvalid("the answer holds no summary")
    return text.strip()


EPISODE_FIELDS = ("goal", "actions", "outcome", "text")


def episode_of(data: dict[str, Any]) -> dict[str, Any]:
    """The episode of an answer of EPISODE_SCHEMA's shape, as a memory's fields."""
    episode = data.get("episode")
    if not isinstance(episode, dict) or not all(isinstance(episode.get(f), str) for f in EPISODE_FIELDS):
        raise ModelOutputInvalid("the answer holds no episode")
    if not episode["text"].strip() or any(len(episode[f]) > MAX_TEXT for f in EPISODE_FIELDS):
        raise ModelOutputInvalid("the episode's text is empty or too long")
    return {f: episode[f].strip() for f in EPISODE_FIELDS}
