"""`rag serve` over real HTTP: the real service in a subprocess over the seed index, spoken to with the official
openai client and with raw httpx (SSE framing), with API keys off (the open server) and on (a second server with
tight limits, over its own copy of the index, for auth, 413, 429 and ingest)."""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import threading
import time
from pathlib import Path

import httpx
import pytest
from conftest import free_port, run_rag, start_rag, write_jsonl

from rag.records import Query
from rag.text import MARKER

pytestmark = pytest.mark.slow

SAM_QUESTION = "Can sharpness-aware minimization alone make a classifier more robust to adversarial attacks?"
SAM_DOC = "000_c1913070b188e76b#5"
KEY = "test-key-123"


@pytest.fixture(scope="module")
def service_process(seeds_settings, model_cache, tmp_path_factory):
    """The open service (no keys, the default limits): its process and base url."""
    proc, base = start_rag("serve", seeds_settings.data_dir, model_cache, tmp_path_factory.mktemp("serve") / "log")
    yield proc, base
    proc.terminate()
    proc.wait(timeout=30)


@pytest.fixture(scope="module")
def service(service_process) -> str:
    return service_process[1]


@pytest.fixture(scope="module")
def guarded(seeds_settings, model_cache, tmp_path_factory):
    """A second service with an API key, one request at a time and none waiting, a 1 MB body limit, and its own
    copy of the index (ingest writes to it)."""
    data = tmp_path_factory.mktemp("guarded") / "data"
    shutil.copytree(seeds_settings.data_dir, data)
    limits = {"RAG_API_KEYS": f"other,{KEY}", "RAG_API_CONCURRENCY": "1", "RAG_API_QUEUE": "0",
              "RAG_API_MAX_BODY_MB": "1"}  # fmt: skip
    proc, base = start_rag("serve", data, model_cache, data.parent / "log", **limits)
    yield base
    proc.terminate()
    proc.wait(timeout=30)


def client(base: str, key: str = "unused"):  # type: ignore[no-untyped-def]
    from openai import OpenAI

    return OpenAI(base_url=f"{base}/v1", api_key=key, max_retries=0)


def assert_annotations_point_at_markers(text: str, annotations: list, citations: list[dict]) -> None:
    markers = [(m.start(), m.end()) for m in MARKER.finditer(text)]
    spans = [(a["url_citation"]["start_index"], a["url_citation"]["end_index"]) for a in annotations]
    assert spans == markers and spans  # one annotation per [n] in the text, at its exact span
    urls = {f"abstracts-rag://{c['doc_id'].replace('#', '%23')}" for c in citations}
    assert {a["url_citation"]["url"] for a in annotations} == urls
    assert all(a["type"] == "url_citation" for a in annotations)


def test_a_completion_carries_the_answer_its_annotations_and_the_citations_of_rag_ask(service, engine) -> None:
    reply = client(service).chat.completions.create(
        model="abstracts-rag:extractive", messages=[{"role": "user", "content": SAM_QUESTION}]
    )
    expected = engine.ask(SAM_QUESTION, "extractive").contract()
    message = reply.choices[0].message
    assert message.content == expected["answer"] and reply.choices[0].finish_reason == "stop"
    data = reply.model_dump()
    assert data["citations"] == expected["citations"] and data["citations"][0]["doc_id"] == SAM_DOC
    assert_annotations_point_at_markers(
        message.content, data["choices"][0]["message"]["annotations"], expected["citations"]
    )
    # The cited papers as CSL-JSON, for a reference manager: one item per cited paper, its id the doc_id.
    assert [item["id"] for item in data["references"]] == [c["doc_id"] for c in expected["citations"]]
    assert all(item["type"] and item["abstract"] for item in data["references"])


