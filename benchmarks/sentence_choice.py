"""Benchmark: does the answer pick the sentence of an abstract that answers the question? Prints a Markdown table.

    .venv/bin/python benchmarks/sentence_choice.py --pubmedqa-dir DIR --seeds-dir DIR --scifact-dir DIR

The abstract is given (the question's gold abstract), so retrieval and the refusal gate play no part: only the choice
of sentences within it. Two ways of choosing are compared on the same rows: the plain relevance score, and the same
with the best few sentences re-read by the verifier's cross-encoder (what answers use; rag/answer/relevance.py).
- SciFact claims (eval/datasets/scifact, dev and held-out, each with the abstract that holds its rationale): is the
  best-scored sentence, or one of the two best, a rationale sentence (in SciFact's own sentence split)?
- Questions with must_contain (seeds; the paraphrased PubMedQA tuning set; the independent PubMedQA set, which is
  scored only): does one of the key sentences the extractive answer gives contain every must_contain entry?
Only the SciFact dev claims and the seeds and paraphrased questions were looked at while choosing the re-reading's
weights. Without the directories, each corpus is ingested into a temporary index first (a few minutes).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

from answer_quality import contains
from refusal_gate import DATASETS, ROOT, add_index_options, engine_for, pubmedqa_and_seeds

from rag.corpus import read_jsonl

SCIFACT_SENTENCES = ROOT.parent / "shared" / "datasets" / "scifact" / "corpus.jsonl"


def claim_rows() -> Iterator[tuple[str, str, list[str], set[int]]]:
    """(part, claim, its abstract's sentences, rationale sentence indices) for each claim with evidence."""
    sentences = {d["doc_id"]: d["sentences"] for d in read_jsonl(SCIFACT_SENTENCES)}
    for part in ("dev", "heldout"):
        for claim in read_jsonl(DATASETS / "scifact" / f"claims_{part}.jsonl"):
            for doc_id, rationales in claim["evidence"].items():
                yield (
                    f"SciFact {part} claims",
                    claim["question"],
                    sentences[doc_id],
                    {i for r in rationales for i in r["sentences"]},
                )


def question_rows(engine, name: str, path: Path) -> Iterator[tuple[str, str, list[str], set[int]]]:  # type: ignore[no-untyped-def]
    """(set, question, its gold abstract's sentences, the sentences holding every must_contain entry)."""
    from rag.sentences import sentence_spans

    for q in read_jsonl(path):
        if not q.get("answerable", True) or not q.get("must_contain") or len(q["gold"]) != 1:
            continue
        text = engine.library.abstracts(q["gold"])[q["gold"][0]]
        sentences = [text[a:b] for a, b in sentence_spans(text)]
        good = {i for i, s in enumerate(sentences) if all(contains(s, e) for e in q["must_contain"])}
        yield name, q["question"], sentences, good


def choices(engine, question: str, sentences: list[str], reread: bool) -> tuple[list[int], list[int]]:  # type: ignore[no-untyped-def]
    """(sentence indices by score, best first; the extractive answer's key sentences)."""
    from rag.answer.extractive import answering_scores, key_sentences
    from rag.answer.relevance import Question, question_terms
    from rag.answer.sources import Source

    library, pipeline = engine.library, engine.pipeline
    source = Source(1, "given", " ".join(sentences), sentences=sentences, vectors=library.embedder.embed(sentences))
    reader = pipeline.reader_for(question) if reread else None
    asked = Question(
        question, library.query_vector(question), question_terms(question, library.term_weights(question)), reader
    )
    order = [int(i) for i in answering_scores(source, asked).argsort()[::-1]]
    return order, key_sentences(source, asked, engine.settings.focus_margin)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_index_options(parser)
    parser.add_argument("--scifact-dir", type=Path, help="an index of eval/datasets/scifact/corpus.jsonl")
    args = parser.parse_args()
    if not SCIFACT_SENTENCES.exists():  # SciFact's own sentence split, which the rationale indices refer to
        parser.error(f"needs the shared SciFact corpus at {SCIFACT_SENTENCES}")  # exits with status 2
    pubmedqa, seeds = pubmedqa_and_seeds(args)
    scifact = engine_for(args.scifact_dir, DATASETS / "scifact" / "corpus.jsonl")
    tuning, independent = DATASETS / "pubmedqa_tune", DATASETS / "pubmedqa_independent"
    sets = [
        (scifact, claim_rows()),
        (seeds, question_rows(seeds, "seeds questions", DATASETS / "seeds_qa.jsonl")),
        (pubmedqa, question_rows(pubmedqa, "paraphrased PubMedQA (tuning)", tuning / "questions.jsonl")),
        (pubmedqa, question_rows(pubmedqa, "independent PubMedQA (scored only)", independent / "questions.jsonl")),
    ]
    counts: dict[str, list[int]] = {}
    for engine, rows in sets:
        for name, question, sentences, good in rows:
            tally = counts.setdefault(name, [0] * 7)
            tally[0] += 1
            for offset, reread in ((1, False), (4, True)):
                order, keys = choices(engine, question, sentences, reread)
                tally[offset] += order[0] in good
                tally[offset + 1] += bool(good & set(order[:2]))
                tally[offset + 2] += bool(good & set(keys))
    print("\n## Choosing an abstract's answering sentence: plain relevance -> re-read by the cross-encoder\n")
    print("| rows | n | best sentence | one of the best two | a key sentence of the answer |")
    print("|---|---|---|---|---|")
    for name, (n, *hits) in counts.items():
        cells = [f"{hits[i] / n:.3f} -> {hits[i + 3] / n:.3f}" for i in range(3)]
        print(f"| {name} | {n} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
