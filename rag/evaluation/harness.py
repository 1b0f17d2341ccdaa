"""The offline evaluation harness: datasets x configured runs -> per-question results -> metrics -> reports.

Retrieval metrics come from ir-measures (recall@k, MRR, nDCG@10); answer metrics are computed from the answers'
JSON. Per-question results are cached under OUT/cache/<run>-<config hash>/<dataset>/, so an interrupted
evaluation continues where it stopped and a changed configuration is evaluated afresh.
"""

from __future__ import annotations

import hashlib
import json
import re
import statistics
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag.errors import BadInput
from rag.records import Query
from rag.settings import MODES, Settings

if TYPE_CHECKING:
    from rag.engine import Engine
    from rag.index.library import Library
    from rag.records import Answer

RETRIEVAL_METRICS = ("recall@1", "recall@5", "recall@10", "mrr", "ndcg@10")
HIGHER_IS_BETTER = (
    *RETRIEVAL_METRICS, "citation_precision", "citation_recall", "support_rate", "answered_rate", "refusal_rate",
    "nearest_gold_rate", "must_contain", "decision_accuracy", "kept_support", "balanced_accuracy",
)  # fmt: skip
STAGES = ("retrieve", "focus", "generate", "verify", "fallback", "total")
DECISION = re.compile(r"\b(yes|no|maybe)\b", re.IGNORECASE)


@dataclass
class RunConfig:
    name: str
    retriever: str = "hybrid"
    k: int = 5
    backend: str = "extractive"
    venue: str | None = None
    year: int | None = None
    decide: bool = False  # also ask the backend for a yes/no/maybe decision (datasets with final_decision)
    settings: dict[str, Any] = field(default_factory=dict)  # setting overrides, e.g. {"prompt_sources": 2}

    def key(self) -> str:
        blob = json.dumps(self.__dict__, sort_keys=True, default=str)
        return f"{re.sub(r'[^A-Za-z0-9_.-]', '_', self.name)}-{hashlib.sha256(blob.encode()).hexdigest()[:10]}"


def load_config(path: Path | None) -> list[RunConfig]:
    if path is None:
        return [RunConfig(name="hybrid-extractive")]
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise BadInput(f"{path}: cannot read the configuration ({exc})") from None
    runs = []
    for i, raw in enumerate(data.get("runs", []), start=1):
        try:
            run = RunConfig(**raw)
        except TypeError as exc:
            raise BadInput(f"{path}: run {i}: {exc}") from None
        if run.retriever not in MODES:
            raise BadInput(f"{path}: run {run.name!r}: retriever must be {', '.join(MODES)}")
        unknown = sorted(set(run.settings) - set(Settings.model_fields))
        if unknown:
            raise BadInput(f"{path}: run {run.name!r}: unknown setting {unknown[0]!r} (see .env.example)")
        runs.append(run)
    if not runs:
        raise BadInput(f"{path}: no [[runs]] defined")
    return runs