def test_a_streamed_answer_sends_only_verified_sentences_then_annotations(service) -> None:
    stream = client(service).chat.completions.create(
        model="abstracts-rag:local", messages=[{"role": "user", "content": SAM_QUESTION}], stream=True
    )
    chunks = [c.model_dump() for c in stream]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)
    last = chunks[-1]
    assert last["choices"][0]["finish_reason"] == "stop" and "citations" in last
    assert SAM_DOC in [c["doc_id"] for c in last["citations"]]
    assert {item["id"] for item in last["references"]} == {c["doc_id"] for c in last["citations"]}
    assert_annotations_point_at_markers(text, last["choices"][0]["delta"]["annotations"], last["citations"])
    for sentence in [c["choices"][0]["delta"].get("content") for c in chunks[1:-1]]:
        assert sentence and MARKER.search(sentence)  # every content chunk is a whole, cited sentence


def test_sse_framing_ends_with_done(service) -> None:
    body = {
        "model": "abstracts-rag:extractive",
        "stream": True,
        "messages": [{"role": "user", "content": SAM_QUESTION}],
    }
    with httpx.stream("POST", f"{service}/v1/chat/completions", json=body, timeout=120) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        raw = "".join(response.iter_text())
    events = [e for e in raw.split("\n\n") if e]
    assert all(e.startswith("data: ") for e in events) and events[-1] == "data: [DONE]"
    chunks = [json.loads(e.removeprefix("data: ")) for e in events[:-1]]
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert all(c["object"] == "chat.completion.chunk" and c["id"] == chunks[0]["id"] for c in chunks)


def test_a_follow_up_is_answered_from_the_conversation_and_a_refusal_is_a_normal_completion(service) -> None:
    first = "Which approach lets a protein language model work at both the residue and the atom scale?"
    messages = [
        {"role": "user", "content": first},
        {"role": "assistant", "content": "ESM-AA (ESM All-Atom) enables atom-scale and residue-scale modeling [1]."},
        {"role": "user", "content": "Which tasks did they test it on?"},
    ]  # fmt: skip
    reply = client(service).chat.completions.create(model="abstracts-rag:extractive", messages=messages)
    assert "000_c1913070b188e76b#8" in [c["doc_id"] for c in reply.model_dump()["citations"]]
    refusal = client(service).chat.completions.create(
        model="abstracts-rag", messages=[{"role": "user", "content": "How long should sourdough ferment at altitude?"}]
    )
    assert refusal.choices[0].message.content == "The indexed abstracts do not answer this question."
    assert refusal.model_dump()["citations"] == [] and refusal.choices[0].message.annotations in (None, [])
    nearest = refusal.model_dump()["nearest"]
    assert len(nearest) == 3 and all(paper["sentence"] and paper["terms"] for paper in nearest)
    chatgpt = [{"role": "user", "content": "Is there a way to tell whether a text was written by ChatGPT?"}]
    turned_away = client(service).chat.completions.create(model="abstracts-rag:extractive", messages=chatgpt)
    anyway = client(service).chat.completions.create(
        model="abstracts-rag:extractive", messages=chatgpt, extra_body={"answer_anyway": True}
    )  # the refusal is not final: the client may ask for an answer from the closest papers, still verified
    assert turned_away.model_dump()["citations"] == [] and anyway.model_dump()["citations"]
    assert anyway.model_dump()["note"].startswith("Answered as asked")


def test_models_search_stats_and_errors(service) -> None:
    ids = [m.id for m in client(service).models.list()]
    assert ids[0] == "abstracts-rag" and {"abstracts-rag:extractive", "abstracts-rag:local"} <= set(ids)
    found = httpx.post(f"{service}/v1/search", json={"query": "sharpness-aware minimization", "k": 3}).json()
    assert found["results"][0]["doc_id"] == SAM_DOC and len(found["results"]) == 3
    assert httpx.get(f"{service}/v1/stats").json()["abstracts"] == 95

    def error(response: httpx.Response, status: int) -> dict:
        assert response.status_code == status
        return response.json()["error"]

    chat = f"{service}/v1/chat/completions"
    assert error(httpx.post(chat, json={"model": "gpt-4", "messages": [{"role": "user", "content": "x"}]}), 404)[
        "code"] == "model_not_found"  # fmt: skip
    assert "last message" in error(httpx.post(chat, json={"messages": []}), 400)["message"]
    assert "empty" in error(httpx.post(chat, json={"messages": [{"role": "user", "content": "  "}]}), 400)["message"]
    assert error(httpx.post(chat, json={"messages": "nope"}), 400)["type"] == "invalid_request_error"
    unusable = {"model": "abstracts-rag:openai", "messages": [{"role": "user", "content": SAM_QUESTION}]}
    assert error(httpx.post(chat, json=unusable), 503)["code"] == "llm_unavailable"  # no OPENAI_API_KEY here
    assert httpx.get(f"{service}/docs").status_code == 200  # OpenAPI docs from FastAPI


