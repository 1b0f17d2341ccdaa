"""Bring your own reranker (RAG_RERANK_MODEL, RAG_RERANK_BASE_URL), tested with the project's own cross-encoder
saved as reranker folders: the shipped verifier's head read as "supported against not enough information", once
with two outputs and once collapsed to one logit (the difference of the two rows: the same probabilities), and
served by a real Infinity server (`make setup` installs it in .venv/infinity). Also the project's `rag
train-reranker`, a server that is down, and folders that are not rerankers."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, free_port, run_rag, wait_until_ready
from test_verifier_model import save_folder

from rag.answer.rerank import ServerReranker, local_reranker, make_reranker, read_scores, rerank
from rag.engine import Engine
from rag.errors import BadInput
from rag.records import Query
from rag.training.verifier import sha256

INFINITY = ROOT / ".venv" / "infinity" / "bin" / "infinity_emb"
QUESTION = "Does sharpness-aware minimization improve adversarial robustness?"
PASSAGES = [
    "Intriguingly, we find that using SAM alone can improve adversarial robustness.",
    "The trial enrolled 240 adult patients.",
    "Protein language models work at the scale of atoms.",
]


def one_output(two: Path, out: Path) -> Path:
    """The two-output folder with its head collapsed to one logit: row 1 minus row 0 (sigmoid of it = softmax's
    second of two)."""
    import torch
    from transformers import AutoModelForSequenceClassification

    model = AutoModelForSequenceClassification.from_pretrained(str(two), dtype=torch.float32)
    head = model.classifier
    collapsed = torch.nn.Linear(head.in_features, 1)
    with torch.no_grad():
        collapsed.weight.copy_(head.weight[1:2] - head.weight[0:1])
        collapsed.bias.copy_(head.bias[1:2] - head.bias[0:1])
    model.classifier = collapsed
    model.config.num_labels = 1
    model.config.id2label, model.config.label2id = {0: "LABEL_0"}, {"LABEL_0": 0}
    model.save_pretrained(str(out))
    for name in ("tokenizer.json", "vocab.txt", "tokenizer_config.json", "special_tokens_map.json"):
        if (two / name).exists():
            (out / name).write_bytes((two / name).read_bytes())
    return out


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(two outputs, one output): the shipped cross-encoder's "not enough information" and "supported" logits."""
    root = tmp_path_factory.mktemp("rerankers")
    two = save_folder(root / "two", [2, 0], ["not_relevant", "relevant"])
    return two, one_output(two, root / "one")


def reranking_engine(engine: Engine, **settings) -> Engine:  # type: ignore[no-untyped-def]
    return Engine(engine.settings.model_copy(update=settings), embedder=engine.library.embedder)


@pytest.mark.slow
def test_one_and_two_output_folders_score_alike_and_the_gate_decides_on_the_score(folders, engine: Engine) -> None:
    two, one = folders
    cache = engine.settings.model_cache_dir
    scores = [local_reranker(folder, cache).scores(QUESTION, PASSAGES) for folder in (two, one)]
    assert np.allclose(scores[0], scores[1], atol=0.02)  # int8 or fp32 each, both within SCORE_AGREEMENT of fp32
    assert scores[1][0] == max(scores[1])  # the sentence that answers comes first

    results = engine.library.search(QUESTION)
    reranker = local_reranker(one, cache)
    reranked = rerank(reranker, QUESTION, results, 3)
    by_score = reranker.scores(QUESTION, [r.text for r in results])
    assert [r.score for r in reranked.results] == sorted(by_score, reverse=True)[:3]
    assert reranked.best == max(by_score) and [r.rank for r in reranked.results] == [1, 2, 3]

    # The gate decides on the reranker's best score: the same question is answered or refused by the threshold.
    refused = reranking_engine(engine, rerank_model=one, rerank_threshold=1.0).ask(QUESTION, "extractive")
    assert refused.refused and "rerank" in refused.timings_ms
    deeper = engine.library.search(Query(QUESTION, k=engine.settings.rerank_candidates))  # what the pipeline reranks
    assert [p.doc_id for p in refused.nearest] == [r.doc_id for r in rerank(reranker, QUESTION, deeper, 3).results]
    answered = reranking_engine(engine, rerank_model=one, rerank_threshold=0.0).ask(QUESTION, "extractive")
    assert not answered.refused and answered.citations


