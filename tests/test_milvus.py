"""RAG_STORE=milvus: the same index in Milvus, searched there. Real milvus-lite, embedded and as a server
(`rag milvus-server`), the real bundled embedding model, real `rag` processes."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest
from conftest import SEEDS, free_port, load_questions, run_rag, start_milvus, start_rag, write_jsonl

from rag.errors import BadInput
from rag.index.ingest import ingest
from rag.index.library import Library
from rag.records import Query
from rag.settings import Settings

NEW_PAPER = {
    "doc_id": "zebrafish-fins",
    "title": "Fin regeneration in zebrafish needs osteoblast dedifferentiation",
    "abstract": "Zebrafish regrow amputated fins. We show that osteoblasts dedifferentiate after amputation and that "
    "blocking retinoic acid signalling stops fin regeneration in adult zebrafish.",
    "venue": "Development",
    "year": 2011,
    "authors": ["Knopf, F.", "Weidinger, G."],
}


@pytest.fixture(scope="module")
def milvus_settings(tmp_path_factory: pytest.TempPathFactory, model_cache: Path) -> Settings:
    """The seeds in the embedded Milvus (milvus-lite), ingested once for the module."""
    settings = Settings(_env_file=None, data_dir=tmp_path_factory.mktemp("milvus-seeds"), model_cache=model_cache,
                        store="milvus", chroma_host=None)  # fmt: skip
    ingest([SEEDS], settings)
    return settings


def doc_ids(library: Library, query: Query) -> list[str]:
    return [r.doc_id for r in library.search(query)]


def same_ranking(milvus: Library, chroma: Library, query: Query) -> None:
    """Nearly the same papers with nearly the same scores. Not exactly: Milvus scores BM25 with each segment's own
    statistics, so while an index spans several segments its keyword scores stray a few percent from bm25s's and
    near-ties may swap places; and a hybrid search fuses RAG_CANDIDATES papers from each ranking where the Chroma
    setup fuses the papers of RAG_CANDIDATES chunks."""
    ours = {r.doc_id: r.score for r in milvus.search(query)}
    theirs = {r.doc_id: r.score for r in chroma.search(query)}
    shared = ours.keys() & theirs.keys()
    assert len(shared) >= 0.8 * len(theirs) and len(ours) == len(theirs), query
    assert {d: ours[d] for d in shared} == pytest.approx({d: theirs[d] for d in shared}, rel=0.05), query


def test_milvus_holds_and_finds_what_chroma_does(milvus_settings: Settings, seeds_settings: Settings) -> None:
    milvus, chroma = Library(milvus_settings), Library(seeds_settings)
    assert {**milvus.stats(), "store": ""} == {**chroma.stats(), "store": ""}
    assert milvus.stats()["store"].startswith("embedded milvus in ")
    assert not milvus_settings.keyword_dir.exists()  # nothing kept beside the store
    questions = [q["question"] for q in load_questions()]
    for question in questions[:12]:
        # BM25 inside Milvus reads the words the local keyword index reads: the same idf, the same ranking
        assert milvus.term_weights(question) == pytest.approx(chroma.term_weights(question))
        for mode in ("keyword", "dense", "hybrid"):  # hybrid: both rankings by paper, fused as for Chroma
            same_ranking(milvus, chroma, Query(question, mode=mode, k=5))
        ours = milvus.search(Query(question, k=5))
        assert [r.doc_id for r in ours][:1] == doc_ids(chroma, Query(question, k=5))[:1]
        assert all(r.dense_score is not None and r.text and r.metadata["doc_id"] == r.doc_id for r in ours)
    assert milvus.abstracts(["002_bf171d658999aba6#15"]) == chroma.abstracts(["002_bf171d658999aba6#15"])
    assert milvus.records(["002_bf171d658999aba6#15"]) == chroma.records(["002_bf171d658999aba6#15"])
    assert milvus.papers() == chroma.papers()


def test_milvus_filters_as_chroma_does(milvus_settings: Settings, seeds_settings: Settings) -> None:
    milvus, chroma = Library(milvus_settings), Library(seeds_settings)
    rows = chroma.papers()
    author = rows[7]["authors"].split("; ")[0].split(",")[0]
    by_author = {r["doc_id"] for r in rows if author.lower() in r["authors"].lower()}
    for filters, wanted in (
        ({"venue": "iclr"}, {r["doc_id"] for r in rows if r["venue"] == "ICLR"}),
        ({"year": 2023, "year_to": 2024}, {r["doc_id"] for r in rows}),
        ({"author": author.upper()}, by_author),
    ):
        for mode in ("dense", "keyword"):  # each ranking as Chroma's, within the filter
            same_ranking(milvus, chroma, Query("language models", k=10, mode=mode, **filters))
        fused = doc_ids(milvus, Query("language models", k=10, **filters))
        assert fused and set(fused) <= wanted, filters
    with pytest.raises(BadInput, match="unknown venue 'Nature'"):
        milvus.search(Query("language models", venue="Nature"))
    with pytest.raises(BadInput, match="no indexed abstract is from 1990"):
        milvus.search(Query("language models", year=1990))
    assert milvus.search(Query("language models", author="nobody-of-that-name")) == []


def exact_weights(settings: Settings, words: list[str]) -> dict[str, float]:
    """The idf of each word counted afresh from every stored chunk's text (the gate's weights, by hand)."""
    from rag.index.stores import open_store
    from rag.terms import idf, tokenize

    chunks = open_store(settings, create=False)
    assert chunks is not None
    texts = [text for _, text, _ in chunks.iter_chunks()]
    holding = Counter(word for words in tokenize(texts) for word in set(words))
    return {word: idf(holding[word], len(texts)) for word in words}


def test_the_embedded_milvus_keeps_its_word_counts_exact(tmp_path: Path, model_cache: Path) -> None:
    """The gate's idf comes from counts kept beside the embedded store (milvus-lite counts a word by reading every
    row: minutes a question at 100,000 abstracts). They follow adds, replacements and removals; a write that fails
    (here a real one: a vector of the wrong size) leaves them pending and they are counted again; a store opened
    while another writes waits for the write; missing counts are counted again."""
    from llama_index.core.schema import TextNode
    from test_ingest import PUBMED

    from rag.index.stores import open_store
    from rag.index.word_counts import WordCounts, counts_path, drop_counts

    settings = Settings(_env_file=None, data_dir=tmp_path, model_cache=model_cache, store="milvus", chroma_host=None)
    papers = [json.loads(line) for line in PUBMED.read_text().splitlines()[:12]]
    ingest([write_jsonl(tmp_path / "some.jsonl", papers)], settings)
    ingest([write_jsonl(tmp_path / "new.jsonl", [NEW_PAPER])], settings)
    changed = [{**papers[0], "abstract": papers[0]["abstract"] + " Zebrafish fins were not studied."}]
    ingest([write_jsonl(tmp_path / "changed.jsonl", changed)], settings)
    Library(settings).remove([papers[1]["doc_id"], papers[2]["doc_id"]])
    question = "zebrafish fin studies of patients, not wordnochunkholds"
    kept = Library(settings).term_weights(question)
    assert len(kept) == 5 and kept == pytest.approx(exact_weights(settings, list(kept)))
    path = counts_path(settings.milvus_target, settings.collection)
    stored = open_store(settings, create=False)
    assert stored is not None and WordCounts(path, stored.count, list).state() == (stored.count(), 0)
    broken = TextNode(id_="zebrafish-broken#0", text="zebrafish zebrafish fin", embedding=[0.1, 0.2])
    with pytest.raises(Exception, match=r"(?i)dim"):
        stored.add([broken])
    assert WordCounts(path, stored.count, list).state()[1] == 1  # pending: counted again at the next check
    assert Library(settings).term_weights(question) == pytest.approx(kept)
    writing = WordCounts(path, stored.count, list).updating()
    writing.__enter__()  # a write in progress in this process
    waited: list[dict[str, float]] = []
    reader = threading.Thread(target=lambda: waited.append(Library(settings).term_weights(question)))
    reader.start()
    reader.join(timeout=3)
    assert reader.is_alive() and not waited  # a store that must check its counts waits for the write
    writing.__exit__(None, None, None)  # the write failed: left pending
    reader.join(timeout=60)
    assert waited == [pytest.approx(kept)]
    drop_counts(path)  # an index made before the counts were kept
    assert Library(settings).term_weights(question) == pytest.approx(kept)


@pytest.mark.slow
def test_milvus_ingest_is_idempotent_and_syncs_removes_and_answers(tmp_path: Path, cli_env: dict[str, str]) -> None:
    env = {**cli_env, "RAG_STORE": "milvus"}
    assert run_rag("ingest", str(SEEDS), env=env).returncode == 0
    again = run_rag("ingest", str(SEEDS), env=env)
    assert "unchanged 95" in again.stdout, again.stdout + again.stderr
    answer = run_rag("ask", "What is sharpness-aware minimization?", "--llm", "extractive", "--json", env=env)
    cited = json.loads(answer.stdout)["citations"]
    assert answer.returncode == 0 and cited, answer.stderr
    gone = cited[0]["doc_id"]
    assert run_rag("remove", gone, env=env).returncode == 0
    stats = json.loads(run_rag("stats", "--json", env=env).stdout)
    assert stats["abstracts"] == 94 and stats["store"].startswith("embedded milvus")
    after = json.loads(run_rag("search", "sharpness-aware minimization", "--json", env=env).stdout)
    assert gone not in [r["doc_id"] for r in after["results"]]
    doctor = run_rag("doctor", env=env)
    assert doctor.returncode == 0 and "every paper has all its chunks" in doctor.stdout, doctor.stdout
    one = write_jsonl(tmp_path / "one.jsonl", [NEW_PAPER])
    synced = run_rag("ingest", str(one), "--sync", env=env)
    assert "removed 94" in synced.stdout, synced.stdout + synced.stderr
    assert json.loads(run_rag("stats", "--json", env=env).stdout)["abstracts"] == 1
    rebuilt = run_rag("ingest", str(SEEDS), "--rebuild", env=env)
    assert rebuilt.returncode == 0 and json.loads(run_rag("stats", "--json", env=env).stdout)["abstracts"] == 95


def test_migrate_moves_an_index_between_the_stores_keeping_ids_and_vectors(
    seeds_settings: Settings, tmp_path: Path
) -> None:
    from rag.index.stores import open_store

    to_milvus = seeds_settings.model_copy(update={"store": "milvus", "data_dir": tmp_path / "milvus"})
    back = seeds_settings.model_copy(update={"data_dir": tmp_path / "chroma"})
    assert Library(seeds_settings).migrate_to(to_milvus).chunks == 288
    assert Library(to_milvus).migrate_to(back).chunks == 288
    original, there, returned = (open_store(s, create=False) for s in (seeds_settings, to_milvus, back))
    assert original and there and returned and there.precision() == returned.precision() == original.precision()
    rows = {cid: (text, vector) for cid, text, _, vector in original.iter_vectors()}
    for copy in (there, returned):
        copied = {cid: (text, vector) for cid, text, _, vector in copy.iter_vectors()}
        assert copied.keys() == rows.keys()
        for cid, (text, vector) in copied.items():
            assert text == rows[cid][0] and vector == pytest.approx(rows[cid][1], abs=1e-6)
    assert Library(back).papers() == Library(seeds_settings).papers()
    for question in [q["question"] for q in load_questions()[:5]]:
        assert doc_ids(Library(back), Query(question)) == doc_ids(Library(seeds_settings), Query(question))
    with pytest.raises(BadInput, match="the same index"):
        Library(seeds_settings).migrate_to(seeds_settings)


@pytest.mark.slow
def test_a_killed_milvus_ingest_is_completed_by_the_next_run(cli_env: dict[str, str], tmp_path: Path) -> None:
    """Kill -9 a real `rag ingest` into the embedded Milvus after its first stored batch; the re-run must end with
    exactly the right chunks, and `rag eval` then scores retrieval over the index."""
    from test_ingest import PUBMED, expected_chunk_ids

    from rag.index.stores import open_store

    corpus = write_jsonl(tmp_path / "part.jsonl", [json.loads(line) for line in PUBMED.read_text().splitlines()[:240]])
    env = {**cli_env, "RAG_STORE": "milvus", "RAG_INGEST_BATCH_SIZE": "40"}
    proc = subprocess.Popen([sys.executable, "-m", "rag", "ingest", str(corpus), "-v"], env=env, cwd=SEEDS.parent,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
    for line in proc.stdout or []:
        if line.startswith("stored "):
            proc.send_signal(signal.SIGKILL)
            break
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL, "the ingest finished before it could be killed"
    settings = Settings(_env_file=None, data_dir=Path(env["RAG_DATA_DIR"]), store="milvus",
                        model_cache=Path(env["RAG_MODEL_CACHE"]))  # fmt: skip
    expected = expected_chunk_ids([corpus], settings)

    def stored() -> list[str]:
        """The stored chunk ids, read by another process (the embedded edition serves one process at a time)."""
        script = (
            "import json; from rag.index.stores import open_store; from rag.settings import Settings; "
            "chunks = open_store(Settings(store='milvus'), create=False); "
            "print(json.dumps([chunk_id for chunk_id, _, _ in chunks.iter_chunks()]))"
        )
        read = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
        return json.loads(read.stdout)

    assert len(stored()) < len(expected)
    rerun = run_rag("ingest", str(corpus), env=env)
    assert rerun.returncode == 0, rerun.stderr
    final = stored()
    assert len(final) == len(set(final)) == len(expected) and set(final) == expected
    questions = [json.loads(line) for line in (PUBMED.parent / "dev_questions.jsonl").read_text().splitlines()]
    mine = write_jsonl(tmp_path / "q.jsonl", [q for q in questions if set(q["gold"]) <= {json.loads(line)["doc_id"]
                       for line in corpus.read_text().splitlines()}][:20])  # fmt: skip
    scored = run_rag("eval", str(mine), "--retrieval-only", "--out", str(tmp_path / "report"), env=env)
    assert scored.returncode == 0, scored.stderr
    runs = json.loads((tmp_path / "report" / "report.json").read_text())["runs"]
    assert runs and all(run["metrics"]["recall@5"] > 0.8 for run in runs), runs
    held = open_store(settings, create=False)  # this process now holds the embedded store: others are told so
    assert held is not None and held.count() == len(expected)
    words = ["patient", "studi", "not", "cancer", "wordnochunkholds"]  # counts the kill left are made good
    assert held.term_weights(words) == pytest.approx(exact_weights(settings, words))
    busy = run_rag("search", "anything", env=env)
    assert busy.returncode == 2 and busy.stderr.count("\n") == 1 and "is open in another process" in busy.stderr


@pytest.mark.slow
def test_an_unreachable_milvus_is_one_line_and_exit_2(cli_env: dict[str, str]) -> None:
    uri = f"http://127.0.0.1:{free_port()}"
    failed = run_rag("search", "anything", env={**cli_env, "RAG_STORE": "milvus", "MILVUS_URI": uri}, timeout=120)
    assert failed.returncode == 2
    assert failed.stderr.strip().count("\n") == 0 and f"cannot reach Milvus at {uri}" in failed.stderr
    bad = run_rag("migrate", "--to-store", "qdrant", env=cli_env)
    assert bad.returncode == 2 and "unknown --to-store 'qdrant'" in bad.stderr
    older = Path(cli_env["RAG_DATA_DIR"]) / "milvus.db"  # an embedded index of milvus-lite 3 was a folder
    older.mkdir(parents=True)
    refused = run_rag("stats", env={**cli_env, "RAG_STORE": "milvus"})
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert "index of milvus-lite 3 (a folder)" in refused.stderr and not any(older.iterdir())
    misnamed = run_rag("stats", env={**cli_env, "RAG_STORE": "milvus", "MILVUS_URI": str(older.parent / "index")})
    assert misnamed.returncode == 2 and "a file whose name ends in .db" in misnamed.stderr, misnamed.stderr
    named = older.parent / "mine.db"  # a file in MILVUS_URI, which pymilvus itself would refuse when imported
    mine = run_rag("stats", "--json", env={**cli_env, "RAG_STORE": "milvus", "MILVUS_URI": str(named)})
    assert mine.returncode == 0 and json.loads(mine.stdout)["store"] == f"embedded milvus in {named}", mine.stderr


def search(base: str, query: str, k: int = 5) -> list[str]:
    response = httpx.post(f"{base}/v1/search", json={"query": query, "k": k}, timeout=60)
    assert response.status_code == 200, response.text
    return [r["doc_id"] for r in response.json()["results"]]


@pytest.mark.slow
def test_replicas_and_workers_share_one_milvus_server(tmp_path: Path, model_cache: Path, cli_env: dict) -> None:
    port = free_port()
    server = start_milvus(tmp_path / "milvus.db", port, tmp_path / "milvus.log")
    uri = f"http://127.0.0.1:{port}"
    shared = {"RAG_STORE": "milvus", "MILVUS_URI": uri}
    replicas = []
    try:
        # two ingest workers at once, each its own files, into one collection
        halves = sorted(SEEDS.iterdir())
        (tmp_path / "a").mkdir()
        (tmp_path / "b").mkdir()
        for i, path in enumerate(halves):
            shutil.copy(path, tmp_path / ("a" if i % 2 else "b") / path.name)
        workers = [
            subprocess.Popen([sys.executable, "-m", "rag", "ingest", str(tmp_path / part)], env={**cli_env, **shared},
                             cwd=SEEDS.parent, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for part in ("a", "b")
        ]  # fmt: skip
        for worker in workers:
            _, err = worker.communicate(timeout=600)
            assert worker.returncode == 0, err
        stats = json.loads(run_rag("stats", "--json", env={**cli_env, **shared}).stdout)
        assert stats["abstracts"] == 95 and stats["store"] == f"milvus server {uri}"
        served = Settings(_env_file=None, data_dir=tmp_path / "client", model_cache=model_cache, store="milvus",
                          milvus_uri=uri)  # fmt: skip
        kept = Library(served).term_weights("sharpness of language models, wordnochunkholds")  # no TEXT_MATCH here
        assert len(kept) >= 3 and kept == pytest.approx(exact_weights(served, list(kept)))

        for name in ("one", "two"):  # replicas on machines of their own: each its own data directory
            replicas.append(start_rag("serve", tmp_path / name, model_cache, tmp_path / f"{name}.log", **shared))
        bases = [base for _, base in replicas]
        for question in ("sharpness-aware minimization", "protein language model atoms", "detecting LLM text"):
            assert search(bases[0], question) == search(bases[1], question)
        asked = {"model": "abstracts-rag:extractive", "messages": [{"role": "user", "content": "What is SAM?"}]}
        answers = [httpx.post(f"{base}/v1/chat/completions", json=asked, timeout=120).json() for base in bases]
        assert (
            answers[0]["citations"]
            and [a["choices"][0]["message"]["content"] for a in answers]
            == [answers[0]["choices"][0]["message"]["content"]] * 2
        )

        paper = write_jsonl(tmp_path / "new.jsonl", [NEW_PAPER])
        added = run_rag("ingest", str(paper), env={**cli_env, **shared})
        assert added.returncode == 0, added.stderr
        ingested = time.monotonic()
        seen: dict[str, float] = {}
        while len(seen) < 2 and time.monotonic() - ingested < 5:
            for base in bases:
                if base not in seen and "zebrafish-fins" in search(base, "zebrafish fin regeneration osteoblasts"):
                    seen[base] = time.monotonic() - ingested
        assert len(seen) == 2, f"the new paper was searchable on {len(seen)} of 2 replicas within 5 s"
        assert not any((tmp_path / name / "keyword").exists() for name in ("one", "two"))

        # the server goes away mid-load: a clear error, then answers again once it is back
        server.terminate()
        server.wait(timeout=60)
        down = httpx.post(f"{bases[0]}/v1/search", json={"query": "attention", "k": 3}, timeout=120)
        assert down.status_code == 503 and f"Milvus at {uri} did not answer" in down.json()["error"]["message"]
        server = start_milvus(tmp_path / "milvus.db", port, tmp_path / "milvus.log")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            back = httpx.post(f"{bases[0]}/v1/search", json={"query": "zebrafish fins", "k": 3}, timeout=120)
            if back.status_code == 200:
                break
            time.sleep(1)
        assert back.status_code == 200 and back.json()["results"][0]["doc_id"] == "zebrafish-fins"

        # a replica restarted under load serves again
        proc, _ = replicas.pop(0)
        proc.kill()
        proc.wait(timeout=30)
        started = time.monotonic()
        replicas.insert(0, start_rag("serve", tmp_path / "one", model_cache, tmp_path / "one-again.log", **shared))
        assert time.monotonic() - started < 30
        assert search(replicas[0][1], "zebrafish fins", 1) == ["zebrafish-fins"]
    finally:
        for proc, _ in replicas:
            proc.terminate()
            proc.wait(timeout=30)
        server.terminate()
        server.wait(timeout=60)


@pytest.mark.slow
def test_the_web_app_indexes_and_answers_from_the_embedded_milvus(tmp_path: Path, model_cache: Path) -> None:
    """`rag ui --seed` (what `make run` starts) with RAG_STORE=milvus, in a real browser: the seeds are indexed by the
    app's own process (milvus-lite serves one process), an answer cites them and a citation opens its abstract."""
    from playwright.sync_api import sync_playwright
    from test_ui import CHROMIUM_ARGS, ask, open_page

    proc, base = start_rag("ui", tmp_path / "data", model_cache, tmp_path / "ui.log", "/", ("--seed", str(SEEDS)),
                           RAG_STORE="milvus")  # fmt: skip
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = open_page(browser, tmp_path / "ui.log", viewport={"width": 1400, "height": 950})
            page.goto(f"{base}/")
            page.wait_for_function("document.querySelector('#corpus-line')?.innerText.includes('95 abstracts')",
                                   timeout=180_000)  # fmt: skip
            answer = ask(page, "Which approach lets a protein language model work at both the residue and the atom "
                               "scale?", 1)  # fmt: skip
            assert "[1]" in answer
            page.locator("#chat a.cite").first.click()
            assert "000_c1913070b188e76b#8" in page.locator("#sources details[open]").first.inner_text()
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert (tmp_path / "data" / "milvus.db").is_file() and not (tmp_path / "data" / "chroma").exists()