def test_keys_limits_and_ingest_on_a_guarded_service(guarded, tmp_path) -> None:
    assert httpx.get(f"{guarded}/healthz").status_code == 200  # open without a key
    assert httpx.get(f"{guarded}/v1/stats").status_code == 401
    assert httpx.get(f"{guarded}/docs").status_code == 401
    assert httpx.get(f"{guarded}/v1/stats", headers={"Authorization": "Bearer wrong"}).status_code == 401
    auth = {"Authorization": f"Bearer {KEY}"}
    assert httpx.get(f"{guarded}/v1/stats", headers=auth).json()["abstracts"] == 95
    big = httpx.post(f"{guarded}/v1/search", headers=auth, content=b"x" * 1_100_000)
    assert big.status_code == 413 and big.json()["error"]["message"]

    abstract = "We introduce QuokkaNet, a marsupial-inspired optimizer. QuokkaNet halves ResNet-50's training time."
    paper = {"doc_id": "new-1", "title": "Quokka gradients", "abstract": abstract, "venue": "TestConf", "year": 2025}
    files = {"file": ("new.jsonl", json.dumps(paper) + "\n{broken\n", "application/jsonl")}
    report = httpx.post(f"{guarded}/v1/ingest", headers=auth, files=files, timeout=120).json()
    assert (report["added"], report["rejected"]) == (1, 1) and report["problems"][0].startswith("new.jsonl:2")
    found = httpx.post(f"{guarded}/v1/search", headers=auth, json={"query": "QuokkaNet optimizer", "k": 1}).json()
    assert found["results"][0]["doc_id"] == "new-1"

    burst = {"model": "abstracts-rag:local", "messages": [{"role": "user", "content": SAM_QUESTION}]}
    statuses: list[httpx.Response] = []

    def ask() -> None:
        statuses.append(httpx.post(f"{guarded}/v1/chat/completions", headers=auth, json=burst, timeout=120))

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    codes = sorted(r.status_code for r in statuses)
    assert codes[0] == 200 and 429 in codes  # one at a time, none waiting: the rest are turned away
    refused = next(r for r in statuses if r.status_code == 429)
    assert refused.headers["retry-after"] and refused.json()["error"]["type"] == "rate_limit_error"

    # Clients that hang up before their stream starts give their place back: with one place, a single lost one
    # would turn every later request away.
    body = json.dumps({**burst, "model": "abstracts-rag:extractive", "stream": True}).encode()
    head = f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\n"
    head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    for _ in range(3):
        with socket.create_connection((httpx.URL(guarded).host, httpx.URL(guarded).port)) as hung_up:
            hung_up.sendall(head.encode() + body)
    # The abandoned answers may still be finishing in a worker thread (a thread cannot be stopped): the place comes
    # back when that work ends, so a client honouring Retry-After is served within a bounded wait.
    assert [served_within(f"{guarded}/v1/chat/completions", auth, burst, 90) for _ in range(2)] == [200, 200]


