"""What memory extraction costs per turn of a conversation, at each trigger setting (issue 48).

    python -m bench.extraction_costs [--turns 40] [--every 1 5 10 20] [--record]

The model is a deterministic function in the real answer's shape (`CountingModel`); the method, beside its
figures: bench/report_template.md, "Memory extraction: cost per turn"."""

from __future__ import annotations

import argparse
import json
import re
from typing import Any

from bench.memory_set import memories
from bench.meter import metered
from bench.report import record
from infra.local.aws import create_tables, local_client, moto_server_process
from store import Settings
from store.embeddings import WordLlamaEmbedder
from store.extraction import FunctionModel, ModelRequest

OWNER = "u1"
CHARS_PER_TOKEN = 4


class CountingModel:
    """A deterministic model in the real answer's shape, counting what it is sent and what it answers: it returns
    each user sentence that states something as a fact ("The user's sister grew up in Porto."), and answers a
    consolidation question `none` for a text it already holds, else `add`."""

    def __init__(self) -> None:
        self.questions = 0
        self.sent = 0
        self.answered = 0
        self.model = FunctionModel(self._answer, "bench-rules")
        self.model_id = self.model.model_id

    def __call__(self, request: ModelRequest) -> Any:
        return self.model(request)

    def _answer(self, request: ModelRequest) -> dict[str, Any]:
        self.questions += 1
        self.sent += len(request.system) + len(request.prompt) + len(json.dumps(request.schema))
        if request.schema_name == "consolidate_memories":
            blocks = request.prompt.split("\n\nCandidate ")
            decisions = []
            for i, block in enumerate(blocks):
                text = block.split(": ", 1)[1].split("\n", 1)[0] if ": " in block else ""
                known = text and text in block.split("Nearest existing memories:", 1)[-1]
                decisions.append({"candidate": i, "action": "none" if known else "add", "target": "", "text": ""})
            answer: dict[str, Any] = {"decisions": decisions}
        else:
            found = []
            for seq, text in re.findall(r"^\[(\d+)\] user: (.+)$", request.prompt, flags=re.MULTILINE):
                said = text.removeprefix("By the way, ").rstrip(".")
                if request.schema_name == "record_facts" and said.lower().startswith("my "):
                    found.append({"text": f"The user's {said[3:]}.", "evidence": [int(seq)]})
                if request.schema_name == "record_preferences" and "prefer" in said:
                    found.append({"text": f"The user {said[2:]}.", "evidence": [int(seq)]})
            answer = {"memories": found}
        self.answered += len(json.dumps(answer))
        return answer


def conversation(turns: int) -> list[dict[str, str]]:
    """`turns` user turns (a fact, or a preference every fifth), each with the assistant's short answer."""
    out = []
    facts = [m.text for m in memories()]
    for i in range(turns):
        said = f"By the way, {facts[i % len(facts)][0].lower()}{facts[i % len(facts)][1:]}."
        if i % 5 == 4:
            said = "I prefer short answers in the morning."
        out += [{"role": "user", "content": said}, {"role": "assistant", "content": "Noted, thank you."}]
    return out


def measure(turns: int, every: int, url: str) -> dict[str, Any]:
    session, meter = metered(url)
    tables = create_tables(local_client(endpoint_url=url), prefix=f"x{every}")
    model = CountingModel()
    store = tables.store(session.client("dynamodb", endpoint_url=url), settings=Settings(embedder=WordLlamaEmbedder()))
    sid = store.create_session(OWNER).id
    totals = {"requests": 0, "wcu": 0.0, "rcu": 0.0, "runs": 0, "written": 0}
    calls: dict[str, int] = {}
    seq = 0
    for message in conversation(turns):
        store.append_messages(sid, [message])
        before, seq = seq, seq + 1
        if seq // every == before // every:
            continue
        with meter.measure() as tally:
            runs = store.extract_memories(sid, model=model, trigger="messages")
        totals["requests"] += tally.request_count
        totals["wcu"] += tally.wcu
        totals["rcu"] += tally.rcu
        totals["runs"] += len(runs)
        totals["written"] += sum(len(r.changes) for r in runs)
        for name, n in tally.requests.items():
            calls[name] = calls.get(name, 0) + n
    return {
        "every": every,
        "turns": turns,
        "per turn": {
            "requests": round(totals["requests"] / turns, 2),
            "wcu": round(totals["wcu"] / turns, 2),
            "rcu": round(totals["rcu"] / turns, 2),
            "model questions": round(model.questions / turns, 2),
            "characters sent": round(model.sent / turns),
            "estimated tokens": round((model.sent + model.answered) / turns / CHARS_PER_TOKEN),
        },
        "runs": totals["runs"],
        "memories written": totals["written"],
        "requests by operation": calls,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--every", type=int, nargs="+", default=[1, 5, 10, 20])
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    rows = []
    with moto_server_process() as url:
        for every in args.every:
            rows.append(measure(args.turns, every, url))
            print(json.dumps(rows[-1]), flush=True)
    if args.record:
        from datetime import UTC, datetime

        record("memory_extraction", {"date": datetime.now(UTC).date().isoformat(), "rows": rows})


if __name__ == "__main__":
    main()
