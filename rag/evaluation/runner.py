"""`rag eval`: every configured run over every dataset, resumable (finished questions are cached under the output
folder), then the reports."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag.evaluation.harness import RunConfig, engine_for, load_dataset, run_dataset, summarize_run
from rag.evaluation.harness import check_gold_indexed as check_gold
from rag.evaluation.reports import write_reports

if TYPE_CHECKING:
    from rag.engine import Engine
    from rag.index import Library

Track = Callable[[str, int], Callable[[int], None]]  # (label, questions) -> advance(n): a progress bar per part
Loaded = list[tuple[Path, list[dict[str, Any]]]]  # each dataset with its questions


def load_datasets(paths: list[Path], limit: int | None = None) -> Loaded:
    """Each dataset's first `limit` questions (BadInput for a missing or malformed dataset)."""
    return [(path, load_dataset(path)[:limit]) for path in paths]


def check_gold_indexed(library: Library, loaded: Loaded) -> None:
    """BadInput, before any work, when a dataset's gold abstracts are not indexed."""
    for path, rows in loaded:
        check_gold(library, rows, path)


def evaluate(
    engine: Engine,
    loaded: Loaded,
    runs: list[RunConfig],
    out: Path,
    retrieval_only: bool = False,
    track: Track | None = None,
) -> list[dict[str, Any]]:
    """Score each run on each loaded dataset and write report.json, report.md and plots to `out`; the runs'
    summaries."""
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
