"""Benchmark: the verifier's judge on SciFact claims cited to their abstracts, and its speed. Prints Markdown tables.

    .venv/bin/python benchmarks/verifier_quality.py --split dev --sweep      # choose thresholds (dev claims only)
    .venv/bin/python benchmarks/verifier_quality.py --split heldout          # score the held-out claims, once
    .venv/bin/python benchmarks/verifier_quality.py --latency             # verification time per answer
    .venv/bin/python benchmarks/verifier_quality.py --operating-point     # when "contradicted" may be said
    .venv/bin/python benchmarks/verifier_quality.py --claims eval/datasets/seeds_claims/claims.jsonl --corpus seeds

Kept = judged "supported" (what the verifier keeps when the claim cites that abstract). The SciFact abstracts the
claims cite are ingested into a temporary index unless --data-dir names one that holds them. --latency times the
verification of 5-sentence answers over 5 abstracts: each answer is 5 SciFact dev claims (expert paraphrases, none
quoting its abstract, so every check runs the model), each citing its own gold abstract.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCIFACT = ROOT / "eval" / "datasets" / "scifact"
LABELS = {"SUPPORT": "supported", "CONTRADICT": "contradicted", "NEI": "not_enough_info"}


def engine_for(  # type: ignore[no-untyped-def]
    data_dir: Path | None, verifier: str = "model", model: Path | None = None, corpus: list[Path] | None = None
):
    """An engine over the claims' abstracts (`corpus`, SciFact's by default, ingested into a temporary index unless
    `data_dir` holds them); `model`: judge with that ONNX file instead of the shipped one."""
    from rag.answer.entailment import EntailmentModel
    from rag.engine import Engine
    from rag.index.ingest import ingest
    from rag.settings import Settings

    folder = data_dir or Path(tempfile.mkdtemp(prefix="verifier-bench-"))
    settings = Settings(data_dir=folder, verifier=verifier)
    if data_dir is None:
        ingest(corpus or [SCIFACT / "corpus.jsonl"], settings)
    engine = Engine(settings)
    if model is not None and verifier == "model":
        engine.pipeline.verifier.judge.model = EntailmentModel(model)
    return engine


def load_claims(split: str, path: Path | None = None) -> list[dict]:
    """A SciFact split, or the claims file `path` (records with question, doc_id, label and an optional kind)."""
    path = path or SCIFACT / f"claims_{split}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def rates(results: list[tuple[str, str]]) -> dict[str, float]:
    """Kept share per label and balanced accuracy, from (label, verdict) pairs."""
    out, recalls = {}, []
    for label, verdict in LABELS.items():
        rows = [v for lab, v in results if lab == label]
        out[f"kept_{label.lower()}"] = sum(v == "supported" for v in rows) / max(len(rows), 1)
        recalls.append(sum(v == verdict for v in rows) / max(len(rows), 1))
    out["balanced_accuracy"] = statistics.fmean(recalls)
    return out


def read_claims(engine, claims: list[dict]) -> list[tuple[str, object, bool]]:  # type: ignore[no-untyped-def]
    """(label, the model's evidence, whether the exact checks object to the claim) per claim."""
    from rag.answer.entailment import read_evidence
    from rag.answer.sources import Source

    verifier = engine.pipeline.verifier
    model = verifier.judge.model
    read = []
    for claim in claims:
        abstract = engine.library.abstracts([claim["doc_id"]])[claim["doc_id"]]
        source = Source(1, claim["doc_id"], abstract)
        verifier.prepare([source])
        vector = engine.library.embedder.embed([claim["question"]])[0]
        evidence = read_evidence(model, claim["question"], abstract, source.spans, source.vectors @ vector)
        objected = verifier.objection(claim["question"], vector, source) is not None
        read.append((claim["label"], evidence, objected))
    return read


def sweep(engine, claims: list[dict]) -> None:  # type: ignore[no-untyped-def]
    from rag.answer.entailment import Judgement, decide

    read = read_claims(engine, claims)
    print("| support | contradict | kept SUPPORT | kept CONTRADICT | kept NEI | balanced accuracy |")
    print("|---|---|---|---|---|---|")
    for support in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
        for contradict in (0.3, 0.5, 0.7):
            results = []
            for label, evidence, objected in read:
                verdict: Judgement = decide(evidence, support, contradict)  # type: ignore[arg-type]
                label_given = "not_enough_info" if verdict.label == "supported" and objected else verdict.label
                results.append((label, label_given))
            r = rates(results)
            print(f"| {support} | {contradict} | {r['kept_support']:.3f} | {r['kept_contradict']:.3f} | "
                  f"{r['kept_nei']:.3f} | {r['balanced_accuracy']:.3f} |")  # fmt: skip


PRECISION_WANTED = 0.9  # "contradicted" must be right at least this often
THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.97, 0.98, 0.99)


