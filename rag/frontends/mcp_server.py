"""The library as an MCP server (the official `mcp` SDK's MCPServer): the tools, resources and prompt that assistants
and editors call. `rag mcp` serves it over stdio; `rag serve` mounts it at /mcp over streamable HTTP, behind the same
guard and admission as the rest of the API. It calls only the engine, as every front end does.

Tools take typed inputs and return structured results (their JSON is also the text the model reads); bad input is a
tool error (`isError`) with a one-line reason. `ask` and `summarize` report progress (retrieving, generating,
verifying) and stop their work when the client cancels the call. docs/contracts.md lists the tools' shapes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar
from urllib.parse import quote, unquote

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.server.mcpserver.prompts.base import UserMessage
from pydantic import BaseModel, Field

from rag.answer import Sentence, Token
from rag.answer.chat import history_pairs
from rag.errors import BadInput
from rag.records import Answer, Paper, Query
from rag.text import EmptyInput, check_question, web_url

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from rag.engine import Engine
    from rag.frontends.http.admission import Admission

log = logging.getLogger("rag.mcp")
T = TypeVar("T")
INSTRUCTIONS = (
    "Answers about the scientific abstracts indexed in this library, every sentence checked against the abstract "
    "it cites. Use `search` to find papers, `ask` for a cited answer (it refuses when no abstract answers), "
    "`verify` to check a claim against one paper, `get_abstract` or the abstract://{doc_id} resource for a paper's "
    "record, `summarize` for a cited overview of a topic. Quote citations as the tools give them; do not add claims "
    "the answers do not make."
)
STAGES = ("retrieving", "generating", "verifying", "done")

Venue = Annotated[str | None, Field(description="Only papers of this venue or journal, as `stats` lists them.")]
YearFrom = Annotated[int | None, Field(description="Only papers published in or after this year.", ge=1000, le=3000)]
YearTo = Annotated[int | None, Field(description="Only papers published in or before this year.", ge=1000, le=3000)]
Author = Annotated[str | None, Field(description="Only papers with an author whose name contains this (any case).")]
Backend = Annotated[str | None, Field(description="The LLM backend: local, openai, extractive (default: configured).")]


class PaperHit(BaseModel):
    id: str = Field(description="The paper's doc_id (also `id`, as chat apps' connectors expect).")
    doc_id: str
    title: str
    url: str = Field(description="The paper's web page, else its abstract:// resource.")
    venue: str | None
    year: int | None
    authors: list[str]
    score: float
    snippet: str = Field(description="The passage that matched.")


class SearchResults(BaseModel):
    results: list[PaperHit]


class CitedSource(BaseModel):
    n: int
    doc_id: str
    title: str | None
    venue: str | None
    year: int | None
    url: str
    quote: str = Field(description="The abstract's words that support the sentences citing [n], verbatim.")
    verified: bool = Field(description="Whether a verified sentence cites it.")


class AnswerSentence(BaseModel):
    text: str
    verified: bool
    citations: list[int]


class CitedAnswer(BaseModel):
    answer: str = Field(description="The answer with [n] markers, or the refusal.")
    refused: bool = Field(description="True when no indexed abstract answers the question.")
    citations: list[CitedSource]
    sentences: list[AnswerSentence]
    note: str | None
    backend: str


class Verdict(BaseModel):
    doc_id: str
    claim: str
    verdict: Literal["supported", "contradicted", "not_enough_info"]
    score: float
    evidence: str = Field(description="The deciding words of the abstract, verbatim.")
    reason: str | None = None


class PaperRecord(BaseModel):
    doc_id: str
    title: str | None
    authors: list[str]
    venue: str | None
    year: int | None
    url: str | None
    doi: str | None
    identifiers: list[str]
    keywords: list[str]
    abstract: str


class FetchedDocument(BaseModel):
    id: str
    title: str
    text: str
    url: str
    metadata: dict[str, Any]


class PaperRow(BaseModel):
    doc_id: str
    title: str | None
    venue: str | None
    year: int | None
    authors: str


class PapersPage(BaseModel):
    total: int
    offset: int
    papers: list[PaperRow]


class AddReport(BaseModel):
    added: int
    updated: int
    unchanged: int
    rejected: int
    problems: list[str]


def paper_url(doc_id: str, url: str | None = None) -> str:
    return web_url(url) or f"abstract://{quote(doc_id, safe='')}"


def create_server(engine: Engine, admission: Admission | None = None) -> MCPServer:
    """The MCP server over one engine; with `admission` (rag serve), tool calls wait their turn with the API's."""
    server = MCPServer("abstracts-rag", instructions=INSTRUCTIONS)
    Tools(engine, admission).register(server)
    return server


