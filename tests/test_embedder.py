"""The ONNX embedder reproduces sentence-transformers' own vectors for the bundled model."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rag.embedder import bundled_model_dir, load_embedder

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
