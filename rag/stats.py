"""What is indexed: counts from the collection and the keyword index's manifest (no model is loaded)."""

from __future__ import annotations

from typing import Any

from rag import store
from rag.keyword_index import read_manifest
from rag.settings import Settings


def index_stats(settings: Settings) -> dict[str, Any]:
    collection = store.open_collection(settings, create=False)
    chunks = collection.count() if collection is not None else 0
    manifest = read_manifest(settings.keyword_dir) or {"docs": 0, "venues": {}, "years": {}}
    where = (
        f"chroma server {settings.chroma_host}:{settings.chroma_port}"
        if settings.chroma_host
        else f"embedded chroma in {settings.chroma_path}"
    )
    return {
        "store": where,
        "collection": settings.collection,
        "abstracts": manifest["docs"] if chunks else 0,
        "chunks": chunks,
        "venues": manifest["venues"] if chunks else {},
        "years": manifest["years"] if chunks else {},
        "embedding_model": settings.embedding_model or "all-MiniLM-L6-v2 (bundled)",
    }
