"""The library's routes: models, stats, search, ingest, and this process's embedding model as an OpenAI-compatible
embeddings server."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, File, UploadFile
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from rag.frontends.http.admission import Admission
from rag.frontends.http.wire import MODEL, ApiError, model_ids
from rag.records import Query
from rag.settings import Mode

if TYPE_CHECKING:
    from rag.engine import Engine


MAX_EMBEDDING_INPUTS = 2048  # texts per embeddings request (OpenAI's limit too)
MAX_INPUT_CHARS = 32_000  # characters per text (the model reads its first 256 tokens)
RESERVED_NAMES = {"CON", "PRN", "AUX", "NUL", *(f"{port}{n}" for port in ("COM", "LPT") for n in range(1, 10))}


class SearchRequest(BaseModel):
    query: str
    k: int | None = Field(None, ge=1, le=100)
    venue: str | None = None
    year: int | None = None
    mode: Mode = "hybrid"
    year_to: int | None = None
    author: str | None = None

    def as_query(self) -> Query:
        return Query(self.query, self.k, self.venue, self.year, self.mode, self.year_to, self.author)


class EmbeddingsRequest(BaseModel):
    model: str = ""
    input: str | list[str]
    encoding_format: str = "float"


def library_router(engine: Engine, admission: Admission) -> APIRouter:
    settings = engine.settings
    router = APIRouter()

    @router.get("/v1/models")
    async def models() -> dict[str, Any]:
        created = int(time.time())
        return {"object": "list", "data": [{"id": m, "object": "model", "created": created, "owned_by": MODEL}
                                           for m in model_ids()]}  # fmt: skip

    @router.get("/v1/stats")
    async def stats() -> dict[str, Any]:
        found = await run_in_threadpool(engine.library.stats)
        return found | {"store": "a Chroma server" if settings.chroma_host else "embedded Chroma in the data directory"}

    @router.post("/v1/search")
    async def search(body: SearchRequest) -> dict[str, Any]:
        place = admission.admit()
        async with admission.turn(place):
            results = await run_in_threadpool(engine.library.search, body.as_query())
        return {"query": body.query, "results": [r.contract() for r in results]}

    @router.post("/v1/embeddings")
    async def embeddings(body: EmbeddingsRequest) -> dict[str, Any]:
        """This process's embedding model as an OpenAI-compatible embeddings server (for other machines' ingests:
        RAG_EMBEDDING_BASE_URL). Served at the index's precision."""
        texts = [body.input] if isinstance(body.input, str) else body.input
        if not texts or body.encoding_format != "float":
            raise ApiError(400, "input must be one or more texts, encoding_format 'float'")
        if len(texts) > MAX_EMBEDDING_INPUTS:
            raise ApiError(400, f"input has {len(texts):,} texts; at most {MAX_EMBEDDING_INPUTS:,} per request")
        if (longest := max(len(text) for text in texts)) > MAX_INPUT_CHARS:
            raise ApiError(400, f"an input has {longest:,} characters; at most {MAX_INPUT_CHARS:,} per text")
        place = admission.admit()
        async with admission.turn(place):
            vectors = await run_in_threadpool(engine.library.embedder.embed, texts)
        data = [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]
        usage = {"prompt_tokens": 0, "total_tokens": 0}
        return {"object": "list", "data": data, "model": body.model or settings.embedding_api_model, "usage": usage}

    @router.post("/v1/ingest")
    async def ingest(file: UploadFile = File(...)) -> dict[str, Any]:  # noqa: B008 - FastAPI's idiom
        """Add the abstracts of one corpus file (any kind `rag ingest` reads: docs/contracts.md)."""
        name = upload_name(file.filename)
        data = await file.read(settings.api_max_body_mb * 1_000_000 + 1)
        if len(data) > settings.api_max_body_mb * 1_000_000:
            raise ApiError(413, f"the file is larger than {settings.api_max_body_mb} MB (RAG_API_MAX_BODY_MB)")
        place = admission.admit()
        async with admission.turn(place):
            report = await run_in_threadpool(add_file, engine, name, data)
        return report

    return router


def upload_name(given: str | None) -> str:
    """The uploaded file's name as it is saved: its last part only; none, a dot name or a reserved device name is
    refused (400)."""
    name = (given or "").replace("\\", "/").rsplit("/", 1)[-1].strip()
    if not name or name.startswith(".") or name.split(".")[0].upper() in RESERVED_NAMES or "\x00" in name:
        raise ApiError(400, f"the upload's file name {given!r} cannot be used; name it like papers.jsonl")
    return name


def add_file(engine: Engine, name: str, data: bytes) -> dict[str, Any]:
    """Ingest one uploaded file; the report of `rag ingest`."""
    with tempfile.TemporaryDirectory(prefix="rag-upload-") as folder:
        path = Path(folder) / name
        path.write_bytes(data)
        report = engine.library.add([path])
    return {
        "added": report.added,
        "updated": report.updated,
        "unchanged": report.unchanged,
        "rejected": report.skipped,
        "problems": [p.short() for p in report.problems],
        "chunks_written": report.chunks_written,
    }