def served_within(url: str, headers: dict, body: dict, seconds: float) -> int:
    """POST as a polite client would: on 429, wait as Retry-After says and try again, for at most `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        response = httpx.post(url, headers=headers, json=body, timeout=120)
        if response.status_code != 429 or time.monotonic() > deadline:
            return response.status_code
        time.sleep(float(response.headers["retry-after"]))


def test_serving_beyond_loopback_needs_keys(cli_env) -> None:
    result = run_rag("serve", "--host", "0.0.0.0", "--port", str(free_port()), env=cli_env, timeout=60)
    assert result.returncode == 2 and "RAG_API_KEYS" in result.stderr and len(result.stderr.splitlines()) == 1


def test_embeddings_from_a_server_match_the_local_model(model_cache, make_settings, tmp_path) -> None:
    """`rag serve` as another machine's embeddings server (OpenAI /v1/embeddings): an ingest and searches that use
    RAG_EMBEDDING_BASE_URL get the local model's vectors (fp32 on both sides), and a dead server is one line."""
    from rag.index import store
    from rag.index.ingest import ingest
    from rag.index.library import Library
    from rag.index.models import embedder_for

    served = make_settings(data_dir=tmp_path / "served", embedding_precision="fp32")
    papers = [{"doc_id": "sam", "abstract": "Sharpness-aware minimization finds flat minima."}]
    ingest([write_jsonl(tmp_path / "seed.jsonl", papers)], served)
    proc, base = start_rag(
        "serve", served.data_dir, model_cache, tmp_path / "serve.log", RAG_EMBEDDING_PRECISION="fp32"
    )
    try:
        remote = make_settings(
            data_dir=tmp_path / "remote", embedding_base_url=f"{base}/v1", embedding_api_batch_size=2
        )
        texts = ["Graph neural networks oversmooth.", "Serum hCG immunoassays differ.", "A", "Flat minima generalize."]
        here, there = embedder_for(served, "fp32").embed(texts), embedder_for(remote, None).embed(texts)
        assert there.shape == here.shape and float((here * there).sum(axis=1).min()) >= 0.99
        corpus = write_jsonl(tmp_path / "c.jsonl", [*papers, {"doc_id": "gnn", "abstract": texts[0]}])
        assert ingest([corpus], remote).added == 2
        assert store.index_precision(store.open_collection(remote, create=False)) == "fp32"
        assert Library(remote).search(Query("oversmoothing in deep graph networks", 1, mode="dense"))[0].doc_id == "gnn"
        local = remote.model_copy(update={"embedding_base_url": None, "embedding_precision": "fp32"})
        assert Library(local).search(Query("oversmoothing in deep graph networks", 1, mode="dense"))[0].doc_id == "gnn"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    dead = remote.model_copy(update={"embedding_base_url": f"{base}/v1", "llm_timeout_s": 2.0})
    with pytest.raises(RuntimeError, match=r"the embeddings server at .* failed"):
        embedder_for(dead, None).embed(["anything"])


def test_a_server_giving_vectors_per_token_is_refused_in_one_line(tmp_path) -> None:
    """llama-cpp-python's OpenAI-compatible server in embedding mode: with the bundled chat model (no pooling) it
    answers one vector per token, which cannot stand for a text."""
    from conftest import start_llama_server

    from rag.index.embedder import RemoteEmbedder

    proc, base_url = start_llama_server(tmp_path / "llama.log", "--embedding", "true")
    try:
        embedder = RemoteEmbedder(base_url, "smollm2", None, batch_size=2, timeout=60)
        with pytest.raises(RuntimeError, match="did not return one vector per text") as refused:
            embedder.embed(["Flat minima generalize.", "Graph networks oversmooth."])
        assert len(str(refused.value).splitlines()) == 1
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_stream_whose_client_left_before_its_first_byte_gives_its_place_back() -> None:
    # Mocked fault: a server's send failing before the stream starts (how Starlette learns, under ASGI 2.4, that the
    # client hung up) cannot be caused on demand through a real server, so `send` here is a stand-in that fails.
    import asyncio

    from starlette.requests import ClientDisconnect

    from rag.frontends.http.admission import Admission, AdmittedStream

    admission = Admission(running=1, waiting=0)
    place = admission.admit()

    async def chunks():  # type: ignore[no-untyped-def]
        yield "data: never sent\n\n"

    async def receive() -> dict:
        return {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        raise OSError("the client hung up")

    with pytest.raises(ClientDisconnect):
        asyncio.run(AdmittedStream(chunks(), place)({"type": "http", "asgi": {"spec_version": "2.4"}}, receive, send))
    admission.admit()  # the only place is free again (a lost one would raise the 429 here)


def rss_mb(pid: int) -> float:
    return int(next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                    if line.startswith("VmRSS:")).split()[1]) / 1024  # fmt: skip


