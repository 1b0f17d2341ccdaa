"""`rag eval`: every configured run over every dataset, resumable (finished questions are cached under the output
folder), then the reports."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag.evaluation.harness import RunConfig, check_gold_indexed, engine_for, load_dataset, run_dataset, summarize_run
from rag.evaluation.reports import write_reports

if TYPE_CHECKING:
    from rag.engine import Engine

Track = Callable[[str, int], Callable[[int], None]]  # (label, questions) -> advance(n): a progress bar per part


def evaluate(
    engine: Engine,
    datasets: list[Path],
    runs: list[RunConfig],
    out: Path,
    retrieval_only: bool = False,
    limit: int | None = None,
    track: Track | None = None,
) -> list[dict[str, Any]]:
    """Score each run on each dataset (its first `limit` questions) and write report.json, report.md and plots to
    `out`; the runs' summaries. BadInput, before any work, when a dataset's gold abstracts are not indexed."""
    loaded = [(path, load_dataset(path)[:limit]) for path in datasets]
    for path, rows in loaded:
        check_gold_indexed(engine.library, rows, path)
    summaries, engines = [], {}
    for run in runs:
        for path, rows in loaded:
            advance = track(f"{run.name} on {path.stem}", len(rows)) if track else None
            results = run_dataset(
                engine_for(engine, run, engines), run, path, rows, out / "cache", retrieval_only, advance
            )
            summaries.append(summarize_run(run, path, results, retrieval_only))
    write_reports(out, summaries)
    return summaries
