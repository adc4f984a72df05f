"""The frameworks' own tests of their session and memory stores, run unchanged against this store's adapters
(tests/integrations/their_tests.py), differentially: each file runs against the framework's own
implementation first, and ours must pass every case it passes, but the differences named here, each with its
reason (written up in docs/integrations.md), on the memory backend and on DynamoDB, at the store's defaults.

- LangGraph: tests/test_store.py of langgraph-checkpoint's sdist (its `InMemoryStore`) against `MemoryStore`.
- Strands: its memory-store tests (tests/strands/vended_memory_stores/test_memory_store/test_store.py, its
  `TestMemoryStore`) against `StoreMemory`; its session-manager tests (test_repository_session_manager.py over
  `StrandsSessionRepository`, test_snapshot_session_manager.py over `SessionStoreStorage`), from its sdist.
- Google ADK: its session-service contract tests (tests/unittests/sessions/test_session_service.py, every
  test that takes their `session_service` fixture) against `StoreSessionService`, with `InMemorySessionService`
  and `DatabaseSessionService` as references; its memory-service tests (test_in_memory_memory_service.py)
  against `StoreMemoryService`. ADK's sdist holds no tests: they are read from a clone of its repository at
  the installed version's tag (AGENT_STORE_ADK_REPO; or a snapshot under AGENT_STORE_MIRRORS: their_tests.py's
  `adk_snapshot` says which it takes, and the skip message why none fits)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integrations.their_tests import (
    Outcome,
    adk_snapshot,
    assert_passes_as_theirs,
    extract,
    from_git,
    prepare,
    run,
    sdist,
    under,
)

pytestmark = pytest.mark.extended

BACKENDS = ["memory", "dynamodb"]

# ---------------------------------------------------------------- LangGraph

LANGGRAPH_DIFFERENCES = {
    "test_embed_with_path": "InMemoryStore keeps one vector per embedded field and ranks an item by its best one; "
    "this store keeps one vector per memory, of its fields' texts joined (a DynamoDB vector index holds one vector "
    "attribute per item; a vector per field would multiply the writes of every put), so an item matching on one "
    "field scores lower than one made of that field alone",
}


@pytest.fixture(scope="module")
def langgraph_tests(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("langgraph-store-tests")
    archive = sdist("langgraph-checkpoint", where)
    extract(
        archive,
        {"tests/test_store.py": "tests/test_store.py", "tests/embed_test_utils.py": "tests/embed_test_utils.py"},
        where,
    )
    prepare(where, {"theirs_langgraph_store.py": "conftest.py"}, packages=["tests"])
    return where


@pytest.mark.parametrize("backend", BACKENDS)
def test_langgraphs_own_store_tests_pass_on_this_store(langgraph_tests: Path, backend: str) -> None:
    reference = run(langgraph_tests, "reference", "tests/test_store.py")
    assert not reference.failed
    ours = run(langgraph_tests, backend, "tests/test_store.py")
    assert_passes_as_theirs(reference, ours, LANGGRAPH_DIFFERENCES, at_least=100)


# ---------------------------------------------------------------- Strands

STRANDS_MEMORY = "tests/strands/vended_memory_stores/test_memory_store/test_store.py"
STRANDS_SESSIONS = (
    "tests/strands/session/test_repository_session_manager.py",
    "tests/strands/session/test_snapshot_session_manager.py",
)
OWN_FILE = (
    "a test of TestMemoryStore's JSON file (its path, its format, or a file written by hand and read back): this "
    "store keeps memories in its memories table, and has no file"
)
STRANDS_MEMORY_DIFFERENCES = {
    "TestConstructor::test_raises_when_explicit_path_is_empty": OWN_FILE,
    "TestConstructor::test_defaults_to_a_sanitized_path_under_the_home_memory_dir": OWN_FILE,
    "TestAdd::test_persists_human_readable_json": OWN_FILE,
    "TestAdd::test_uses_the_monkeypatchable_id_generator": "patches the file store module's id generator "
    "(`_new_id`); here a fact's id is its content's digest, so that a duplicate write is the same memory",
    "TestSearch::test_ranks_higher_overlap_first_with_relevance_score": "the order is theirs (the memory holding "
    "more of the query's words first); the test reads TestMemoryStore's own score, the count of shared words under "
    "its `_relevanceScore` key, where this store gives its own score under `score` (the share of the query's "
    "words; a similarity with an embedder), as Bedrock's store gives its own under `_relevance_score`",
    "TestPersistence::test_raises_clear_error_on_corrupt_file": OWN_FILE,
    "TestPersistence::test_raises_clear_error_on_wrong_shape_file": OWN_FILE,
    "TestPersistence::test_raises_clear_error_on_malformed_record": OWN_FILE,
    "TestPersistence::test_raises_clear_error_on_non_object_metadata": OWN_FILE,
    "TestPersistence::test_accepts_null_metadata_as_absent": OWN_FILE,
    "TestPersistence::test_raises_clear_error_when_path_is_unreachable": OWN_FILE,
    "TestPersistence::test_keeps_all_entries_under_concurrent_writes": OWN_FILE
    + " (it counts the file's records; test_strands_memory.py checks that concurrent adds all land)",
    "TestPersistence::test_reused_across_separate_event_loops": "wraps the file store's `_storage` "
    "(test_strands_memory.py uses one StoreMemory from separate event loops)",
    "TestCrossSdkInterop::test_loads_a_file_written_in_the_shared_camelcase_format": OWN_FILE,
    "TestMemoryManagerIntegration::test_manager_add_writes_to_store": OWN_FILE
    + " (it counts the file's records; test_strands_memory.py checks the manager's add through search)",
    "TestMemoryManagerIntegration::test_ingests_extracted_facts_through_add": OWN_FILE
    + " (test_strands_memory.py runs the same extraction and finds the fact by search)",
}
BY_MEANING = (
    "with an embedder (wordllama, what make run embeds with), memories are matched and ranked by meaning: "
    "their store ranks by shared words"
)
STRANDS_MEMORY_EMBEDDED = {
    **STRANDS_MEMORY_DIFFERENCES,
    "TestSearch::test_breaks_ties_by_recency": BY_MEANING + ", so 'coffee is great' and 'coffee is bitter' do "
    "not tie for 'coffee'",
}
STRANDS_SESSIONS_DIFFERENCES = {
    "TestSnapshotStashIntegration::test_save_writes_external_ref_for_durable_storage": "its last check reads the "
    "class name of the storage the stash points to (`LocalFileStorage`), which is this store's stand-in here; "
    "the stash is written by reference all the same",
}


@pytest.fixture(scope="module")
def strands_tests(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("strands-tests")
    archive = sdist("strands-agents", where)
    extract(archive, {path: path for path in (STRANDS_MEMORY, *STRANDS_SESSIONS)}, where)
    extract(archive, {f: f for f in under(archive, "tests/fixtures/")}, where)  # their test fixtures, whole
    stores = "tests/strands/vended_memory_stores"
    packages = [
        "tests",
        "tests/fixtures",
        "tests/strands",
        "tests/strands/session",
        stores,
        f"{stores}/test_memory_store",
    ]
    prepare(where, {}, packages=packages)
    return where


def strands_run(where: Path, conftest: str, backend: str, *files: str) -> Outcome:
    (where / "conftest.py").write_bytes((Path(__file__).parent / conftest).read_bytes())
    return run(where, backend, *files)


@pytest.mark.parametrize("backend", [*BACKENDS, "memory-wordllama"])
def test_strands_own_memory_store_tests_pass_on_store_memory(strands_tests: Path, backend: str) -> None:
    reference = strands_run(strands_tests, "theirs_strands_memory.py", "reference", STRANDS_MEMORY)
    assert not reference.failed
    ours = strands_run(strands_tests, "theirs_strands_memory.py", backend, STRANDS_MEMORY)
    differences = STRANDS_MEMORY_EMBEDDED if backend.endswith("wordllama") else STRANDS_MEMORY_DIFFERENCES
    assert_passes_as_theirs(reference, ours, differences, at_least=40)


@pytest.mark.parametrize("backend", BACKENDS)
def test_strands_own_session_tests_pass_on_the_repository_and_storage(strands_tests: Path, backend: str) -> None:
    reference = strands_run(strands_tests, "theirs_strands_sessions.py", "reference", *STRANDS_SESSIONS)
    ours = strands_run(strands_tests, "theirs_strands_sessions.py", backend, *STRANDS_SESSIONS)
    assert_passes_as_theirs(reference, ours, STRANDS_SESSIONS_DIFFERENCES, at_least=160)


# ---------------------------------------------------------------- Google ADK

ADK_SESSIONS = "tests/unittests/sessions/test_session_service.py"
ADK_MEMORY = "tests/unittests/memory/test_in_memory_memory_service.py"
PRIVATE = (
    "reads InMemoryMemoryService's private `_session_events`; test_framework_memory.py checks the same behaviour "
    "(events without text skipped, an event id stored once, later events added beside earlier ones) through "
    "search_memory"
)
ADK_MEMORY_DIFFERENCES = {
    "test_add_session_to_memory": PRIVATE,
    "test_add_events_to_memory_with_explicit_events": PRIVATE,
    "test_add_events_to_memory_without_session_id_uses_default_bucket": PRIVATE,
    "test_add_events_to_memory_alias_is_supported": PRIVATE,
    "test_add_events_to_memory_appends_without_replacing": PRIVATE,
    "test_add_events_to_memory_deduplicates_event_ids": PRIVATE,
    "test_add_session_with_no_events_to_memory": PRIVATE,
}
UNRELATED_CJK = (
    BY_MEANING + ": wordllama's English model scores unrelated Japanese and Chinese text 0.25 and 0.31 against "
    "these queries, above the 0.12 an English paraphrase needs (store.integrations.memory_search.THRESHOLD)"
)
ADK_MEMORY_EMBEDDED = {
    **ADK_MEMORY_DIFFERENCES,
    "test_search_memory_non_latin[\\u79c1\\u306e\\u540d\\u524d\\u306f\\u592a\\u90ce\\u3067\\u3059-\\u5929\\u6c17-0]": (
        UNRELATED_CJK
    ),
    "test_search_memory_non_latin[\\u6211\\u559c\\u6b22\\u673a\\u5668\\u5b66\\u4e60-\\u5929\\u6c14\\u9884\\u62a5-0]": (
        UNRELATED_CJK
    ),
    "test_search_memory_returns_at_most_ten_memories": BY_MEANING + ": 'note 3 about work' and 'note 4 about "
    "work' are not a tie, so the order among them is not the order they were added in",
}


@pytest.fixture(scope="module")
def adk_tests(tmp_path_factory: pytest.TempPathFactory) -> Path:
    snapshot = adk_snapshot()
    if isinstance(snapshot, str):
        pytest.skip(snapshot)
    git_dir, _ = snapshot
    where = tmp_path_factory.mktemp("adk-tests")
    from_git(git_dir, "HEAD", {ADK_SESSIONS: ADK_SESSIONS, ADK_MEMORY: ADK_MEMORY}, where)
    prepare(
        where,
        {"theirs_adk_sessions.py": "tests/unittests/sessions/_conformance.py", "theirs_adk_memory.py": "conftest.py"},
        packages=["tests", "tests/unittests", "tests/unittests/sessions", "tests/unittests/memory"],
    )
    return where


def test_adks_own_session_service_tests_pass_on_store_session_service(adk_tests: Path) -> None:
    every = run(adk_tests, "reference", ADK_SESSIONS)
    theirs = every.of("in_memory") | every.of("database")
    for backend in BACKENDS:
        ours = every.of(backend)
        ran = ours.passed | ours.failed  # their contract: the tests of the shared fixture, run on every backend
        reference = Outcome(theirs.passed & ran, theirs.failed & ran)
        assert_passes_as_theirs(reference, ours, {}, at_least=30)


@pytest.mark.parametrize("backend", [*BACKENDS, "memory-wordllama"])
def test_adks_own_memory_service_tests_pass_on_store_memory_service(adk_tests: Path, backend: str) -> None:
    reference = run(adk_tests, "reference", ADK_MEMORY)
    assert not reference.failed
    ours = run(adk_tests, backend, ADK_MEMORY)
    differences = ADK_MEMORY_EMBEDDED if backend.endswith("wordllama") else ADK_MEMORY_DIFFERENCES
    assert_passes_as_theirs(reference, ours, differences, at_least=20)