class Tools:
    """The server's tools, resource and prompt, over the engine. `cancelled` counts calls stopped by the client."""

    def __init__(self, engine: Engine, admission: Admission | None) -> None:
        self.engine = engine
        self.library = engine.library
        self.admission = admission
        self.cancelled = 0

    # ----- plumbing ----------------------------------------------------------------------------------------------
    @asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """A place in the API's line (rag serve), or nothing to wait for (stdio)."""
        if self.admission is None:
            yield
            return
        from rag.frontends.http.wire import ApiError

        try:
            place = self.admission.admit()
        except ApiError as exc:
            raise ToolError(f"{exc.message} (retry after {(exc.headers or {}).get('Retry-After', '?')} s)") from None
        async with self.admission.turn(place):
            yield

    async def call(self, work: Callable[[], T]) -> T:
        """Run blocking library work in a thread, its BadInput a tool error."""
        try:
            async with self.turn():
                return await anyio.to_thread.run_sync(work)
        except EmptyInput as exc:
            raise ToolError(f"the {exc} is empty") from None
        except BadInput as exc:
            raise ToolError(str(exc)) from None

    def query(self, text: str, k: int | None, venue: str | None, year_from: int | None, year_to: int | None,
              author: str | None) -> Query:  # fmt: skip
        question = check_question(text, self.engine.settings.max_question_chars)
        if year_from and year_to and year_from > year_to:
            raise BadInput(f"year_from {year_from} is after year_to {year_to}")
        return Query(question, k, venue or None, year_from, "hybrid", year_to, (author or "").strip() or None)

    def paper(self, doc_id: str) -> Paper:
        """The indexed paper, its sentences addressed to an assistant withheld (the client's model reads it)."""
        found = self.library.records([doc_id])
        if not found:
            raise BadInput(f"no indexed paper has the id {doc_id!r} (search finds ids)")
        return replace(found[0], abstract=self.engine.pipeline.guard.without_instructions(found[0].abstract))

    # ----- tools -------------------------------------------------------------------------------------------------
    async def search(
        self,
        query: Annotated[str, Field(description="What to look for, in plain words.")],
        k: Annotated[int, Field(description="How many papers.", ge=1, le=50)] = 5,
        venue: Venue = None,
        year_from: YearFrom = None,
        year_to: YearTo = None,
        author: Author = None,
    ) -> SearchResults:
        """Find the indexed papers most relevant to a query (hybrid dense + keyword search; no LLM)."""

        def run() -> SearchResults:
            results = self.library.search(self.query(query, k, venue, year_from, year_to, author))
            records = {p.doc_id: p for p in self.library.records([r.doc_id for r in results])}
            shown = [replace(r, text=self.engine.pipeline.guard.without_instructions(r.text)) for r in results]
            return SearchResults(results=[hit(r, records.get(r.doc_id)) for r in shown])

        return await self.call(run)

    async def fetch(
        self, id: Annotated[str, Field(description="A paper's id, as search gives it.")]
    ) -> FetchedDocument:
        """A paper's full record by id (the `fetch` of chat apps' connectors)."""
        paper = await self.call(lambda: self.paper(id))
        metadata = {"venue": paper.venue, "year": paper.year, "authors": list(paper.authors), "doi": paper.doi}
        return FetchedDocument(id=paper.doc_id, title=paper.title or paper.doc_id, text=paper.abstract,
                               url=paper_url(paper.doc_id, paper.url), metadata=metadata)  # fmt: skip

    async def ask(
        self,
        question: Annotated[str, Field(description="The question, in plain words.")],
        ctx: Context,
        venue: Venue = None,
        year_from: YearFrom = None,
        year_to: YearTo = None,
        author: Author = None,
        conversation: Annotated[
            list[dict[str, str]] | None,
            Field(description='Earlier turns, [{"role": "user"|"assistant", "content": ...}], for a follow-up.'),
        ] = None,
        backend: Backend = None,
        answer_anyway: Annotated[
            bool,
            Field(
                description="Answer from the closest papers where no abstract clearly addresses the question "
                "(a refusal the user overrides); every sentence is still verified, and the note says so."
            ),
        ] = False,
    ) -> CitedAnswer:
        """A cited answer from the abstracts: every sentence verified against the abstract it cites; a refusal
        (refused: true) when no indexed abstract answers."""
        history = history_pairs((turn.get("role"), turn.get("content", "")) for turn in conversation or [])

        def stream() -> Iterator[Any]:
            q = replace(self.query(question, None, venue, year_from, year_to, author), anyway=answer_anyway)
            return self.engine.chat(backend, history).stream(q) if history else self.engine.stream(q, backend)

        return cited(await self.answered(stream, ctx))

    async def summarize(
        self,
        topic: Annotated[str, Field(description="The topic, in plain words.")],
        ctx: Context,
        k: Annotated[int | None, Field(description="How many abstracts to draw on.", ge=2, le=20)] = None,
        backend: Backend = None,
    ) -> CitedAnswer:
        """A cited summary of a topic across the indexed abstracts."""
        return cited(await self.answered(
            lambda: self.engine.stream(self.query(topic, k, None, None, None, None), backend, "summary"), ctx
        ))  # fmt: skip

    async def verify(
        self,
        claim: Annotated[str, Field(description="The sentence to check.")],
        doc_id: Annotated[str, Field(description="The id of the indexed paper it cites.")],
    ) -> Verdict:
        """Whether an indexed abstract supports a claim, contradicts it, or does not say (with its deciding words)."""

        def run() -> Verdict:
            text = check_question(claim, self.engine.settings.max_question_chars, "claim")
            self.paper(doc_id)
            judged = self.engine.verify(text, doc_id)
            return Verdict(doc_id=doc_id, claim=text, verdict=judged.label, score=round(judged.score, 4),
                           evidence=judged.quote, reason=judged.reason or None)  # fmt: skip

        return await self.call(run)

    async def get_abstract(self, doc_id: Annotated[str, Field(description="The paper's id.")]) -> PaperRecord:
        """A paper's full record: title, authors, venue, year, link, ids and the whole abstract."""
        return record(await self.call(lambda: self.paper(doc_id)))

    async def stats(self) -> dict[str, Any]:
        """What the library holds: abstracts, chunks, venues and years with their counts, the models."""
        found = await self.call(self.library.stats)
        return {key: value for key, value in found.items() if key != "store"}

    async def list_papers(
        self,
        venue: Venue = None,
        year: Annotated[int | None, Field(description="Only papers of this year.")] = None,
        author: Author = None,
        offset: Annotated[int, Field(ge=0, description="Papers to skip.")] = 0,
        limit: Annotated[int, Field(ge=1, le=200, description="Papers to list.")] = 50,
    ) -> PapersPage:
        """The indexed papers, filtered, a page at a time."""
        rows = await self.call(lambda: self.library.papers(venue, year, author))
        page = [PaperRow(doc_id=r["doc_id"], title=r["title"] or None, venue=r["venue"] or None, year=r["year"] or None,
                         authors=r["authors"]) for r in rows[offset : offset + limit]]  # fmt: skip
        return PapersPage(total=len(rows), offset=offset, papers=page)

    async def add_papers(
        self, paths: Annotated[list[str], Field(description="Corpus files or folders on the server.")]
    ) -> AddReport:
        """Add the papers of corpus files (every kind `rag ingest` reads) to the library."""
        report = await self.call(lambda: self.library.add(paths))
        return AddReport(added=report.added, updated=report.updated, unchanged=report.unchanged,
                         rejected=report.skipped, problems=[p.short() for p in report.problems])  # fmt: skip

    async def abstract(self, doc_id: str) -> str:
        """abstract://{doc_id}: a paper's record as text."""
        try:
            paper = await self.call(lambda: self.paper(unquote(doc_id)))
        except ToolError as exc:
            raise ResourceNotFoundError(str(exc)) from None
        head = [
            paper.title or paper.doc_id,
            ", ".join(paper.authors),
            " ".join(str(x) for x in (paper.venue, paper.year) if x),
        ]
        return "\n".join([*(line for line in head if line), paper_url(paper.doc_id, paper.url), "", paper.abstract])

    def literature_review(self, topic: str, papers: str = "8") -> list[UserMessage]:
        """A cited literature review of a topic, from the indexed abstracts only."""
        return [UserMessage(
            f"Write a short literature review of: {topic}\n\nUse only this library's tools. Call `search` for the "
            f"{papers} most relevant papers, then `summarize` for the topic and `ask` for any open question. Cite "
            "every claim with the [n] markers and sources the tools return, quote their evidence, and say plainly "
            "where the abstracts are silent. Do not add claims of your own."
        )]  # fmt: skip

    async def answered(self, stream: Callable[[], Iterator[Any]], ctx: Context) -> Answer:
        """Run an answer's stream in a thread, reporting its stages as progress; a cancelled call stops it at its
        next event (the pipeline's work ends there)."""
        await ctx.report_progress(0, len(STAGES) - 1, STAGES[0])
        cancelled = anyio.get_cancelled_exc_class()  # asked here: a worker thread has no event loop to ask

        def work() -> Answer:
            events = stream()
            stage = 0
            try:
                for item in events:
                    anyio.from_thread.check_cancelled()
                    if isinstance(item, Answer):
                        return item
                    now = 1 if isinstance(item, Token) else 2 if isinstance(item, Sentence) else stage
                    if now > stage:
                        stage = now
                        anyio.from_thread.run(ctx.report_progress, stage, len(STAGES) - 1, STAGES[stage])
                raise RuntimeError("the answer's stream ended without an answer")
            except cancelled:
                self.cancelled += 1
                log.info("a call was cancelled by the client; its work stopped")
                raise
            finally:
                events.close()

        answer = await self.call(work)
        await ctx.report_progress(len(STAGES) - 1, len(STAGES) - 1, STAGES[-1])
        return answer

    # ----- registration ------------------------------------------------------------------------------------------
    def register(self, server: MCPServer) -> None:
        read_only = {"readOnlyHint": True}
        for tool in (self.search, self.fetch, self.ask, self.summarize, self.verify, self.get_abstract, self.stats,
                     self.list_papers):  # fmt: skip
            server.tool(annotations=read_only)(tool)
        if self.engine.settings.mcp_allow_ingest:
            server.tool()(self.add_papers)
        about = "An indexed paper's record and abstract (the doc_id percent-encoded)."
        server.resource("abstract://{doc_id}", name="abstract", mime_type="text/plain", description=about)(
            self.abstract
        )
        server.prompt(name="literature_review", title="Cited literature review")(self.literature_review)