def load_dataset(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise BadInput(f"{path}: no such dataset")
    rows = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BadInput(f"{path}:{lineno}: malformed JSON ({exc.msg})") from None
        if not isinstance(row, dict) or not row.get("id") or not row.get("question"):
            raise BadInput(f"{path}:{lineno}: a question needs an id and a question")
        row.setdefault("gold", [])
        row.setdefault("answerable", True)
        rows.append(row)
    if not rows:
        raise BadInput(f"{path}: the dataset is empty")
    return rows


# ----- metrics ------------------------------------------------------------------------------------------------
def retrieval_metrics(rankings: dict[str, list[tuple[str, float]]], gold: dict[str, list[str]]) -> dict[str, float]:
    """recall@1/5/10, MRR and nDCG@10 over the questions that have gold documents (ir-measures)."""
    import ir_measures
    from ir_measures import RR, R, nDCG

    qrels = [ir_measures.Qrel(qid, doc, 1) for qid, docs in gold.items() for doc in docs]
    if not qrels:
        return {}
    run = [
        ir_measures.ScoredDoc(qid, doc, float(len(ranked) - rank))  # scores from ranks: ties cannot reorder
        for qid, ranked in rankings.items()
        if qid in gold
        for rank, (doc, _) in enumerate(ranked)
    ]
    measures = {"recall@1": R @ 1, "recall@5": R @ 5, "recall@10": R @ 10, "mrr": RR, "ndcg@10": nDCG @ 10}
    values = {m: 0.0 for m in measures.values()}
    per_query = list(ir_measures.iter_calc(list(measures.values()), qrels, run))
    for metric in per_query:
        values[metric.measure] += metric.value
    n = len(gold)  # questions the run found nothing for count as zeros
    return {name: values[measure] / n for name, measure in measures.items()}


def answer_metrics(results: list[dict[str, Any]]) -> dict[str, Any]:
    answerable = [r for r in results if r["answerable"]]
    unanswerable = [r for r in results if not r["answerable"]]
    cited = [c for r in answerable for c in r["cited"]]
    gold_cited = sum(c in r["gold"] for r in answerable for c in r["cited"])
    recalls = [len(set(r["cited"]) & set(r["gold"])) / len(r["gold"]) for r in answerable if r["gold"]]
    # Of the LLM's own sentences: after an extractive fallback the kept sentences are verbatim ones, not the LLM's.
    verdicts = [r["verifier"] for r in results if r["verifier"]]
    sentences = sum(v["dropped"] + (0 if v["fallback"] else v["kept"] + v["reattributed"]) for v in verdicts)
    supported = sum(0 if v["fallback"] else v["kept"] + v["reattributed"] for v in verdicts)
    checks = [hit for r in answerable for hit in r["must_contain_hits"]]
    decisions = [r["decision_correct"] for r in results if r.get("decision_correct") is not None]
    metrics: dict[str, Any] = {
        "citation_precision": gold_cited / len(cited) if cited else None,
        "citation_recall": statistics.fmean(recalls) if recalls else None,
        "support_rate": supported / sentences if sentences else None,
        "answered_rate": sum(not r["refused"] for r in answerable) / len(answerable) if answerable else None,
        "refusal_rate": sum(r["refused"] for r in unanswerable) / len(unanswerable) if unanswerable else None,
        "nearest_gold_rate": nearest_gold_rate(answerable),
        "must_contain": sum(checks) / len(checks) if checks else None,
        "latency_ms": {stage: percentiles([r["timings_ms"].get(stage) for r in results]) for stage in STAGES},
    }
    if decisions:
        metrics["decision_accuracy"] = sum(decisions) / len(decisions)
    return metrics


def nearest_gold_rate(answerable: list[dict[str, Any]]) -> float | None:
    """Of the answerable questions refused, the share whose gold paper was among the closest papers shown."""
    refused = [r for r in answerable if r["refused"] and r["gold"]]
    shown = sum(bool(set(r.get("nearest", [])) & set(r["gold"])) for r in refused)
    return shown / len(refused) if refused else None


def percentiles(values: list[float | None]) -> dict[str, float | None]:
    present = sorted(v for v in values if v is not None)
    if not present:
        return {"p50": None, "p95": None}
    if len(present) == 1:
        return {"p50": present[0], "p95": present[0]}
    cuts = statistics.quantiles(present, n=100, method="inclusive")
    return {"p50": round(cuts[49], 1), "p95": round(cuts[94], 1)}


def must_contain_hits(answer: str, entries: list[str]) -> list[bool]:
    return [any(alt.strip().lower() in answer.lower() for alt in entry.split("|")) for entry in entries]


# ----- running ------------------------------------------------------------------------------------------------
def evaluate_question(engine: Engine, run: RunConfig, row: dict[str, Any], retrieval_only: bool) -> dict[str, Any]:
    start = time.perf_counter()
    query = Query(row["question"], 10, run.venue, run.year, run.retriever)
    ranked = engine.library.search(query)
    result: dict[str, Any] = {
        "id": row["id"],
        "question": row["question"],
        "gold": row["gold"],
        "answerable": row.get("answerable", True),
        "ranking": [(r.doc_id, round(r.score, 6)) for r in ranked],
        "timings_ms": {"retrieve": (time.perf_counter() - start) * 1000},
    }
    if retrieval_only:
        return result
    answer = engine.ask(replace(query, k=run.k), run.backend)
    data = answer.contract()
    result.update(
        answer=data["answer"],
        refused=data["refused"],
        cited=[c["doc_id"] for c in data["citations"]],
        verifier=data["verifier"],
        note=data["note"],
        timings_ms=data["timings_ms"],
        must_contain_hits=must_contain_hits(data["answer"], row.get("must_contain", [])),
        nearest=[paper["doc_id"] for paper in data["nearest"]],
    )
    if data["refused"]:
        result["refusal"] = refusal_reason(engine, row["question"], data)
    if run.decide and row.get("final_decision"):
        result["decision"] = decide(engine, run, row, answer)
        result["decision_correct"] = result["decision"] == row["final_decision"]
    return result


def refusal_reason(engine: Engine, question: str, data: dict[str, Any]) -> str:
    """Why a question was refused: the gate (its score and threshold, the closest abstract's similarity and its
    floor), or nothing that could be verified."""
    from rag.answer.pipeline import DECLINED_NOTE

    if DECLINED_NOTE in (data.get("note") or ""):
        return "the API model found no answer in the closest abstracts"
    if {"generate", "fallback"} & set(data["timings_ms"]):
        return "no sentence written or quoted could be verified"
    pipeline = engine.pipeline
    score, similarity = pipeline.gate_reading(question)
    return (f"the gate: score {score:.3f} below {pipeline.refusal_threshold:.3f}, closest abstract's similarity "
            f"{similarity:.3f} below {pipeline.refusal_dense_floor:.3f}")  # fmt: skip


def decide(engine: Engine, run: RunConfig, row: dict[str, Any], answer: Answer) -> str | None:
    """Ask the backend for yes/no/maybe from the cited abstracts (prompts/decide.txt); None without an LLM."""
    from rag.prompts import load_prompt

    llm = engine.llms.get(engine.backend_name(run.backend))
    if llm is None or answer.refused:
        return None
    evidence = "\n\n".join(f"[{c.n}] {answer.abstracts.get(c.doc_id, c.quote)}" for c in answer.citations)
    prompt = load_prompt("decide").format(sources=evidence[:4000], question=row["question"])
    found = DECISION.search(llm.complete([{"role": "user", "content": prompt}], 8))
    return found.group(1).lower() if found else None


def run_dataset(
    engine: Engine,
    run: RunConfig,
    dataset: Path,
    rows: list[dict[str, Any]],
    cache: Path,
    retrieval_only: bool,
    progress: Callable[[int], None] | None = None,
) -> list[dict[str, Any]]:
    """Every question of a dataset under one run; finished questions are read back from the cache."""
    folder = cache / (run.key() + ("-retrieval" if retrieval_only else "")) / dataset.stem
    folder.mkdir(parents=True, exist_ok=True)
    results = []
    for row in rows:
        path = folder / f"{hashlib.sha256(row['id'].encode()).hexdigest()[:16]}.json"
        if path.exists():
            results.append(json.loads(path.read_text()))
        else:
            result = (evaluate_claim if "label" in row else evaluate_question)(engine, run, row, retrieval_only)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(result))
            tmp.replace(path)  # a question is cached whole or not at all
            results.append(result)
        if progress:
            progress(1)
    return results


