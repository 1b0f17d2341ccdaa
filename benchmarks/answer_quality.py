"""Benchmark: answer quality and latency per backend on an evaluation set. Prints a Markdown table.

    .venv/bin/python benchmarks/answer_quality.py --backend extractive --backend local

Citation precision is the share of cited abstracts that are gold; gold cited is the mean share of each answerable
question's gold abstracts that the answer cites (for multi-paper questions: are all the papers there?); answered
is the share of answerable questions that got an answer (not a refusal); refused is the share of unanswerable
questions refused; must_contain is the share of must_contain entries (alternatives separated by |) found in the
answers to answerable questions; support is the share of the LLM's own sentences that the verifier kept; fell back
counts the answers given extractively instead of by the LLM (`verifier.fallback`: the verifier dropped all its
sentences, or the model failed, or, with --recorded, a prompt had no recorded reply).

`--recorded DIR` adds a capable API model's run from its recorded replies (no such model can be reached here):
DIR/rewrites.jsonl, answers.jsonl and judgements.jsonl, read as benchmarks/rewrite_quality.py reads the lay
questions' (each reply kept with the sha256 of the prompt it answers; the pipeline between them is the product's
own: rewriting, retrieval, gate, quotes checked verbatim, exact checks, citations, fallbacks). `--prompts OUT` writes
the prompts that have no recorded reply yet, to be answered.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def pct(values: list[float], p: int) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[p - 1]


def contains(answer: str, entry: str) -> bool:
    return any(alt.strip().lower() in answer.lower() for alt in entry.split("|"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", type=Path, default=ROOT / "eval" / "datasets" / "seeds_qa.jsonl")
    parser.add_argument("--backend", action="append", help="backends to compare (default: extractive, local)")
    parser.add_argument("--data-dir", type=Path, help="an index holding the dataset's corpus (default: ./data)")
    parser.add_argument("--show", action="store_true", help="print every answer")
    parser.add_argument("--recorded", type=Path, help="also run a capable API model from its replies recorded here")
    parser.add_argument("--prompts", type=Path, help="with --recorded: write the prompts without a reply here")
    args = parser.parse_args()

    from rag.engine import Engine
    from rag.settings import Settings

    settings = Settings(**({"data_dir": args.data_dir} if args.data_dir else {}))
    engine = Engine(settings)
    rows = [json.loads(line) for line in args.dataset.read_text().splitlines() if line.strip()]
    runs = [(backend, engine, backend) for backend in args.backend or ["extractive", "local"]]
    api = None
    if args.recorded:
        from rewrite_quality import RecordedAPIModel, recorded

        rewrites = [json.loads(line) for line in (args.recorded / "rewrites.jsonl").read_text().splitlines() if line]
        answers, judgements = recorded(args.recorded / "answers.jsonl"), recorded(args.recorded / "judgements.jsonl")
        api = RecordedAPIModel({r["question"]: r["reply"] for r in rewrites}, answers, judgements, args.prompts)
        as_api = settings.model_copy(update={"rewrite": "auto", "verifier": "auto", "openai_abstracts": "whole"})
        runs.append(("recorded API model", Engine(as_api, llm=api, embedder=engine.library.embedder), "openai"))
    print(f"\n## Answers on {args.dataset.name} ({len(rows)} questions)\n")
    print(
        "| backend | citation precision | gold cited | answered | refused | must_contain | support | fell back "
        "| first token p50 / p95 | verify p50 / p95 | total p50 / p95 |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for label, run_engine, backend in runs:
        if api is None or run_engine.llms.get(backend) is not api:
            run_engine.ask("warm-up: what is sharpness-aware minimization?", backend)
        cited = gold_cited = answered = answerable = refused = unanswerable = hits = entries = fell_back = 0
        first, total, verify = [], [], []
        judged = supported = 0
        recall: list[float] = []
        for q in rows:
            if api is not None:
                api.current = q["id"]
            start = time.perf_counter()
            answer = run_engine.ask(q["question"], backend)
            total.append((time.perf_counter() - start) * 1000)
            first.append(answer.timings_ms.get("first_token", total[-1]))
            verify.append(answer.timings_ms.get("verify", 0.0))
            if backend != "extractive":  # the share of the LLM's own sentences that the verifier kept
                report = answer.verifier  # after a fallback, the kept sentences are verbatim ones, not the LLM's
                judged += report.dropped + (0 if report.fallback else report.kept + report.reattributed)
                supported += 0 if report.fallback else report.kept + report.reattributed
                fell_back += report.fallback == "extractive"
            if args.show:
                print(f"- {q['id']}: {answer.answer} {[c.doc_id for c in answer.citations]}", file=sys.stderr)
            if q.get("answerable", True):
                answerable += 1
                answered += not answer.refused
                cited += len(answer.citations)
                gold_cited += sum(c.doc_id in q["gold"] for c in answer.citations)
                recall.append(len({c.doc_id for c in answer.citations} & set(q["gold"])) / len(q["gold"]))
                for entry in q.get("must_contain", []):
                    entries += 1
                    hits += contains(answer.answer, entry)
            else:
                unanswerable += 1
                refused += answer.refused
        print(
            f"| {label} | {gold_cited / max(cited, 1):.3f} | {statistics.fmean(recall or [0]):.3f} | "
            f"{answered / max(answerable, 1):.3f} | "
            f"{refused / max(unanswerable, 1):.3f} | {hits / max(entries, 1):.3f} | "
            f"{supported / judged if judged else float('nan'):.3f} | {fell_back} | "
            f"{pct(first, 50) / 1000:.2f} s / {pct(first, 95) / 1000:.2f} s | "
            f"{pct(verify, 50):.0f} ms / {pct(verify, 95):.0f} ms | "
            f"{pct(total, 50) / 1000:.2f} s / {pct(total, 95) / 1000:.2f} s |"
        )
    if api is not None and api.missing:
        print(f"\n{len(api.missing)} prompts of the API model had no recorded reply (answered as a failing server "
              f"would be)" + (f"; written to {args.prompts}" if args.prompts else ""))  # fmt: skip


if __name__ == "__main__":
    main()