def chunked_post(base: str, path: str, total: int) -> tuple[int, int]:
    """POST `total` bytes with chunked framing over a raw socket, stopping once the server answers or hangs up:
    (the status it answered, bytes sent)."""
    url = httpx.URL(base)
    answer = bytearray()
    answered = threading.Event()
    sent = 0
    with socket.create_connection((url.host, url.port), timeout=60) as conn:

        def read() -> None:
            with contextlib.suppress(OSError):
                while b"\r\n" not in answer and (data := conn.recv(4096)):
                    answer.extend(data)
            answered.set()

        threading.Thread(target=read, daemon=True).start()
        conn.sendall(f"POST {path} HTTP/1.1\r\nHost: {url.host}:{url.port}\r\nContent-Type: application/json\r\n"
                     "Transfer-Encoding: chunked\r\n\r\n".encode())  # fmt: skip
        chunk = b"x" * 65_536
        with contextlib.suppress(OSError):
            while sent < total and not answered.is_set():
                conn.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                sent += len(chunk)
        answered.wait(30)
    return int(bytes(answer).split(b" ", 2)[1]), sent


def test_the_open_service_guards_hosts_origins_bodies_and_paths(service_process, seeds_settings) -> None:
    proc, service = service_process
    stats = f"{service}/v1/stats"
    rebinding = httpx.get(stats, headers={"Host": "evil.example"})
    assert rebinding.status_code == 403 and rebinding.json()["error"]["code"] == "host_not_allowed"
    files = {"file": ("p.jsonl", json.dumps({"doc_id": "planted", "abstract": "Planted. Text."}), "text/plain")}
    planted = httpx.post(f"{service}/v1/ingest", files=files, headers={"Origin": "http://evil.example"})
    assert planted.status_code == 403 and planted.json()["error"]["code"] == "origin_not_allowed"
    assert httpx.get(stats, headers={"Origin": "http://evil.example"}).status_code == 403  # reads too
    own = httpx.post(f"{service}/v1/search", json={"query": "SAM", "k": 1}, headers={"Origin": service})
    assert own.status_code == 200  # the server's own origin
    assert httpx.get(stats, headers={"Host": "localhost"}).status_code == 200

    # Every error in OpenAI's shape, no server path in any answer.
    assert httpx.get(f"{service}/v1/nowhere").json()["error"]["message"]
    deep = httpx.post(f"{service}/v1/search", content=b"[" * 100_000, headers={"Content-Type": "application/json"})
    assert deep.status_code == 400 and deep.json()["error"]["type"] == "invalid_request_error"
    nested = {"model": "abstracts-rag", "messages": [{"role": "user", "content": [[1]]}]}
    assert "messages.0.content" in httpx.post(f"{service}/v1/chat/completions", json=nested).json()["error"]["message"]
    assert httpx.put(f"{service}/v1/search", json={}).json()["error"]["message"] == "Method Not Allowed"
    assert str(seeds_settings.data_dir) not in httpx.get(stats).text
    for name, status in (("..", 400), ("", 400), ("CON.jsonl", 400), (".env", 400), ("../../empty.jsonl", 400)):
        answer = httpx.post(f"{service}/v1/ingest", files={"file": (name, b"", "text/plain")})
        assert answer.status_code == status, (name, answer.text)
        assert "/tmp" not in answer.text and str(Path.home()) not in answer.text, answer.text
    assert httpx.post(f"{service}/v1/ingest", files={"file": ("../../empty.jsonl", b"", "text/plain")}).json()[
        "error"]["message"] == "empty.jsonl: the file is empty"  # fmt: skip

    # Embeddings: bounded inputs per request and characters per input.
    embeddings = f"{service}/v1/embeddings"
    assert httpx.post(embeddings, json={"input": ["a"] * 2049}).status_code == 400
    assert "32,000" in httpx.post(embeddings, json={"input": "a" * 32_001}).json()["error"]["message"]

    # A 150 MB chunked body is refused once it passes the 20 MB limit; the server does not keep what it read.
    before = rss_mb(proc.pid)
    status, sent = chunked_post(service, "/v1/search", 150_000_000)
    assert status == 413 and sent < 60_000_000, sent  # refused near the limit, not after the whole body
    assert rss_mb(proc.pid) - before < 25, (before, rss_mb(proc.pid))  # what the app buffered up to the limit
    assert httpx.get(stats).status_code == 200  # and it goes on serving


