"""The written answer-style claims: which abstracts the writers were given, and the merge of what they wrote.

    .venv/bin/python eval/datasets/written_claims/written.py choose OUT_DIR [--writers 8] [--per-writer 30] [--start 0]
    .venv/bin/python eval/datasets/written_claims/written.py merge PARTS_DIR [--append]  # tune.jsonl, heldout.jsonl

`choose` is deterministic: the abstracts the verifier may train on (rag/training/answer_pairs.py
`training_abstracts`: no evaluation set's, none of the answer-pairs held-out split) with 5 to 12 usable sentences,
ordered by sha256("written:" + doc_id), PubMedQA and SciFact alternating; one numbered input file per writer;
`--start`: the abstracts of a later round begin this far into that order (round 1: 0; round 2: 240).
`merge` checks each writer's JSON Lines, resolves `premise` (sentence numbers) to the sentences' text, and splits
by abstract, fixed before writing: held out when int(sha256(doc_id)) % 5 == 0; `--append` adds a later round's
claims after the earlier ones, whose ids stay as they were.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from rag.training.answer_pairs import training_abstracts

HERE = Path(__file__).resolve().parent
KINDS = {
    "SUPPORT": {"paraphrase", "result", "synthesis"},
    "CONTRADICT": {"changed_number", "reversed_finding", "negation"},
    "NEI": {"swapped_name", "overclaim", "added_cause"},
}


def order(doc_id: str) -> str:
    return hashlib.sha256(f"written:{doc_id}".encode()).hexdigest()


def split_of(doc_id: str) -> str:
    return "heldout" if int(hashlib.sha256(doc_id.encode()).hexdigest(), 16) % 5 == 0 else "tune"


def usable() -> dict[str, list[str]]:
    return {d: ss for d, ss in training_abstracts().items() if 5 <= len(ss) <= 12}


def chosen(docs: dict[str, list[str]], count: int, start: int = 0) -> list[str]:
    by_corpus = [sorted((d for d in docs if d.startswith(p)), key=order) for p in ("pubmed:", "scifact:")]
    return [d for pair in zip(*by_corpus, strict=False) for d in pair][start : start + count]


def choose(out: Path, writers: int, per_writer: int, start: int) -> None:
    docs = usable()
    picked = chosen(docs, writers * per_writer, start)
    out.mkdir(parents=True, exist_ok=True)
    for w in range(writers):
        part = picked[w * per_writer : (w + 1) * per_writer]
        text = "\n\n".join(
            f"doc_id: {d}\n" + "\n".join(f"[{i}] {s}" for i, s in enumerate(docs[d], start=1)) for d in part
        )
        (out / f"part-{w + 1}.md").write_text(text + "\n")
    print(f"{len(picked)} abstracts in {writers} files -> {out}")


def bad_input(message: str) -> None:
    """One line on stderr and exit 2, before anything is written."""
    print(message, file=sys.stderr)
    raise SystemExit(2)


def merge(parts: Path, append: bool) -> None:
    docs = usable()
    rows: list[dict] = []
    for path in sorted(parts.glob("part-*.jsonl"), key=lambda p: int(p.stem.split("-")[1])):
        for n, line in enumerate(path.read_text().splitlines(), start=1):
            if not line.strip():
                continue
            row = json.loads(line)
            sentences = docs.get(row["doc_id"], [])
            if row["label"] not in KINDS or row["kind"] not in KINDS[row["label"]]:
                bad_input(f"{path.name}:{n}: kind {row['kind']!r} is not a {row['label']!r} kind")
            if not sentences or not all(1 <= i <= len(sentences) for i in row["premise"]):
                bad_input(f"{path.name}:{n}: {row['doc_id']} was not given, or has no sentence {row['premise']}")
            premise = " ".join(sentences[i - 1] for i in row["premise"])
            gold = [row["doc_id"]] if row["label"] != "NEI" else []
            rows.append({"question": row["question"].strip(), "doc_id": row["doc_id"], "label": row["label"],
                         "kind": row["kind"], "gold": gold, "answerable": bool(gold), "premise": premise})  # fmt: skip
    earlier = {split: (HERE / f"{split}.jsonl").read_text() if append else "" for split in ("tune", "heldout")}
    merged = {json.loads(line)["doc_id"] for text in earlier.values() for line in text.splitlines()}
    if merged & {r["doc_id"] for r in rows}:  # checked for both parts before either is written
        bad_input("tune.jsonl or heldout.jsonl already holds claims about some of these abstracts")
    for split in ("tune", "heldout"):
        path = HERE / f"{split}.jsonl"
        kept = [r for r in rows if split_of(r["doc_id"]) == split]
        first = len(earlier[split].splitlines()) + 1
        text = "".join(json.dumps({"id": f"wc-{split[0]}{i:04d}", **r}, ensure_ascii=False) + "\n"
                       for i, r in enumerate(kept, start=first))  # fmt: skip
        path.write_text(earlier[split] + text)
        print(f"{split}: {len(kept)} claims over {len({r['doc_id'] for r in kept})} abstracts added to {path.name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    pick = commands.add_parser("choose", help="write one input file per writer")
    pick.add_argument("out", type=Path)
    pick.add_argument("--writers", type=int, default=8)
    pick.add_argument("--per-writer", type=int, default=30)
    pick.add_argument("--start", type=int, default=0, help="skip this many abstracts of the order (earlier rounds)")
    join = commands.add_parser("merge", help="check and split what the writers wrote")
    join.add_argument("parts", type=Path)
    join.add_argument("--append", action="store_true", help="keep the claims already merged, add these after them")
    args = parser.parse_args()
    if args.command == "choose":
        choose(args.out, args.writers, args.per_writer, args.start)
    else:
        merge(args.parts, args.append)


if __name__ == "__main__":
    main()
