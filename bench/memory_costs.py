"""Long-term memory side by side: this store's LangGraph `MemoryStore` and langgraph-checkpoint-aws's
`DynamoDBStore` (its DynamoDB `BaseStore` with a vector index), through the same LangGraph store calls, each on a
moto server of its own (with infra/local/vectors.py for the vector index and SearchVectors).

    python -m bench.memory_costs [--sizes 100 10000 100000]

One owner ("u1") holds every memory, spread over TOPICS namespaces ("u1", "topic-k"); both stores get the same
index configuration (wordllama's 256 dimensions, the "text" field embedded) and the same calls. At each size
(items of that owner) it measures, on each store's own boto3 session (bench/meter.py: requests, and capacity
units computed from item sizes with DynamoDB's rules, a Query or Scan billed for the whole items it reads).
Up to PUT_THROUGH_API items are put through each store's API; past that (moto keeps a 256-number vector as
256 Python objects, so 100,000 memories take minutes and gigabytes either way; the server is lean, sharing equal
numbers among lists and keeping no stream record, or 100,000 memories would not fit) the rest are written by
BatchWriteItem as copies of the store's own items: the last item put through the API, with the key, text and
vector of each new memory (each store's item layout, its vector embedded by the same model). The loader
checks its copy of that last item against the item the store wrote, so the two cannot drift apart.

- put: a new memory (the mean of REPEAT), and the bytes the vector index receives for it (the attributes
  its projection copies: DynamoDB meters index writes by them);
- get: a memory by key (mean of REPEAT);
- search: a question in one namespace, limit 10 (mean of REPEAT; one SearchVectors each, whose own unit,
  VectorSearchRequestBytes, has no public formula and is not computed: its requests and bytes are counted);
- search the owner: the same question over the owner's prefix ("u1",), as LangGraph's `search` promises;
- list: a namespace's first 10 memories with no query;
- list_namespaces under ("u1",).

It keeps its numbers in bench/results.json ("memory_costs") and renders bench/results.md again."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.memory_set import memories, questions
from bench.meter import Tally, metered
from bench.report import MEMORY_OPERATIONS, record
from infra.local.aws import create_tables, local_client, moto_server_process
from store.aws.attrs import item_size
from store.core.lexical import LEXICAL_DIMENSIONS

SIZES = (100, 10_000, 100_000)
OWNER = "u1"
TOPICS = 10
REPEAT = 3
GROW_CHUNK = 500
DIMS = 256
PUT_THROUGH_API = 10_000
SCAN_SIZE_MAX = 10_000  # past this, a list_namespaces made of Scans is not run (see SCAN_SKIPPED)
SCAN_SKIPPED = (
    "not run: a Scan of the whole table, which moto pages in time proportional to the table each "
    "(hours at this size); the Scans read every item of the table, so their units grow with it"
)


@dataclass(frozen=True)
class Contender:
    name: str
    make: Callable[[str, Any, Any], tuple[Any, str]]  # (url, boto3 session, embed) -> (BaseStore, its table)
    key: Callable[[int], dict[str, Any]]  # the DynamoDB key of memory i
    copy: Callable[[dict[str, Any], int, list[float]], dict[str, Any]]  # (the store's item, i, vector) -> item i


def index_config(embed: Any) -> dict[str, Any]:
    """The LangGraph index configuration both stores get."""
    return {"embed": embed, "dims": DIMS, "fields": ["text"]}


def ours(url: str, session: Any, embed: Any) -> tuple[Any, str]:
    from store.integrations.langgraph_store import MemoryStore

    tables = create_tables(local_client(endpoint_url=url), prefix="ours")
    store = tables.store(session.client("dynamodb", endpoint_url=url))
    assert tables.memories is not None
    return MemoryStore(store, owner=OWNER, index=index_config(embed)), tables.memories  # type: ignore[arg-type]


def theirs(url: str, session: Any, embed: Any) -> tuple[Any, str]:
    from langgraph_checkpoint_aws import DynamoDBStore

    store = DynamoDBStore(table_name="theirs", boto3_session=session, endpoint_url=url, index=index_config(embed))
    store.setup()  # creates the table with its vector index, as its docs say
    return store, "theirs"


def our_key(i: int) -> dict[str, Any]:
    from store.core import memories as m

    return {"pk": {"S": "O#" + OWNER}, "sk": {"S": m.memory_sk(namespace(i), f"m{i}")}}


def our_copy(item: dict[str, Any], i: int, vector: list[float]) -> dict[str, Any]:
    from store.core import codec
    from store.core import memories as m

    exact = m.check_vector(vector, DIMS)
    text = value(i)["text"]
    found = m.vectors(text, m.Indexed(exact, item["emb"]["S"]))  # the embedding and the words, as a put makes them
    return {
        **item,
        **our_key(i),
        "ns": {"S": m.namespace_part(namespace(i))},
        "v": {"S": codec.dumps(value(i))},
        "txt": {"S": text},
        "vec": {"L": [{"N": m.float32_text(x)} for x in m.layout(found, DIMS)]},
    }


def their_key(i: int) -> dict[str, Any]:
    return {"PK": {"S": ":".join(namespace(i))}, "SK": {"S": f"m{i}"}}


def their_copy(item: dict[str, Any], i: int, vector: list[float]) -> dict[str, Any]:
    return {
        **item,
        **their_key(i),
        "value": {"M": {"text": {"S": value(i)["text"]}}},
        "embedding": {"L": [{"N": str(x)} for x in vector]},
    }


CONTENDERS = (
    Contender("agent-session-store MemoryStore", ours, our_key, our_copy),
    Contender("langgraph-checkpoint-aws DynamoDBStore", theirs, their_key, their_copy),
)


def namespace(i: int) -> tuple[str, str]:
    return (OWNER, f"topic-{i % TOPICS}")


def value(i: int) -> dict[str, Any]:
    facts = memories()
    return {"text": f"{facts[i % len(facts)].text} (noted {i})"}


class Runner:
    """One store on its own server, grown and measured."""

    def __init__(self, url: str, contender: Contender, embed: Any, through_api: int = PUT_THROUGH_API) -> None:
        self.through_api = through_api
        self.session, self.meter = metered(url)
        self.reader = self.meter.reader
        self.contender = contender
        self.embed = embed
        self.store, self.table = contender.make(url, self.session, embed)
        self.size = 0
        self.copied = 0
        self.scans = False  # its list_namespaces is made of Scans (seen at a size measured)

    def grow_to(self, target: int) -> None:
        """Puts (not measured) until the owner holds `target` memories: through the API up to
        PUT_THROUGH_API, copies of the store's own item past it."""
        from langgraph.store.base import PutOp

        while self.size < min(target, self.through_api):
            chunk = range(self.size, min(target, self.through_api, self.size + GROW_CHUNK))
            self.store.batch([PutOp(namespace(i), f"m{i}", value(i)) for i in chunk])
            self.size = chunk[-1] + 1
        if self.size < target:
            self._copy_to(target)

    def _stored(self, i: int) -> dict[str, Any]:
        item: dict[str, Any] = self.reader.get_item(TableName=self.table, Key=self.contender.key(i))["Item"]
        return item

    def _copy_to(self, target: int) -> None:
        last = self.size - 1
        template = self._stored(last)
        again = self.contender.copy(template, last, self.embed([value(last)["text"]])[0])
        if again != template:
            raise AssertionError(f"{self.contender.name}: the loader's copy of m{last} is not the item the store wrote")
        for start in range(self.size, target, GROW_CHUNK):
            chunk = list(range(start, min(target, start + GROW_CHUNK)))
            vectors = self.embed([value(i)["text"] for i in chunk])
            items = [self.contender.copy(template, i, v) for i, v in zip(chunk, vectors, strict=True)]
            for at in range(0, len(items), 25):
                requests = [{"PutRequest": {"Item": item}} for item in items[at : at + 25]]
                self.reader.batch_write_item(RequestItems={self.table: requests})
        self.copied += target - self.size
        self.size = target

    def measured(self, action: Callable[[], Any], repeat: int = 1) -> dict[str, Any]:
        tallies: list[Tally] = []
        result: Any = None
        started = time.perf_counter()
        for _ in range(repeat):
            with self.meter.measure() as tally:
                result = action()
            tallies.append(tally)
        seconds = (time.perf_counter() - started) / repeat
        return {
            "requests": sum(t.request_count for t in tallies) / repeat,
            "calls": tallies[-1].describe(),
            "wcu": sum(t.wcu for t in tallies) / repeat,
            "rcu": sum(t.rcu for t in tallies) / repeat,
            "bytes_received": sum(t.bytes_received for t in tallies) / repeat,
            "seconds": seconds,
            "found": len(result) if isinstance(result, list) else int(result is not None),
        }

    def index_bytes(self) -> int:
        """The bytes of the item the latest request wrote that the table's vector index projects (its keys,
        vector and projected attributes): what DynamoDB replicates into the index for it."""
        written = json.loads(self.meter.last_body)
        table = self.reader.describe_table(TableName=self.table)["Table"]
        stored = self.reader.get_item(TableName=self.table, Key=written["Key"])["Item"]
        (index,) = table["VectorIndexes"]
        projection = index["Projection"]
        if projection["ProjectionType"] == "ALL":
            return item_size(stored)
        kept = {k["AttributeName"] for k in table["KeySchema"]} | {index["VectorAttribute"]["AttributeName"]}
        kept |= set(projection.get("NonKeyAttributes", []))
        return item_size({k: v for k, v in stored.items() if k in kept})

    def at_size(self, size: int) -> dict[str, Any]:
        """The measured calls at `size` memories (its puts add REPEAT more)."""
        asked = questions()
        turn = iter(range(10**9))
        row: dict[str, Any] = {}
        new = [self.size + n for n in range(REPEAT)]

        def put() -> Any:
            i = new[next(turn) % REPEAT]
            self.store.put(namespace(i), f"m{i}", value(i))

        row["put"] = self.measured(put, REPEAT)
        self.size += REPEAT
        row["put"]["index_bytes"] = self.index_bytes()
        row["get"] = self.measured(lambda: self.store.get(namespace(7), "m7"), REPEAT)
        row["search"] = self.measured(
            lambda: self.store.search(namespace(1), query=asked[next(turn) % len(asked)].text, limit=10), REPEAT
        )
        row["search the owner"] = self.measured(lambda: self.store.search((OWNER,), query=asked[0].text, limit=10))
        library = getattr(self.store, "store", None)  # ours: the SessionStore behind the LangGraph store
        if library is not None:
            for mode in ("keyword", "hybrid"):
                row[f"search by {mode}"] = self.measured(
                    lambda mode=mode: (
                        library.search_memories(  # type: ignore[misc]
                            OWNER, namespace(1), query=asked[next(turn) % len(asked)].text, mode=mode, limit=10
                        ).items
                    ),
                    REPEAT,
                )
        row["list"] = self.measured(lambda: self.store.search(namespace(2), limit=10))
        if self.scans and size > SCAN_SIZE_MAX:
            row["list_namespaces"] = {"skipped": SCAN_SKIPPED}
        else:
            row["list_namespaces"] = self.measured(lambda: self.store.list_namespaces(prefix=(OWNER,)))
            self.scans = "Scan" in row["list_namespaces"]["calls"]
        return row