def operating_point(engine, support: float) -> None:  # type: ignore[no-untyped-def]
    """How often "contradicted" is right (its precision) per contradiction threshold: chosen on the dev claims (the
    lowest threshold right at least PRECISION_WANTED of the time there, in 5 calls or more), then checked on the
    held-out claims, which it must also meet to become the operating point."""
    from rag.answer.entailment import decide
    from rag.evaluation.harness import wilson

    calls: dict[str, dict[float, tuple[int, int]]] = {}
    for split in ("dev", "heldout"):
        read = read_claims(engine, load_claims(split))
        calls[split] = {}
        for threshold in THRESHOLDS:
            verdicts = [(label, decide(evidence, support, threshold).label) for label, evidence, _ in read]  # type: ignore[arg-type]
            called = [label for label, verdict in verdicts if verdict == "contradicted"]
            calls[split][threshold] = (sum(label == "CONTRADICT" for label in called), len(called))
    print("| contradict >= | dev: right / called | precision (95 % interval) | held out: right / called | "
          "precision (95 % interval) |")  # fmt: skip
    print("|---|---|---|---|---|")
    for threshold in THRESHOLDS:
        cells = []
        for split in ("dev", "heldout"):
            right, n = calls[split][threshold]
            low, high = wilson(right, n)
            cells += [f"{right} / {n}", f"{right / n:.2f} ({low:.2f}-{high:.2f})" if n else "-"]
        print(f"| {threshold} | " + " | ".join(cells) + " |")
    chosen = next((t for t in THRESHOLDS if calls["dev"][t][1] >= 5
                   and calls["dev"][t][0] >= PRECISION_WANTED * calls["dev"][t][1]), None)  # fmt: skip
    if chosen is None:
        print(f"\nno threshold is right {PRECISION_WANTED:.0%} of the time on the dev claims: no operating point")
        return
    right, n = calls["heldout"][chosen]
    held = right / n if n else 0.0
    verdict = f"operating point {chosen}" if n and held >= PRECISION_WANTED else "no operating point"
    print(f"\nchosen on dev: {chosen}; held out: {right} / {n} right ({held:.2f}) -> {verdict}")


def score(
    data_dir: Path | None, claims: list[dict], model: Path | None = None, corpus: list[Path] | None = None
) -> None:
    from rag.evaluation.harness import verdict_rates

    print("| verifier | claims | n | kept (95 % interval) | accused (95 % interval) | balanced accuracy | p50 ms |")
    print("|---|---|---|---|---|---|---|")
    for kind in ("lexical", "model"):
        engine = engine_for(data_dir, kind, model, corpus)
        results, times = [], []
        for claim in claims:
            start = time.perf_counter()
            verdict = engine.verify(claim["question"], claim["doc_id"])
            times.append((time.perf_counter() - start) * 1000)
            results.append({"label": claim["label"], "verdict": verdict.label, "kind": claim.get("kind")})
        balanced = rates([(r["label"], r["verdict"]) for r in results])["balanced_accuracy"]
        groups = [(label, [r for r in results if r["label"] == label]) for label in LABELS]
        groups += [(f"{label} {k}", [r for r in results if (r["label"], r["kind"]) == (label, k)])
                   for label, k in sorted({(r["label"], r["kind"]) for r in results if r["kind"]})]  # fmt: skip
        for name, rows in groups:
            v = verdict_rates(rows)
            if v["n"]:
                print(f"| {kind} | {name} | {v['n']} | {v['kept']:.3f} ({v['kept_ci'][0]:.2f}-{v['kept_ci'][1]:.2f}) | "
                      f"{v['accused']:.3f} ({v['accused_ci'][0]:.2f}-{v['accused_ci'][1]:.2f}) | {balanced:.3f} | "
                      f"{statistics.median(times):.0f} |")  # fmt: skip
        data_dir = engine.settings.data_dir  # the second engine reuses the index


