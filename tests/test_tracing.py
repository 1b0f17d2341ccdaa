"""Opt-in traces: with OpenTelemetry's in-memory exporter, an ingest, a search and an answer each give their span,
the answer a child span per stage that lies within it. Run in a child process: OpenTelemetry's tracer provider is
process-wide by design, and set once."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import ROOT, SEEDS

PROBE = """
import json, sys
from pathlib import Path
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from rag.engine import Engine
from rag.index.ingest import ingest
from rag.settings import Settings
from rag.tracing import configure

settings = Settings(_env_file=None, data_dir=Path(sys.argv[1]), model_cache=Path(sys.argv[2]))
exporter = InMemorySpanExporter()
assert configure(settings, exporter)
ingest([Path(sys.argv[3])], settings)
engine = Engine(settings)
engine.library.search("sharpness-aware minimization")
engine.ask("Can sharpness-aware minimization improve adversarial robustness?", "extractive")
print(json.dumps([{"name": s.name, "start": s.start_time, "end": s.end_time,
                   "parent": s.parent.span_id if s.parent else None, "id": s.context.span_id,
                   "attributes": dict(s.attributes or {})} for s in exporter.get_finished_spans()]))
"""


@pytest.mark.slow  # a subprocess or server: not in `make check`
def test_ingest_search_and_answer_are_traced_with_a_span_per_stage(tmp_path, model_cache) -> None:
    corpus = SEEDS / sorted(p.name for p in SEEDS.iterdir() if p.suffix == ".txt")[0]
    done = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / "data"), str(model_cache), str(corpus)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    spans = json.loads(done.stdout.strip().splitlines()[-1])
    by_name = {s["name"]: s for s in spans}
    ingest = by_name["rag.ingest"]
    assert {"count", "store", "keyword_index"} <= {s["name"] for s in spans if s["parent"] == ingest["id"]}
    assert ingest["attributes"]["added"] > 0
    assert sum(s["name"] == "rag.search" for s in spans) >= 2  # the search, and the answer's retrieval
    answer = by_name["rag.answer"]
    stages = [s for s in spans if s["parent"] == answer["id"]]
    assert {"retrieve", "fallback"} <= {s["name"] for s in stages}, [s["name"] for s in stages]  # extractive
    assert all(answer["start"] <= s["start"] <= s["end"] <= answer["end"] for s in stages)
