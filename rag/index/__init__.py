"""The index: embedding, the Chroma store and the keyword index, ingest, retrieval, and `Library`, the one face the
rest of the project uses (front ends, the engine, the evaluation harness)."""

from rag.index.library import Library

__all__ = ["Library"]