def latency(data_dir: Path | None, model: Path | None = None) -> None:
    from rag.answer.sources import Source

    engine = engine_for(data_dir, model=model)
    verifier = engine.pipeline.verifier
    claims = [json.loads(line) for line in (SCIFACT / "claims_dev.jsonl").read_text().splitlines()]
    claims = [c for c in claims if c["gold"]]
    times = []
    for start in range(0, len(claims) - 4, 5):  # answers of 5 claims, each citing its own gold abstract
        group = claims[start : start + 5]
        docs = [c["doc_id"] for c in group]
        abstracts = engine.library.abstracts(docs)
        sources = [Source(n, doc, abstracts[doc]) for n, doc in enumerate(docs, start=1)]
        verifier.prepare(sources)  # done while the LLM writes (the pipeline's focus stage), not timed here
        began = time.perf_counter()
        for n, claim in enumerate(group, start=1):
            verifier.check(f"{claim['question'].rstrip('.')} [{n}].", sources)
        times.append((time.perf_counter() - began) * 1000)
    cuts = statistics.quantiles(times, n=20)
    print("| answers | sentences x sources | verification p50 | p95 |")
    print("|---|---|---|---|")
    print(f"| {len(times)} | 5 x 5 | {statistics.median(times):.0f} ms | {cuts[18]:.0f} ms |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=["dev", "heldout"], default="dev")
    parser.add_argument("--sweep", action="store_true", help="thresholds grid (dev split only)")
    parser.add_argument("--latency", action="store_true", help="verification time of 5-sentence answers")
    parser.add_argument(
        "--operating-point", action="store_true", help="how often 'contradicted' is right, dev and held out"
    )
    parser.add_argument("--data-dir", type=Path, help="an index holding the claims' abstracts (or the seeds)")
    parser.add_argument("--model", type=Path, help="an ONNX verifier model to judge with instead of the shipped one")
    parser.add_argument("--claims", type=Path, help="a claims file to score instead of a SciFact split")
    parser.add_argument("--corpus", type=Path, nargs="+", help="the abstracts the --claims file cites")
    args = parser.parse_args()
    if args.claims is not None:
        if not args.claims.is_file() or (args.data_dir is None and not args.corpus):
            parser.error("--claims needs an existing file, and --corpus or --data-dir holding its abstracts")
        claims = load_claims("", args.claims)
        print(f"\n## {args.claims}: {len(claims)} claims\n")
        score(args.data_dir, claims, args.model, args.corpus)
        return
    if args.latency:
        latency(args.data_dir, args.model)
        return
    if args.operating_point:
        engine = engine_for(args.data_dir, model=args.model)
        operating_point(engine, engine.settings.entailment_support)
        return
    claims = load_claims(args.split)
    print(f"\n## {args.split}: {len(claims)} SciFact claims\n")
    if args.sweep:
        if args.split != "dev":
            sys.exit("thresholds are chosen on the dev split only")
        sweep(engine_for(args.data_dir, model=args.model), claims)
    else:
        score(args.data_dir, claims, args.model)


if __name__ == "__main__":
    main()
