"""Benchmark: the learned instruction filter (rag/corpus/instruction_filter.py). Prints one Markdown table, then the
sentences it flags.

    .venv/bin/python benchmarks/instruction_filter.py        # about 3 minutes

- Withheld: the rates recorded by `rag train-instruction-filter` in rag/models/instructions/model.json (instructions
  generated with payloads never trained on, each between two ordinary sentences of a test abstract, split as the
  product splits it): the evaluation model on held-out languages (sv, uk, id) and template families (role, link),
  per family; the shipped model on every language and family. Then the ten new wordings of
  tests/test_instruction_filter.py, written by hand in none of the phrase tables' wordings.
- False alarms: every sentence of the shared corpora (PubMedQA, SciFact) and of the seeds, by the shipped model;
  the flagged sentences are listed.
- Cost: per abstract at ingest (sentence split, patterns, the learned filter), over the 6,183 shared abstracts;
  answer latency with the filter on and off (extractive backend, the seeds' questions, alternating, 3 rounds).
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from common import seeds_index  # noqa: E402
from test_instruction_filter import NEW_WORDINGS, abstract_with, withheld_text  # noqa: E402


def row(measure: str, value: str) -> None:
    print(f"| {measure} | {value} |", flush=True)


def recorded() -> None:
    from rag.corpus.instruction_filter import MODEL_DIR

    record = json.loads((MODEL_DIR / "model.json").read_text())
    for model in ("evaluation_model", "shipped_model"):
        for group, found in record[model]["withheld"].items():
            families = ", ".join(
                f"{k.removeprefix('family:')} {v:.2f}" for k, v in found.items() if k.startswith("family:")
            )
            row(f"withheld, {model.replace('_', ' ')}: {group} (n={found['n']})",
                f"{found['withheld']:.3f} ({families})")  # fmt: skip
        row(f"false alarms, {model.replace('_', ' ')}: test abstracts' sentences",
            f"{record[model]['false_alarms']} of {record[model]['test_sentences']}")  # fmt: skip


def new_wordings() -> None:
    from rag.corpus.injection import Guard, learned_filter

    guard = Guard(learned_filter())
    caught = [s in " ".join(withheld_text(guard, abstract_with(s))) for s in NEW_WORDINGS]
    row("withheld: new hand-written wordings", f"{sum(caught)} of {len(caught)}")


def false_alarms() -> list[str]:
    from rag.corpus.injection import Guard, learned_filter
    from rag.corpus.loaders import load_corpus
    from rag.training.instructions import CORPORA, corpus_sentences

    filter_ = learned_filter()
    sentences = [s for ss in corpus_sentences().values() for s in ss]
    flagged = [s for s, score in zip(sentences, filter_.scores(sentences), strict=True) if score > filter_.threshold]
    row("false alarms: every sentence of PubMedQA + SciFact, each read alone (the filter)",
        f"{len(flagged)} of {len(sentences)} ({len(flagged) / len(sentences):.3%})")  # fmt: skip
    guard = Guard(filter_)
    withheld, papers_hit = [], 0
    for paper in load_corpus(list(CORPORA)).papers:  # as the product reads them: sentences and neighbouring pairs
        found = withheld_text(guard, paper.abstract)
        withheld += found
        papers_hit += bool(found)
    row("false alarms: withheld from every abstract of PubMedQA + SciFact (patterns + filter, sentences and pairs)",
        f"{len(withheld)} of {len(sentences)} sentences ({len(withheld) / len(sentences):.3%}), in {papers_hit} "
        f"abstracts")  # fmt: skip
    papers = load_corpus([ROOT / "seeds"]).papers
    seeds = [s for p in papers for s in withheld_text(guard, p.abstract)]
    total = sum(len(sentence_spans_of(p.abstract)) for p in papers)
    row("false alarms: every sentence of the seeds (withheld, patterns + filter)", f"{len(seeds)} of {total}")
    return list(dict.fromkeys(flagged + withheld)) + seeds


def sentence_spans_of(text: str) -> list[tuple[int, int]]:
    from rag.sentences import sentence_spans

    return sentence_spans(text)


def ingest_cost() -> None:
    from rag.corpus.injection import Guard, learned_filter
    from rag.corpus.loaders import read_jsonl
    from rag.training.instructions import CORPORA

    abstracts = [r["abstract"] for path in CORPORA for r in read_jsonl(path)]
    spans = [sentence_spans_of(a) for a in abstracts]  # warm the splitter
    for name, guard in (("patterns", Guard()), ("patterns + learned filter", Guard(learned_filter()))):
        started = time.perf_counter()
        for text, found in zip(abstracts, spans, strict=True):
            guard.withheld(text, found)
        row(f"cost per abstract at ingest: {name}", f"{(time.perf_counter() - started) / len(abstracts) * 1000:.3f} ms")
    filter_ = learned_filter()
    started = time.perf_counter()
    for text, found in zip(abstracts, spans, strict=True):
        n = len(found)
        filter_.run_scores(
            [text[a:b] for a, b in found], [(i, i + 1) for i in range(n)] + [(i, i + 2) for i in range(n - 1)]
        )
    row(
        "cost per abstract: the learned filter alone",
        f"{(time.perf_counter() - started) / len(abstracts) * 1000:.3f} ms",
    )
    started = time.perf_counter()
    for text in abstracts:
        sentence_spans_of(text)
    row("cost per abstract: splitting it into sentences (once more)",
        f"{(time.perf_counter() - started) / len(abstracts) * 1000:.3f} ms")  # fmt: skip


def answer_latency(work: Path) -> None:
    from rag.corpus.loaders import read_jsonl
    from rag.engine import Engine
    from rag.settings import Settings

    data = seeds_index(work)
    questions = [q["question"] for q in read_jsonl(ROOT / "eval" / "datasets" / "seeds_qa.jsonl")][:30]
    engines = {on: Engine(Settings(_env_file=None, data_dir=data, instruction_filter=on)) for on in (True, False)}
    for engine in engines.values():
        engine.ask(questions[0], "extractive")  # load the models
    times: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(3):
        for question in questions:
            for on, engine in engines.items():
                started = time.perf_counter()
                engine.ask(question, "extractive")
                times[on].append(time.perf_counter() - started)
    for on in (False, True):
        row(f"answer latency, extractive, filter {'on' if on else 'off'} (p50 / mean of {len(times[on])})",
            f"{statistics.median(times[on]) * 1000:.0f} / {statistics.mean(times[on]) * 1000:.0f} ms")  # fmt: skip
    change = statistics.mean(times[True]) / statistics.mean(times[False]) - 1
    row("answer latency change with the filter (mean)", f"{change:+.1%}")


def main() -> None:
    print("| measure | value |\n|---|---|")
    recorded()
    new_wordings()
    flagged = false_alarms()
    ingest_cost()
    with tempfile.TemporaryDirectory() as work:
        answer_latency(Path(work))
    print("\nFlagged ordinary sentences:")
    for sentence in flagged:
        print(f"- {sentence[:200]}")


if __name__ == "__main__":
    main()