def hit(result: Any, paper: Paper | None) -> PaperHit:
    url = paper_url(result.doc_id, paper.url if paper else None)
    return PaperHit(id=result.doc_id, doc_id=result.doc_id, title=result.title or result.doc_id, url=url,
                    venue=result.venue, year=result.year, authors=list(paper.authors if paper else ()),
                    score=round(float(result.score), 6), snippet=result.text)  # fmt: skip


def cited(answer: Answer) -> CitedAnswer:
    cited_by_verified = {n for s in answer.sentences if s.verified for n in s.citations}
    return CitedAnswer(
        answer=answer.answer,
        refused=answer.refused,
        citations=[
            CitedSource(
                n=c.n,
                doc_id=c.doc_id,
                title=c.title,
                venue=c.venue,
                year=c.year,
                quote=c.quote,
                url=paper_url(c.doc_id, c.url),
                verified=c.n in cited_by_verified,
            )
            for c in answer.citations
        ],
        sentences=[
            AnswerSentence(text=s.text, verified=s.verified, citations=list(s.citations)) for s in answer.sentences
        ],
        note=answer.note,
        backend=answer.backend,
    )


def record(paper: Paper) -> PaperRecord:
    return PaperRecord(doc_id=paper.doc_id, title=paper.title, authors=list(paper.authors), venue=paper.venue,
                       year=paper.year, url=paper.url, doi=paper.doi, identifiers=list(paper.identifiers),
                       keywords=list(paper.keywords), abstract=paper.abstract)  # fmt: skip


def serve_stdio(engine: Engine) -> None:
    """`rag mcp`: serve over stdio until the client closes it (nothing but the protocol on stdout)."""
    create_server(engine).run("stdio")
