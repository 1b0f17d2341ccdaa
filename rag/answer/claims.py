"""Checking claims in bulk (`rag verify --claims FILE.jsonl`): one JSON record per input line, a bad line or an
unknown doc_id an error record rather than a stop."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from rag.answer.entailment import Judgement
from rag.errors import BadInput

Verify = Callable[[str, str], Judgement]  # (claim, doc_id) -> what that indexed abstract says about it


def verdict_record(doc_id: str, verdict: Judgement, **head: str) -> dict[str, Any]:
    """The JSON of a checked claim: head fields (id or claim), doc_id, verdict, score and the deciding quote."""
    return {
        **head,
        "doc_id": doc_id,
        "verdict": verdict.label,
        "score": round(verdict.score, 4),
        "quote": verdict.quote,
    }


def check_claims(path: Path, verify: Verify) -> Iterator[dict[str, Any]]:
    """One output record per non-empty input line of {"id", "claim", "doc_id"} (BadInput when there is no file)."""
    if not path.is_file():
        raise BadInput(f"{path}: no such file")
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            claim_id, claim, doc_id = str(item["id"]), str(item["claim"]), str(item["doc_id"])
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            yield {"line": lineno, "error": f"expected a JSON object with id, claim and doc_id ({exc})"}
            continue
        try:
            yield verdict_record(doc_id, verify(claim, doc_id), id=claim_id)
        except BadInput as exc:
            yield {"id": claim_id, "doc_id": doc_id, "error": str(exc)}