@pytest.mark.slow
def test_a_rerank_server_scores_as_the_local_model(folders, engine: Engine, tmp_path: Path) -> None:
    _, one = folders
    port, log = free_port(), tmp_path / "infinity.log"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "INFINITY_ANONYMOUS_USAGE_STATS": "0", "DO_NOT_TRACK": "1"}
    server = subprocess.Popen(
        [str(INFINITY), "v2", "--model-id", str(one), "--engine", "torch", "--device", "cpu", "--host", "127.0.0.1",
         "--port", str(port), "--url-prefix", "/v1", "--no-model-warmup"],
        stdout=log.open("w"), stderr=subprocess.STDOUT, env=env,
    )  # fmt: skip
    try:
        wait_until_ready(f"http://127.0.0.1:{port}/v1/models", server, log, 180)
        base_url = f"http://127.0.0.1:{port}/v1"
        served = ServerReranker(base_url).scores(QUESTION, PASSAGES)
        local = local_reranker(one, engine.settings.model_cache_dir).scores(QUESTION, PASSAGES)
        assert np.allclose(served, local, atol=0.02) and served[0] == max(served)

        remote = reranking_engine(engine, rerank_base_url=base_url, rerank_threshold=1.0).ask(QUESTION, "extractive")
        near = reranking_engine(engine, rerank_model=one, rerank_threshold=1.0).ask(QUESTION, "extractive")
        assert remote.refused and remote.note is None
        assert [p.doc_id for p in remote.nearest] == [p.doc_id for p in near.nearest]
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_a_rerank_server_that_is_down_leaves_the_search_order_with_a_note(engine: Engine) -> None:
    down = f"http://127.0.0.1:{free_port()}/v1"
    answer = reranking_engine(engine, rerank_base_url=down, rerank_timeout_s=2).ask(QUESTION, "extractive")
    plain = engine.ask(QUESTION, "extractive")
    assert answer.note and answer.note.startswith("The reranker did not answer") and down in answer.note
    assert (answer.refused, answer.answer, [c.doc_id for c in answer.citations]) == (
        plain.refused, plain.answer, [c.doc_id for c in plain.citations])  # fmt: skip


def test_rerank_replies_of_each_server_family_are_read() -> None:
    cohere = {"results": [{"index": 1, "relevance_score": 0.2}, {"index": 0, "relevance_score": 0.9}]}
    tei = [{"index": 1, "score": 0.3}, {"index": 0, "score": 0.8}]
    assert read_scores(cohere, 2) == [0.9, 0.2] and read_scores(tei, 2) == [0.8, 0.3]


def test_folders_that_are_not_rerankers_are_bad_input(engine: Engine, tmp_path: Path) -> None:
    nli = save_folder(tmp_path / "nli", [0, 1, 2], ["entailment", "contradiction", "neutral"])
    with pytest.raises(BadInput, match=r"RAG_RERANK_MODEL: .* has 3 outputs"):
        local_reranker(nli, engine.settings.model_cache_dir)
    with pytest.raises(BadInput, match="not both"):
        make_reranker(engine.settings.model_copy(update={"rerank_model": nli, "rerank_base_url": "http://x/v1"}))
    with pytest.raises(BadInput, match="is not a folder"):
        local_reranker(tmp_path / "missing", engine.settings.model_cache_dir)


@pytest.mark.slow
def test_the_projects_reranker_command_writes_a_folder_the_setting_takes(cli_env, tmp_path: Path) -> None:
    out = tmp_path / "reranker"
    result = run_rag("train-reranker", "--out", str(out), "--limit", "32", env=cli_env, timeout=600)
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert record["sha256"] == sha256(out / "model.safetensors") and sum(record["training_pairs"].values()) == 32
    scores = local_reranker(out, tmp_path / "cache").scores(QUESTION, PASSAGES)
    assert len(scores) == 3 and all(0.0 < s < 1.0 for s in scores)
