"""Benchmark: calibrate and check the refusal gate on labelled answerable and unanswerable questions. Prints tables.

    .venv/bin/python benchmarks/refusal_gate.py --pubmedqa-dir DIR --seeds-dir DIR

The calibration set (fixed before tuning, never the independent set of eval/datasets/pubmedqa_independent):
- PubMedQA's 500 dev questions over its 1,000 abstracts (eval/datasets/pubmedqa). A question is made unanswerable
  by hiding its gold abstract from the results (as if it were not indexed) when sha256(id) is odd: near-domain
  questions that the other 999 biomedical abstracts do not answer. Questions with sha256("part " + id) % 4 == 3
  are the check part, scored but never used to choose the threshold; the rest are the tune part.
- The seeds questions (eval/datasets/seeds_qa.jsonl, 44 answerable, 6 unanswerable), all in the check part: the
  product is judged on the seeds, so nothing is tuned on them.
- The paraphrased PubMedQA tuning questions (eval/datasets/pubmedqa_tune: 30 answerable, 6 unanswerable, worded
  away from their abstracts), all in the tune part.
- With `--lay-dir` (an index of all PubMedQA and SciFact abstracts): the plain-worded questions of
  eval/datasets/lay_questions, their tune part in the tune part, their held-out part scored only.
The threshold chosen is the one with the fewest mistakes on the tune part, counting a refused answerable question
twice (a false refusal hides an answer that exists; a false answer is still verified and cited), together with the
dense floor (a question whose closest abstract is at least that similar passes whatever its score); where a range
of thresholds ties, the middle of it.
Without the directories, each corpus is ingested into a temporary index first (a few minutes).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATASETS = ROOT / "eval" / "datasets"
FALSE_REFUSAL_COST = 2


def digest(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest(), 16)


def engine_for(data_dir: Path | None, corpus: Path):  # type: ignore[no-untyped-def]
    from rag.engine import Engine
    from rag.index.ingest import ingest
    from rag.settings import Settings

    folder = data_dir or Path(tempfile.mkdtemp(prefix="refusal-gate-"))
    settings = Settings(data_dir=folder)
    if data_dir is None:
        ingest([corpus], settings)
    return Engine(settings)


def score(engine, question: str, hidden: set[str]) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """The gate's score and the closest abstract's similarity, with the `hidden` abstracts left out of the results."""
    from rag.answer.relevance import closest_similarity, gate_score, question_terms
    from rag.records import Query

    library = engine.library
    results = [r for r in library.search(Query(question, 5 + len(hidden))) if r.doc_id not in hidden][:5]
    abstracts = library.abstracts([r.doc_id for r in results])
    gate = gate_score(question, question_terms(question, library.term_weights(question)), results, abstracts)
    return {"score": gate, "similarity": closest_similarity(results)}


def rows(pubmedqa, seeds, lay=None) -> list[dict]:  # type: ignore[no-untyped-def]
    out = []
    for q in map(json.loads, (DATASETS / "pubmedqa" / "dev_questions.jsonl").read_text().splitlines()):
        answerable = digest(q["id"]) % 2 == 0
        hidden = set() if answerable else set(q["gold"])
        part = "check" if digest("part " + q["id"]) % 4 == 3 else "tune"
        out.append({"set": "pubmedqa", "part": part, "answerable": answerable,
                    **score(pubmedqa, q["question"], hidden)})  # fmt: skip
    paraphrased = DATASETS / "pubmedqa_tune" / "questions.jsonl"
    for name, part, engine, path in (("seeds", "check", seeds, DATASETS / "seeds_qa.jsonl"),
                                     ("paraphrased", "tune", pubmedqa, paraphrased)):  # fmt: skip
        for q in map(json.loads, path.read_text().splitlines()):
            out.append({"set": name, "part": part, "answerable": q.get("answerable", True),
                        **score(engine, q["question"], set())})  # fmt: skip
    for part, name in (("tune", "tune"), ("check", "heldout")) if lay is not None else ():
        for q in map(json.loads, (DATASETS / "lay_questions" / f"{name}.jsonl").read_text().splitlines()):
            out.append({"set": "lay", "part": part, "answerable": q["answerable"], **score(lay, q["question"], set())})
    return out


OFF = 1.01  # a dense floor no similarity reaches


def mistakes(rows: list[dict], threshold: float, floor: float = OFF) -> tuple[int, int]:
    """(answerable questions refused, unanswerable questions answered)."""
    passes = [r["score"] >= threshold or r["similarity"] >= floor for r in rows]
    refused = sum(r["answerable"] and not p for r, p in zip(rows, passes, strict=True))
    answered = sum(not r["answerable"] and p for r, p in zip(rows, passes, strict=True))
    return refused, answered


def cost(rows: list[dict], threshold: float, floor: float = OFF) -> int:
    refused, answered = mistakes(rows, threshold, floor)
    return FALSE_REFUSAL_COST * refused + answered


def choose(rows: list[dict], threshold: float | None = None, floor: float | None = None) -> tuple[float, float]:
    """The threshold and dense floor with the fewest mistakes together (of equal floors, the highest: the least
    lenient); either one fixed when given. Where a range of thresholds makes equally few mistakes, its middle: the
    tune part cannot tell them apart, and either end sits on the score of one of its questions."""
    thresholds = [threshold] if threshold is not None else sorted({round(r["score"], 3) for r in rows})
    floors = [floor] if floor is not None else [*sorted({round(r["similarity"], 2) for r in rows}), OFF]
    best, chosen_floor = min(
        ((t, f) for t in thresholds for f in floors), key=lambda tf: (cost(rows, *tf), -tf[1], -tf[0])
    )
    fewest = cost(rows, best, chosen_floor)
    low = thresholds.index(best)
    while low > 0 and cost(rows, thresholds[low - 1], chosen_floor) == fewest:
        low -= 1
    return round((thresholds[low] + best) / 2, 3), chosen_floor


def add_index_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pubmedqa-dir", type=Path, help="an index of eval/datasets/pubmedqa/corpus.jsonl")
    parser.add_argument("--seeds-dir", type=Path, help="an index of seeds/")
    parser.add_argument("--lay-dir", type=Path, help="an index of all PubMedQA and SciFact abstracts (lay questions)")


def pubmedqa_and_seeds(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    """Engines over the indexes the options name (each ingested into a temporary index when not given)."""
    pubmedqa = engine_for(args.pubmedqa_dir, DATASETS / "pubmedqa" / "corpus.jsonl")
    return pubmedqa, engine_for(args.seeds_dir, ROOT / "seeds")


def main() -> None:
    from rag.answer.relevance import dense_floor, gate_threshold

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_index_options(parser)
    parser.add_argument("--threshold", type=float, help="score this threshold instead of choosing one")
    parser.add_argument("--floor", type=float, help="score this dense floor instead of choosing one (1.01: none)")
    args = parser.parse_args()
    pubmedqa, seeds = pubmedqa_and_seeds(args)
    lay = engine_for(args.lay_dir, DATASETS / "pubmedqa" / "corpus.jsonl") if args.lay_dir else None
    data = rows(pubmedqa, seeds, lay)
    tune = [r for r in data if r["part"] == "tune"]
    threshold, floor = choose(tune, args.threshold, args.floor)
    precision = pubmedqa.library.embedder.precision
    print(
        f"\n## Refusal gate at RAG_REFUSAL_THRESHOLD={threshold}, RAG_REFUSAL_DENSE_FLOOR={floor} ({precision} "
        f"embeddings; the defaults for them are {gate_threshold(None, precision)} and {dense_floor(None, precision)})\n"
    )
    print("| part | answerable | refused (false refusals) | unanswerable | answered (false answers) |")
    print("|---|---|---|---|---|")
    by_set = [(f"{p}: {n}", [r for r in data if r["part"] == p and r["set"] == n])
              for p, n in (("tune", "pubmedqa"), ("tune", "paraphrased"), ("tune", "lay"),
                           ("check", "pubmedqa"), ("check", "lay"), ("check", "seeds"))]  # fmt: skip
    for name, part in (("tune", tune), *((n, p) for n, p in by_set if p)):
        refused, answered = mistakes(part, threshold, floor)
        n_ans = sum(r["answerable"] for r in part)
        n_un = len(part) - n_ans
        print(f"| {name} | {n_ans} | {refused} ({refused / max(n_ans, 1):.3f}) | {n_un} | "
              f"{answered} ({answered / max(n_un, 1):.3f}) |")  # fmt: skip


if __name__ == "__main__":
    main()
