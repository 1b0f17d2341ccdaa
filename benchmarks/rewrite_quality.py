"""Benchmark: plain-worded questions with and without question rewriting. Prints a Markdown table.

    .venv/bin/python benchmarks/rewrite_quality.py --data-dir /tmp/ap-idx \
        eval/datasets/lay_questions/tune.jsonl eval/datasets/lay_questions/heldout.jsonl
    .venv/bin/python benchmarks/rewrite_quality.py --live local --data-dir /tmp/seeds-idx eval/datasets/seeds_qa.jsonl

Without rewriting: the extractive backend. With recorded rewrites: the rewrite of each question is the reply a
capable API model gave to prompts/rewrite_question.txt, recorded once (eval/datasets/lay_questions/
rewrites_recorded.jsonl; no such model can be reached here), and the answer is then assembled extractively from the
fused retrieval, so refusals, citations and nearest papers are the pipeline's own. `--live BACKEND` runs the real
rewrite call of that backend (the bundled model, or a server) to time it: it reports what the rewrite adds.

With the API model answering too: the same model's recorded answer (prompts/answer_*_quoted.txt) and its recorded
judgement of that answer (prompts/judge.txt, RAG_VERIFIER=auto), in eval/datasets/lay_questions/
answers_recorded.jsonl and judgements_recorded.jsonl; the pipeline between them (gate, quotes checked verbatim,
citations, fallbacks) is the product's own. `--prompts DIR` writes the prompts that have no recorded reply yet.

`--rerank-model DIR` adds the runs with that reranker (RAG_RERANK_MODEL), its gate threshold chosen on the first
dataset given (the tune part: the fewest answerable refused plus unanswerable answered, without rewriting) unless
`--rerank-threshold` sets it.

Per set: answerable refused, of those the share whose gold paper was among the nearest papers shown, unanswerable
answered, citation precision (cited abstracts that are gold), and must_contain hits on answerable questions.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import statistics
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAY = ROOT / "eval" / "datasets" / "lay_questions"
RECORDED = LAY / "rewrites_recorded.jsonl"
ANSWERS, JUDGEMENTS = LAY / "answers_recorded.jsonl", LAY / "judgements_recorded.jsonl"
Recorded = dict[str, dict[str, str]]  # question id -> prompt sha256 -> reply


class RecordedRewrites:
    """An LLM that answers the rewrite prompt with the recorded reply for the question and fails to write an answer
    (the pipeline then assembles it extractively)."""

    name = "recorded"
    context_size = 4096

    def __init__(self, replies: dict[str, str]) -> None:
        self.replies = replies

    def complete(self, messages: list[dict[str, str]], max_tokens: int, json: bool = False) -> str:
        prompt = messages[-1]["content"]
        question = prompt.rsplit("Question:", 1)[-1].strip()
        return self.replies.get(question, "")

    def stream(self, messages, max_tokens, choices=None):  # type: ignore[no-untyped-def]
        from rag.answer.llm import LLMError

        raise LLMError("recorded rewrites only: the answer is assembled extractively")
        yield ""  # a generator

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def warm_up(self, system_prompt: str) -> None:
        """Nothing to load."""


class RecordedAPIModel(RecordedRewrites):
    """A capable API model's recorded replies to all three prompts of an API answer: the rewrite, the answer
    (prompts/answer_*_quoted.txt) and the judge's check of it (prompts/judge.txt), by question id (`current`), each
    kept with the sha256 of the prompt it answers. A missing reply, or one to another prompt than the pipeline now
    sends, fails as a failing server does (the answer is then extractive, or checked by the bundled judge); with
    `prompts` set, each prompt without its reply is written there (DIR/answer/ID.txt, DIR/judge/ID.txt) to be
    answered."""

    def __init__(self, replies: dict[str, str], answers: Recorded, judgements: Recorded,
                 prompts: Path | None = None) -> None:  # fmt: skip
        from rag.answer.llm import OpenAIChat
        from rag.settings import Settings

        super().__init__(replies)
        self.context_size = Settings(_env_file=None).openai_context_size  # fitted as an API model's prompts are
        self.count_tokens = OpenAIChat.count_tokens  # type: ignore[method-assign]
        self.recorded = {"answer": answers, "judge": judgements}
        self.prompts = prompts
        self.current = ""
        self.missing: list[str] = []

    def complete(self, messages: list[dict[str, str]], max_tokens: int, json: bool = False) -> str:
        if not json:
            return super().complete(messages, max_tokens, json)
        return self._reply("judge", messages)

    def stream(self, messages, max_tokens, choices=None):  # type: ignore[no-untyped-def]
        yield self._reply("answer", messages)

    def _reply(self, kind: str, messages: list[dict[str, str]]) -> str:
        from rag.answer.llm import LLMError

        text = prompt_text(messages)
        found = self.recorded[kind].get(self.current, {}).get(hashlib.sha256(text.encode()).hexdigest())
        if found is not None:
            return found
        self.missing.append(f"{kind} {self.current}")
        if self.prompts:
            (self.prompts / kind).mkdir(parents=True, exist_ok=True)
            (self.prompts / kind / f"{self.current}.txt").write_text(text)
        raise LLMError(f"no recorded {kind} reply to this prompt")


def prompt_text(messages: list[dict[str, str]]) -> str:
    """A chat as the text a recorded reply answers (and whose sha256 it is kept with)."""
    return "\n\n".join(f"=== {m['role']} ===\n{m['content']}" for m in messages) + "\n"


def recorded(path: Path) -> Recorded:
    """Recorded replies by question id, then by the sha256 of the prompt they answer (a question can have several:
    its sources differed at Chroma's old search width, between processes and from today's width); none when the file
    is missing."""
    found: dict[str, dict[str, str]] = {}
    for row in map(json.loads, path.read_text().splitlines() if path.exists() else []):
        found.setdefault(row["id"], {})[row["prompt_sha256"]] = row["reply"]
    return found


def score(rows: list[dict], answers: list) -> dict[str, float | None]:  # type: ignore[type-arg]
    answerable = [(r, a) for r, a in zip(rows, answers, strict=True) if r["answerable"]]
    unanswerable = [a for r, a in zip(rows, answers, strict=True) if not r["answerable"]]
    refused = [(r, a) for r, a in answerable if a.refused]
    cited = [(c.doc_id, r["gold"]) for r, a in answerable for c in a.citations]
    hits = [any(alt.lower() in a.answer.lower() for alt in entry.split("|"))
            for r, a in answerable if not a.refused for entry in r.get("must_contain", [])]  # fmt: skip
    shown = [bool({p.doc_id for p in a.nearest} & set(r["gold"])) for r, a in refused]
    return {
        "answerable refused": len(refused) / len(answerable) if answerable else None,
        "gold among nearest (refused)": sum(shown) / len(shown) if shown else None,
        "unanswerable answered": sum(not a.refused for a in unanswerable) / len(unanswerable) if unanswerable else None,
        "citation precision": sum(d in g for d, g in cited) / len(cited) if cited else None,
        "must_contain (answered)": sum(hits) / len(hits) if hits else None,
    }


def calibrated(engine, rows: list[dict]) -> float:  # type: ignore[no-untyped-def]
    """The rerank threshold with the fewest answerable refused plus unanswerable answered on `rows` (the midpoint
    between neighbouring best scores; the higher of equals)."""
    from rag.answer.rerank import rerank
    from rag.records import Query

    pipeline = engine.pipeline
    best = []
    for r in rows:
        results = engine.library.search(Query(r["question"], k=engine.settings.rerank_candidates))
        best.append((rerank(pipeline.reranker, r["question"], results, 1).best or 0.0, r["answerable"]))
    scores = sorted({b for b, _ in best})
    cuts = [0.0] + [(a + b) / 2 for a, b in itertools.pairwise(scores)] + [1.0]
    errors = {cut: sum((b < cut) == answerable for b, answerable in best) for cut in cuts}
    return min(cuts, key=lambda cut: (errors[cut], -cut))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("datasets", type=Path, nargs="+")
    parser.add_argument("--data-dir", type=Path, required=True, help="an index holding the datasets' abstracts")
    parser.add_argument("--live", help="time the real rewrite call of this backend instead")
    parser.add_argument("--rerank-model", type=Path, help="also run with this reranker folder (RAG_RERANK_MODEL)")
    parser.add_argument("--rerank-threshold", type=float, help="its gate threshold (default: chosen on the first set)")
    parser.add_argument(
        "--prompts", type=Path, help="write there the answer and judge prompts without a recorded reply"
    )
    args = parser.parse_args()
    from rag.engine import Engine
    from rag.settings import Settings

    # the recorded replies answer prompts of whole abstracts, whatever the environment says
    settings = Settings(data_dir=args.data_dir, openai_abstracts="whole")
    plain = Engine(settings.model_copy(update={"rewrite": "off"}))
    if args.live:
        live = Engine(settings.model_copy(update={"rewrite": "on"}), embedder=plain.library.embedder)
        for path in args.datasets:
            rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
            times = [live.ask(r["question"], args.live).timings_ms.get("rewrite", 0.0) for r in rows]
            print(f"| {path.parent.name}/{path.name} | {args.live} | rewrite p50 {statistics.median(times):.0f} ms | "
                  f"max {max(times):.0f} ms | {len(rows)} questions |")  # fmt: skip
        return
    replies = {json.loads(line)["question"]: json.loads(line)["reply"] for line in RECORDED.read_text().splitlines()}
    rewriting = Engine(settings.model_copy(update={"rewrite": "on"}), llm=RecordedRewrites(replies),  # type: ignore[arg-type]
                       embedder=plain.library.embedder)  # fmt: skip
    api = RecordedAPIModel(replies, recorded(ANSWERS), recorded(JUDGEMENTS), args.prompts)
    answering = Engine(settings.model_copy(update={"rewrite": "on", "verifier": "auto"}), llm=api,  # type: ignore[arg-type]
                       embedder=plain.library.embedder)  # fmt: skip
    runs = [("none", plain, "extractive"), ("recorded API model", rewriting, "local"),
            ("recorded API model, its answers and judge", answering, "openai")]  # fmt: skip
    if args.rerank_model:
        reranking = {"rerank_model": args.rerank_model}
        first = [json.loads(line) for line in args.datasets[0].read_text().splitlines() if line.strip()]
        calibrating = Engine(settings.model_copy(update=reranking), embedder=plain.library.embedder)
        threshold = args.rerank_threshold
        if threshold is None:
            threshold = calibrated(calibrating, first)
        print(f"rerank threshold {threshold:.4f}" + (" (given)" if args.rerank_threshold is not None else
              f" (chosen on {args.datasets[0]})"))  # fmt: skip
        reranking["rerank_threshold"] = threshold
        runs += [
            ("none, reranked", Engine(settings.model_copy(update={**reranking, "rewrite": "off"}),
                                      embedder=plain.library.embedder), "extractive"),
            ("recorded API model, reranked", Engine(settings.model_copy(update={**reranking, "rewrite": "on"}),
             llm=RecordedRewrites(replies), embedder=plain.library.embedder), "local"),  # type: ignore[arg-type]
        ]  # fmt: skip
    names = list(score([], []))
    print("| set | rewriting | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))
    for path in args.datasets:
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        for label, engine, backend in runs:
            figures = score(rows, [asked(engine, r, backend, api) for r in rows])
            cells = " | ".join("-" if v is None else f"{v:.3f}" for v in figures.values())
            print(f"| {path.parent.name}/{path.name} ({len(rows)}) | {label} | {cells} |", flush=True)
    if api.missing:
        print(
            f"\n{len(api.missing)} prompts of the API model had no recorded reply (answered as a failing server "
            f"would be): {', '.join(api.missing[:10])}" + (f"; written to {args.prompts}" if args.prompts else "")
        )


def asked(engine, row: dict, backend: str, api: RecordedAPIModel):  # type: ignore[no-untyped-def]
    api.current = row["id"]
    return engine.ask(row["question"], backend)


if __name__ == "__main__":
    main()