def wordllama() -> Callable[[list[str]], list[list[float]]]:
    from store.embeddings import WordLlamaEmbedder

    model = WordLlamaEmbedder()
    return lambda texts: model(list(texts))


@contextmanager
def server() -> Iterator[str]:
    with moto_server_process(lean=True) as url:  # 100,000 vectors fit this machine's memory
        yield url


def measure(
    sizes: list[int],
    through_api: int = PUT_THROUGH_API,
    only: list[str] | None = None,
    on_row: Callable[[str, dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Each contender (those whose name holds one of `only`, if given) on a server of its own, grown through
    `sizes`: {contender: {size: {operation: costs}}}; `on_row(contender, rows so far)` after each size."""
    embed = wordllama()
    out: dict[str, Any] = {}
    for contender in CONTENDERS:
        if only and not any(o in contender.name for o in only):
            continue
        rows: dict[str, Any] = {}
        with server() as url:
            runner = Runner(url, contender, embed, through_api)
            for size in sizes:
                started = time.perf_counter()
                runner.grow_to(size)
                grown = time.perf_counter() - started
                rows[str(size)] = {**runner.at_size(size), "grow_seconds": grown, "copied": runner.copied}
                print(contender.name, size, json.dumps(rows[str(size)]), flush=True)
                if on_row is not None:
                    on_row(contender.name, rows)
        out[contender.name] = rows
    return out


UNREACHED = "not measured: the run stopped before this size"


def keep(args: argparse.Namespace, measured: dict[str, Any]) -> None:
    """This run's rows in bench/results.json ("memory_costs"): a contender measured now has its rows of this run
    (a size it has not reached yet: UNREACHED on every operation); the others keep theirs when the sizes are
    the same."""
    kept = json.loads((Path(__file__).parent / "results.json").read_text()).get("memory_costs") or {}
    same_run = kept.get("sizes") == args.sizes and kept.get("through_api") == args.through_api
    contenders: dict[str, Any] = {}
    for c in CONTENDERS:
        rows = measured.get(c.name)
        if rows is None:
            contenders[c.name] = kept["contenders"][c.name] if same_run and args.only else {}
            continue
        pending = {op: {"skipped": UNREACHED} for op in MEMORY_OPERATIONS}
        contenders[c.name] = {str(size): rows.get(str(size), pending) for size in args.sizes}
    results = {
        "date": datetime.now(UTC).date().isoformat(),
        "sizes": args.sizes,
        "topics": TOPICS,
        "through_api": args.through_api,
        "contenders": contenders,
        "embedder": "wordllama 0.4 (256 dimensions, in its wheel)",
        "word_buckets": LEXICAL_DIMENSIONS,
    }
    record("memory_costs", results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--through-api", type=int, default=PUT_THROUGH_API, help="items put through the API")
    parser.add_argument(
        "--only", nargs="+", help="measure only the contenders whose name holds one of these (the others' numbers kept)"
    )
    args = parser.parse_args()
    so_far: dict[str, Any] = {}

    def row_done(name: str, rows: dict[str, Any]) -> None:  # kept as each size is done: a long run stopped
        so_far[name] = dict(rows)  # part way still leaves what it measured
        keep(args, so_far)

    keep(args, measure(args.sizes, args.through_api, args.only, row_done))


if __name__ == "__main__":
    main()
