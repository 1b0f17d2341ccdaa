"""The ONNX embedder reproduces sentence-transformers' own vectors for the bundled model; its int8 version agrees
with them and is used only when it does; an index records its precision."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import write_jsonl

from rag.index.models import AGREEMENT, choose_precision, load_embedder
from rag.onnx import bundled_model_dir, cpu_has_int8_dot
from rag.records import Query

TEXTS = [
    "Sharpness-aware minimization improves adversarial robustness.",
    "A much longer sentence about protein language models that work at the level of atoms and residues, "
    "so that the batch needs padding.",
    "short",
]


def test_onnx_vectors_match_sentence_transformers(model_cache: Path) -> None:
    from sentence_transformers import SentenceTransformer

    ours = load_embedder("", model_cache).embed(TEXTS)
    reference = SentenceTransformer(str(bundled_model_dir()), device="cpu").encode(TEXTS, normalize_embeddings=True)
    assert ours.shape == (3, 384)
    assert np.abs(ours - reference).max() < 1e-4
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_batching_keeps_the_input_order(model_cache: Path) -> None:
    embedder = load_embedder("", model_cache, batch_size=2)
    together = embedder.embed(TEXTS)
    alone = np.stack([embedder.embed([t])[0] for t in TEXTS])
    assert np.abs(together - alone).max() < 1e-5
    assert together[0] @ together[1] < 0.9  # different texts, different vectors


def test_sessions_running_at_once_keep_the_input_order(model_cache: Path) -> None:
    texts = [f"{text} ({n})" for n in range(3) for text in TEXTS]  # shared out unevenly among three sessions
    shared = load_embedder("", model_cache, workers=3)
    assert len(shared.sessions) == 3
    alone = load_embedder("", model_cache, workers=1)
    expected = np.stack([alone.embed([t])[0] for t in texts])
    assert np.abs(shared.embed(texts) - expected).max() < 1e-5


def test_sessions_run_without_the_slow_fused_layer_norm(model_cache: Path, tmp_path: Path) -> None:
    """ORT's SkipLayerNormalization kernel took a quarter of the int8 model's time: the sessions keep the residual
    Add and LayerNormalization apart (benchmarks/embedding_speed.py), for the embedder and the verifier alike."""
    import onnx

    from rag.answer.entailment import model_path
    from rag.onnx import cpu_session

    int8 = load_embedder("", model_cache, precision="int8")
    for name, model in (("embedder", int8.onnx_path), ("verifier", model_path())):
        copy = tmp_path / f"{name}.onnx"
        cpu_session(model, 1, optimized_copy=copy)
        ops = {node.op_type for node in onnx.load(str(copy)).graph.node}
        assert "LayerNormalization" in ops and "SkipLayerNormalization" not in ops, (name, sorted(ops))


def test_int8_vectors_agree_with_fp32_and_are_used_only_when_they_do(model_cache: Path, tmp_path: Path) -> None:
    import shutil
    import warnings

    from rag.model_cache import record_sizes

    int8 = load_embedder("", model_cache, precision="int8")
    assert int8.precision == "int8"
    fp32 = load_embedder("", model_cache).embed(TEXTS)
    assert (int8.embed(TEXTS) * fp32).sum(axis=1).min() > 0.97
    record = next(model_cache.glob("*/model-int8.json"))
    assert json.loads(record.read_text())["mean_cosine"] >= AGREEMENT  # measured once, when it was made
    # A quantised model that disagreed (its record says so; a real disagreement cannot be made on demand) is not
    # used: the embedder falls back to fp32, with a warning.
    cache = tmp_path / "cache"
    shutil.copytree(record.parent, cache / record.parent.name)
    (cache / record.parent.name / record.name).write_text(json.dumps({"mean_cosine": 0.9, "threshold": AGREEMENT}))
    record_sizes(cache / record.parent.name, [record.name])  # as the process that measured it would
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fallback = load_embedder("", cache, precision="int8")
    assert fallback.precision == "fp32" and "disagree" in str(caught[0].message)


@pytest.mark.slow  # a subprocess or server: not in `make check`
def test_the_model_is_prepared_in_a_child_process_so_torch_never_enters_the_loading_one(tmp_path: Path) -> None:
    # Exporting imports torch and the model (about 1 GB that glibc would keep): an ingest's memory would carry it.
    script = (
        "import sys; from pathlib import Path; from rag.index.models import load_embedder; "
        f"e = load_embedder('', Path({str(tmp_path / 'cache')!r}), precision='int8'); "
        "print(e.precision, e.embed(['a sentence']).shape, 'torch' in sys.modules, "
        "'onnxruntime.quantization' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True)
    assert done.stdout.strip() == "int8 (1, 384) False False", done.stderr
    assert (next((tmp_path / "cache").glob("*/model-int8.onnx"))).stat().st_size > 1_000_000


def test_an_index_records_its_precision_and_a_mismatch_says_how_to_fix_it(make_settings, tmp_path: Path) -> None:
    from rag.errors import BadInput
    from rag.index import store
    from rag.index.ingest import ingest
    from rag.index.library import Library

    settings = make_settings()
    write_jsonl(tmp_path / "p.jsonl", [{"doc_id": "a", "abstract": "Sharpness-aware minimization finds flat minima."}])
    ingest([tmp_path / "p.jsonl"], settings)
    expected = "int8" if cpu_has_int8_dot() else "fp32"
    collection = store.open_collection(settings, create=False)
    assert store.index_precision(collection) == expected
    assert Library(settings).search(Query("flat minima", 1))[0].doc_id == "a"  # auto follows the index
    other = "fp32" if expected == "int8" else "int8"
    with pytest.raises(BadInput, match=f"built with {expected} embeddings.*RAG_EMBEDDING_PRECISION is {other}"):
        Library(settings.model_copy(update={"embedding_precision": other})).search(Query("flat minima", 1))
    # An index made at the other precision (on another machine, say): the model this machine would choose loads
    # while Chroma opens, and is replaced by the index's own.
    elsewhere = make_settings(data_dir=tmp_path / "elsewhere", embedding_precision=other)
    ingest([tmp_path / "p.jsonl"], elsewhere)
    library = Library(elsewhere.model_copy(update={"embedding_precision": "auto"}))
    assert library.search(Query("flat minima", 1))[0].doc_id == "a"
    assert library.embedder.precision == other
    assert choose_precision("auto", "fp32") == "fp32" and choose_precision("int8", None) == "int8"


def test_int8_is_chosen_on_cpus_that_multiply_8_bit_integers(tmp_path: Path) -> None:
    """VNNI or AMX, and AVX2 alone (ONNX Runtime's int8 kernels use its 8-bit multiply-add: int8 ingested 1.3x
    faster than fp32 on a 2-core AMD EPYC without VNNI); not a CPU with neither, nor one whose flags cannot be read."""
    cpuinfo = tmp_path / "cpuinfo"
    for flags, expected in (("fpu sse4_2 avx avx2 fma", True), ("fpu avx512f avx512_vnni", True),
                            ("fpu amx_int8", True), ("fpu sse4_2 avx", False)):  # fmt: skip
        cpuinfo.write_text(f"processor\t: 0\nflags\t\t: {flags}\n")
        assert cpu_has_int8_dot(cpuinfo) is expected, flags
    assert cpu_has_int8_dot(tmp_path / "missing") is False