def test_keys_are_bearer_only_and_cross_origin_writes_are_refused_with_keys(guarded) -> None:
    stats = f"{guarded}/v1/stats"
    assert httpx.get(stats, headers={"Authorization": KEY}).status_code == 401  # no "Bearer "
    assert httpx.get(stats, headers={"Authorization": f"Token {KEY}"}).status_code == 401
    bearer = {"Authorization": f"bearer {KEY}"}  # the scheme is case-insensitive
    assert httpx.get(stats, headers=bearer).status_code == 200
    assert httpx.get(stats, headers={**bearer, "Host": "any.name.example"}).status_code == 200  # keys: any name
    write = httpx.post(
        f"{guarded}/v1/search", json={"query": "SAM"}, headers={**bearer, "Origin": "http://evil.example"}
    )
    assert write.status_code == 403


def test_retry_after_spreads_a_burst_over_the_time_the_line_takes() -> None:
    from rag.frontends.http.admission import Admission

    admission = Admission(running=2, waiting=0)
    for seconds in (6.0,) * 20:
        admission.served(seconds)  # answers take about 6 s: a place frees every 3 s
    waits = [admission.retry_after(now=100.0) for _ in range(5)]
    assert waits == sorted(waits) and waits[0] >= 3 and waits[-1] >= 14  # each client its own, later place
    assert admission.retry_after(now=1_000.0) == waits[0]  # once the promised times have passed, afresh


def test_metrics_count_requests_stages_tokens_the_line_and_the_index(service) -> None:
    from prometheus_client.parser import text_string_to_metric_families

    httpx.post(f"{service}/v1/search", json={"query": "sharpness-aware minimization", "k": 2})
    httpx.get(f"{service}/v1/stats", headers={"Host": "evil.example"})  # refused by the guard: counted too
    asked = {"model": "abstracts-rag:local", "messages": [{"role": "user", "content": SAM_QUESTION}]}
    assert httpx.post(f"{service}/v1/chat/completions", json=asked, timeout=120).status_code == 200
    scraped = httpx.get(f"{service}/metrics")
    assert scraped.status_code == 200 and scraped.headers["content-type"].startswith("text/plain")
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for family in text_string_to_metric_families(scraped.text) for s in family.samples}  # fmt: skip
    assert samples[("rag_requests_total", (("route", "/v1/search"), ("status", "200")))] >= 1
    assert samples[("rag_requests_total", (("route", "other"), ("status", "403")))] >= 1
    assert samples[("rag_request_seconds_count", (("route", "/v1/chat/completions"),))] >= 1
    assert samples[("rag_stage_seconds_count", (("stage", "retrieve"),))] >= 1
    assert samples[("rag_generated_tokens_total", ())] > 0  # the local model's draft
    assert samples[("rag_index_abstracts", ())] == 95 and samples[("rag_index_chunks", ())] > 95
    assert ("rag_admission_waiting", ()) in samples and ("rag_admission_running", ()) in samples