def engine_for(base: Engine, run: RunConfig, engines: dict[str, Engine]) -> Engine:
    """The engine a run needs: the base one, or one with the run's setting overrides (sharing the embedder)."""
    from rag.engine import Engine

    if not run.settings:
        return base
    key = json.dumps(run.settings, sort_keys=True)
    if key not in engines:
        settings = Settings.model_validate({**base.settings.model_dump(), **run.settings})
        engines[key] = Engine(settings, embedder=base.library.embedder)
    return engines[key]


# ----- claims mode: datasets whose records carry a SUPPORT / CONTRADICT / NEI label ------------------------------
CLAIM_LABELS = {"SUPPORT": "supported", "CONTRADICT": "contradicted", "NEI": "not_enough_info"}


def claim_doc(row: dict[str, Any]) -> str:
    """The abstract a claim is checked against: its own doc_id, else its gold abstract, else the first it cites."""
    return row.get("doc_id") or (row["gold"] or row.get("cited_doc_ids") or [""])[0]


def evaluate_claim(engine: Engine, run: RunConfig, row: dict[str, Any], retrieval_only: bool) -> dict[str, Any]:
    start = time.perf_counter()
    verdict = engine.verify(row["question"], claim_doc(row))
    return {
        "id": row["id"],
        "question": row["question"],
        "label": row["label"],
        "doc_id": claim_doc(row),
        "verdict": verdict.label,
        "score": round(verdict.score, 4),
        "quote": verdict.quote,
        "timings_ms": {"verify": (time.perf_counter() - start) * 1000},
        **({"kind": str(row["kind"])} if row.get("kind") else {}),
    }


def wilson(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95 % Wilson score interval of the proportion hits/n ((0, 1) when n is 0)."""
    if n == 0:
        return 0.0, 1.0
    p, spread = hits / n, z * z / n
    centre = (p + spread / 2) / (1 + spread)
    half = z * ((p * (1 - p) / n + spread / (4 * n)) ** 0.5) / (1 + spread)
    return round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4)


def verdict_rates(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Of some checked claims: how many, the share kept (judged supported) and the share accused (judged
    contradicted), each with its 95 % interval."""
    kept = sum(r["verdict"] == "supported" for r in rows)
    accused = sum(r["verdict"] == "contradicted" for r in rows)
    n = len(rows)
    return {"n": n, "kept": kept / n if n else None, "kept_ci": wilson(kept, n),
            "accused": accused / n if n else None, "accused_ci": wilson(accused, n)}  # fmt: skip


def claim_metrics(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Per label, the share of claims the verifier keeps (judges supported) and accuses (judges contradicted) when
    cited to their abstract, with 95 % intervals, also per kind of claim when the dataset names kinds; and the
    balanced accuracy of the three-way verdicts (the mean of the per-label recalls)."""
    metrics: dict[str, Any] = {}
    recalls = []
    for label, verdict in CLAIM_LABELS.items():
        rows = [r for r in results if r["label"] == label]
        rates = verdict_rates(rows)
        metrics[f"kept_{label.lower()}"], metrics[f"accused_{label.lower()}"] = rates["kept"], rates["accused"]
        metrics.setdefault("by_label", {})[label] = rates
        if rows:
            recalls.append(sum(r["verdict"] == verdict for r in rows) / len(rows))
    kinds = sorted({(r["label"], r["kind"]) for r in results if r.get("kind")})
    if kinds:
        of_kind = {pair: [r for r in results if (r["label"], r.get("kind")) == pair] for pair in kinds}
        metrics["by_kind"] = {f"{label} {kind}": verdict_rates(rows) for (label, kind), rows in of_kind.items()}
    metrics["balanced_accuracy"] = statistics.fmean(recalls) if recalls else None
    metrics["latency_ms"] = {"verify": percentiles([r["timings_ms"]["verify"] for r in results])}
    metrics["time_s"] = round(sum(r["timings_ms"]["verify"] for r in results) / 1000, 1)
    return metrics


def summarize_run(run: RunConfig, dataset: Path, results: list[dict[str, Any]], retrieval_only: bool) -> dict:
    if results and "verdict" in results[0]:
        return {"name": run.name, "dataset": str(dataset), "config": run.__dict__,
                "metrics": claim_metrics(results), "per_question": results}  # fmt: skip
    rankings = {r["id"]: r["ranking"] for r in results}
    gold = {r["id"]: r["gold"] for r in results if r["answerable"] and r["gold"]}
    metrics: dict[str, Any] = retrieval_metrics(rankings, gold)
    if not retrieval_only:
        metrics.update(answer_metrics(results))
    else:
        metrics["latency_ms"] = {"retrieve": percentiles([r["timings_ms"]["retrieve"] for r in results])}
    # Time spent on the questions (summed from their timings, so a resumed run reports its whole cost).
    metrics["time_s"] = round(sum(r["timings_ms"].get("total", r["timings_ms"]["retrieve"]) for r in results) / 1000, 1)
    return {
        "name": run.name,
        "dataset": str(dataset),
        "config": run.__dict__,
        "metrics": metrics,
        "per_question": results,
    }


def check_gold_indexed(library: Library, rows: list[dict[str, Any]], dataset: Path) -> None:
    gold = sorted({doc for row in rows for doc in row["gold"]} | {claim_doc(r) for r in rows if "label" in r})
    missing = library.missing(gold)
    if missing:
        raise BadInput(
            f"{dataset}: {len(missing)} of {len(gold)} gold abstracts are not indexed (e.g. {missing[0]}); "
            "ingest the dataset's corpus first"
        )
