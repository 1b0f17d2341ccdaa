"""The `rag` command line. It only parses arguments, calls the library and prints; heavy imports happen inside
the commands so that `rag --help` answers at once.

Exit codes (docs/contracts.md): 0 success, 2 bad input or usage (one line on stderr), 1 runtime failure.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, cast, get_args

import typer
from pydantic import ValidationError
from typer._click import exceptions as click_errors  # typer vendors click; its usage errors live here

from rag.errors import BadInput
from rag.settings import BACKENDS, MODES, Mode, Settings
from rag.text import terminal_safe, where

if TYPE_CHECKING:
    from rich.progress import Progress

    from rag.answer import Task
    from rag.records import Query

app = typer.Typer(
    help="Ask questions about scientific paper abstracts and get answers cited to the abstracts.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

DataDir = Annotated[
    Path | None,
    typer.Option("--data-dir", help="Where the index lives (default: $RAG_DATA_DIR or ./data).", show_default=False),
]
TopK = Annotated[int | None, typer.Option("-k", "--top-k", min=1, max=100, help="How many abstracts to return.")]
Venue = Annotated[str | None, typer.Option("--venue", help="Only abstracts from this venue (e.g. ICML).")]
Year = Annotated[
    str | None, typer.Option("--year", help="Only abstracts from this year, or a range: 2019-2023 (2019-, -2023).")
]
Author = Annotated[str | None, typer.Option("--author", help="Only papers with an author of this name (or part).")]
AsJson = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
RefsFile = Annotated[
    Path | None,
    typer.Option(
        "--refs",
        help="Also write the cited papers as references to this file: .bib (BibTeX), .ris (RIS) or .json (CSL-JSON).",
        show_default=False,
    ),
]
REFERENCE_KINDS = {".bib": "bibtex", ".ris": "ris", ".json": "csl-json"}


def load_settings(data_dir: Path | None) -> Settings:
    """The settings (with --data-dir); traces set up when RAG_TRACING asks for them."""
    from rag.tracing import configure

    settings = Settings()
    settings = settings.model_copy(update={"data_dir": data_dir}) if data_dir else settings
    configure(settings)
    return settings


def err(message: str) -> None:
    print(f"rag: {terminal_safe(message)}", file=sys.stderr)


REBUILD_HELP = (
    "Drop the whole index first and build it anew from these files (after a change of embedding model or precision, "
    "or damage `rag doctor` cannot repair)."
)
REPAIR_HELP = "Mend what can be mended: embed chunks without vectors again, rebuild the keyword index."


def _records_bar() -> Progress:
    """A progress bar for ingests: records done of the total, records per second, time left."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TimeRemainingColumn
    from rich.text import Text

    class Rate(ProgressColumn):
        def render(self, task) -> Text:  # type: ignore[no-untyped-def]
            return Text(f"{task.speed:,.0f} records/s" if task.speed else "", style="progress.data.speed")

    return Progress(
        "[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(), Rate(), TimeRemainingColumn(),
        console=_stderr_console(), transient=True,
    )  # fmt: skip


@app.command()
def ingest(
    paths: Annotated[
        list[Path], typer.Argument(help="Corpus files or folders: .txt (seed format), .jsonl, .csv, .bib.")
    ],
    data_dir: DataDir = None,
    verbose: Annotated[bool, typer.Option("-v", "--verbose", help="Print a line per stored batch.")] = False,
    sync: Annotated[
        bool, typer.Option("--sync", help="Also remove indexed papers that none of the files holds.")
    ] = False,
    rebuild: Annotated[bool, typer.Option("--rebuild", help=REBUILD_HELP)] = False,
) -> None:
    """Add abstracts to the index. Safe to re-run: unchanged abstracts are skipped, changed ones replaced."""
    settings = load_settings(data_dir)
    os.nice(settings.ingest_nice)  # a batch job: questions answered meanwhile on this machine come first
    _ingest(settings, paths, verbose, sync, rebuild)


def _ingest(settings: Settings, paths: list[Path], verbose: bool = False, sync: bool = False,
            rebuild: bool = False) -> None:  # fmt: skip
    """Ingest with a progress bar, then the one-line report (BadInput when records were skipped)."""
    from rag.index import Library

    with _records_bar() as bar:
        task = bar.add_task("Reading files", total=None)

        def progress(done: int, total: int | None) -> None:
            if total is not None and bar.tasks[task].total is None:  # counted: the papers are being stored
                bar.reset(task, total=total, description="Storing abstracts")
            bar.update(task, completed=done)
            if verbose and total is not None:
                bar.console.print(f"stored {done}/{total} abstracts")

        report = Library(settings).add(paths, progress, sync, rebuild)
    for problem in report.problems:
        err(f"skipped {problem}")
    removed = f", removed {report.removed}" if sync else ""
    removed += f", deleted {report.deleted} (PubMed DeleteCitation)" if report.deleted else ""
    removed += f", merged {report.merged} duplicate record(s)" if report.merged else ""
    removed += f", {report.no_abstract} without an abstract" if report.no_abstract else ""
    removed += (
        f", flagged {report.flagged} (sentences addressed to an assistant withheld; rag doctor lists them)"
        if report.flagged
        else ""
    )
    print(
        f"added {report.added}, updated {report.updated}, unchanged {report.unchanged}{removed}, "
        f"skipped {report.skipped} ({report.chunks_written} chunks written)"
    )
    if report.problems:
        raise BadInput(f"{report.skipped} record(s) skipped; the others were ingested")


@app.command()
def remove(
    doc_ids: Annotated[list[str], typer.Argument(help="Ids of the indexed papers to remove (see `rag search`).")],
    data_dir: DataDir = None,
) -> None:
    """Remove papers from the index (their chunks, vectors and keyword entries)."""
    from rag.index import Library

    report = Library(load_settings(data_dir)).remove(doc_ids)
    print(f"removed {len(report.removed)}")
    if report.not_indexed:
        raise BadInput(f"not indexed, so not removed: {', '.join(report.not_indexed)}")


@app.command()
def search(
    question: Annotated[str, typer.Argument(help="What to look for, in plain words.")],
    top_k: TopK = None,
    venue: Venue = None,
    year: Year = None,
    author: Author = None,
    as_json: AsJson = False,
    mode: Annotated[str, typer.Option("--mode", help=f"Retriever: {', '.join(MODES)} (default hybrid).")] = "hybrid",
    data_dir: DataDir = None,
) -> None:
    """Find the abstracts most relevant to a question (no LLM involved)."""
    from rag.index import Library
    from rag.records import Query

    first, last = parse_years(year)
    query = Query(question, top_k, venue, first, check_mode(mode), last, author)
    results = Library(load_settings(data_dir)).search(query)
    if as_json:
        print(json.dumps({"query": question, "results": [r.contract() for r in results]}, ensure_ascii=False))
        return
    if not results:
        print("No matching abstracts.")
    for r in results:
        print(terminal_safe(f"{r.rank:>2}. {r.doc_id}  {where(r.venue, r.year)}  score {r.score:.4f}"))
        print(terminal_safe(f"    {r.title + ': ' if r.title else ''}{_shorten(r.text, 300)}"))


Backend = Annotated[
    str | None,
    typer.Option(
        "--llm",
        help=f"LLM backend: {', '.join(BACKENDS)} (default: RAG_LLM_BACKEND, auto).",
        show_default=False,
    ),
]


def check_backend(backend: str | None) -> str | None:
    if backend is not None and backend not in ("auto", *BACKENDS):
        raise BadInput(f"unknown --llm {backend!r}; use one of auto, {', '.join(BACKENDS)}")
    return None if backend == "auto" else backend


def check_mode(mode: str) -> Mode:
    if mode not in MODES:
        raise BadInput(f"unknown --mode {mode!r}; use {', '.join(MODES)}")
    return cast(Mode, mode)


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="Your question, in plain words.")],
    as_json: AsJson = False,
    backend: Backend = None,
    top_k: TopK = None,
    venue: Venue = None,
    year: Year = None,
    author: Author = None,
    refs: RefsFile = None,
    anyway: Annotated[
        bool,
        typer.Option(
            "--answer-anyway",
            help="Answer from the closest papers even where the refusal gate would refuse (when it turned away a "
            "question they do answer); every sentence is still verified.",
        ),
    ] = False,
    data_dir: DataDir = None,
) -> None:
    """Answer a question from the abstracts; every sentence is cited and verified."""
    from rag.records import Query

    first, last = parse_years(year)
    query = Query(question, top_k, venue, first, year_to=last, author=author, anyway=anyway)
    answer_command(query, "answer", backend, as_json, data_dir, refs)


def parse_years(text: str | None) -> tuple[int | None, int | None]:
    """--year: "2021" -> (2021, None); "2019-2023" -> (2019, 2023); "2019-" and "-2023" leave a side open."""
    if text is None:
        return None, None
    found = re.fullmatch(r"\s*(\d{4})?\s*(-)?\s*(\d{4})?\s*", text)
    if not found or not (found[1] or found[3]) or (found[3] and not found[2]):
        raise BadInput(f"--year {text!r}: give a year (2021) or a range (2019-2023, 2019-, -2023)")
    first = int(found[1]) if found[1] else None
    if not found[2]:
        return first, None
    return first or 1, int(found[3]) if found[3] else 9999


@app.command()
def summarize(
    topic: Annotated[str, typer.Argument(help="The topic to summarize across abstracts.")],
    as_json: AsJson = False,
    backend: Backend = None,
    top_k: Annotated[
        int | None, typer.Option("-k", "--top-k", min=1, max=30, help="Abstracts to draw on (default 8).")
    ] = None,
    refs: RefsFile = None,
    data_dir: DataDir = None,
) -> None:
    """Write a short cited summary of a topic: themes, then each paper's contribution."""
    from rag.records import Query

    answer_command(Query(topic, top_k), "summary", backend, as_json, data_dir, refs)


def answer_command(
    query: Query, task: Task, backend: str | None, as_json: bool, data_dir: Path | None, refs: Path | None = None
) -> None:
    """`rag ask` and `rag summarize`: the answer streamed to the terminal, or its JSON; with `refs`, the cited
    papers written to that file as references."""
    from rag.engine import Engine
    from rag.frontends.terminal import answer_to_terminal

    backend = check_backend(backend)
    kind = reference_kind(refs) if refs is not None else None  # a wrong extension is told before any work
    engine = Engine(load_settings(data_dir))
    if as_json:
        answer = engine.ask(query, backend) if task == "answer" else engine.summarize(query, backend)
        print(json.dumps(answer.contract(), ensure_ascii=False))
    else:
        answer = answer_to_terminal(engine.stream(query, backend, task))
    if refs is not None and kind is not None:
        cited = [c.doc_id for c in answer.citations]
        refs.write_text(engine.library.references(cited, kind), encoding="utf-8")
        err(f"wrote {len(cited)} reference(s) to {refs}")


def reference_kind(path: Path) -> str:
    """The reference format a file's extension names (BadInput for another)."""
    kind = REFERENCE_KINDS.get(path.suffix.lower())
    if kind is None:
        raise BadInput(f"{path}: references are written as .bib (BibTeX), .ris (RIS) or .json (CSL-JSON)")
    return kind


@app.command()
def refs(
    doc_ids: Annotated[list[str], typer.Argument(help="The papers' ids (doc_id, as `rag search` shows them).")],
    kind: Annotated[str, typer.Option("--format", help="bibtex, ris or csl-json.", case_sensitive=False)] = "bibtex",
    data_dir: DataDir = None,
) -> None:
    """Print indexed papers as references to import into a reference manager (BibTeX, RIS or CSL-JSON)."""
    from rag.index.library import Library

    library = Library(load_settings(data_dir))
    missing = library.missing(doc_ids)
    if missing:
        raise BadInput(f"not indexed: {', '.join(missing)}")
    sys.stdout.write(library.references(doc_ids, kind.lower()))


@app.command()
def chat(backend: Backend = None, data_dir: DataDir = None) -> None:
    """Talk with the abstracts: follow-up questions are understood in context. /reset, /sources, /quit."""
    from rag.engine import Engine
    from rag.frontends.terminal import chat_loop

    chat_loop(Engine(load_settings(data_dir)), check_backend(backend))


@app.command()
def ui(
    host: Annotated[
        str, typer.Option("--host", help="Address to bind; 0.0.0.0 exposes the app to your network.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port to listen on.")] = 7860,
    share: Annotated[
        bool, typer.Option("--share", help="Ask Gradio for a public share link (off by default).")
    ] = False,
    data_dir: DataDir = None,
    seed: Annotated[
        list[Path] | None,
        typer.Option("--seed", help="Files or folders to ingest first if the index is empty (make run: seeds/)."),
    ] = None,
) -> None:
    """Start the web app: chat with citations, summaries and the library (http://HOST:PORT)."""
    from rag.index import Library
    from ui.app import launch

    settings = load_settings(data_dir)
    if Library(settings).stats()["abstracts"] == 0:
        if not seed:
            raise BadInput("the index is empty: run `rag ingest seeds/` first, or start with --seed seeds/")
        err(f"the index is empty: ingesting {', '.join(map(str, seed))} ...")
        _ingest(settings, seed)
    print(f"Starting the app on http://{host}:{port} (Ctrl+C to stop)", file=sys.stderr)
    launch(settings, host, port, share)


@app.command()
def serve(
    host: Annotated[
        str, typer.Option("--host", help="Address to bind; anything but loopback requires RAG_API_KEYS.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port to listen on.")] = 8000,
    data_dir: DataDir = None,
) -> None:
    """Serve the bot as an OpenAI-compatible API (http://HOST:PORT/v1) with citations, plus search and ingest."""
    from rag.frontends.http.app import serve as run_service

    run_service(load_settings(data_dir), host, port)


@app.command("milvus-server")
def milvus_server(
    path: Annotated[
        Path, typer.Argument(help="The embedded index file to serve (created if missing), e.g. milvus.db.")
    ],
    host: Annotated[str, typer.Option("--host", help="Address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port to listen on.")] = 19530,
) -> None:
    """Serve an embedded Milvus index to several processes (milvus-lite, for development; MILVUS_URI=http://HOST:PORT).
    Runs until stopped."""
    from rag.index.milvus import serve as serve_milvus

    print(f"serving {path} at http://{host}:{port}, its log in {path}.log (Ctrl-C stops)", flush=True)
    serve_milvus(path, host, port)


@app.command()
def mcp(data_dir: DataDir = None) -> None:
    """Serve the library to MCP clients (assistants, editors) over stdio: search, ask, verify, abstracts."""
    from rag.engine import Engine
    from rag.frontends.mcp_server import serve_stdio

    serve_stdio(Engine(load_settings(data_dir)))


@app.command()
def verify(
    claim: Annotated[str | None, typer.Argument(help="The sentence to check, in quotes.")] = None,
    doc: Annotated[str | None, typer.Option("--doc", help="The id of the indexed abstract it cites.")] = None,
    claims: Annotated[
        Path | None, typer.Option("--claims", help='A JSONL file of {"id", "claim", "doc_id"} lines to check.')
    ] = None,
    as_json: AsJson = False,
    data_dir: DataDir = None,
) -> None:
    """Check whether an indexed abstract supports a claim: supported, contradicted or not_enough_info."""
    if (claim is None) == (claims is None):
        raise BadInput("give a claim and --doc DOC_ID, or --claims FILE.jsonl (not both)")
    if claim is not None and not doc:
        raise BadInput("name the abstract the claim cites: --doc DOC_ID")
    from rag.engine import Engine

    engine = Engine(load_settings(data_dir))
    if claims is not None:
        errors = 0
        for record in engine.verify_file(claims):
            errors += "error" in record
            print(json.dumps(record, ensure_ascii=False), flush=True)
        if errors:
            raise BadInput(f"{errors} claim(s) could not be checked (see their error records); the others were")
        return
    assert claim is not None and doc is not None
    verdict = engine.verify(claim, doc)
    if as_json:
        from rag.answer import verdict_record

        print(json.dumps(verdict_record(doc, verdict, claim=claim), ensure_ascii=False))
        return
    print(terminal_safe(f"{verdict.label} (score {verdict.score:.2f}) by {doc}"))
    print(terminal_safe(f'    "{verdict.quote}"'))


@app.command(name="train-verifier")
def train_verifier(
    out: Annotated[
        Path | None, typer.Option("--out", help="Where to write the model (default: the shipped rag/models/verifier).")
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", min=8, help="Train on only N pairs: a quick check, not a usable model.")
    ] = None,
) -> None:
    """Rebuild the verifier's entailment model from the bundled MiniLM (fixed seed, CPU, about 25 minutes)."""
    from rag.training.verifier import MODEL_DIR, TrainConfig, build

    record = build(out or MODEL_DIR, TrainConfig(limit=limit), log=lambda line: print(line, file=sys.stderr))
    print(json.dumps(record, ensure_ascii=False))


@app.command(name="train-acceptor")
def train_acceptor(
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Where to write acceptor.json (default: the shipped rag/models/verifier)."),
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option("--limit", min=8, help="Read only N claims of each tuning file: a quick check, not a usable one."),
    ] = None,
) -> None:
    """Rebuild the bundled judge's acceptor from the tuning claims (fixed seed, CPU, about a minute); prints its
    record, with the cross-validated operating point."""
    from rag.answer.acceptance import ACCEPTOR_DIR
    from rag.training.acceptor import AcceptorConfig, build

    record = build(out or ACCEPTOR_DIR, AcceptorConfig(limit=limit), log=lambda line: print(line, file=sys.stderr))
    print(json.dumps(record, ensure_ascii=False))


@app.command(name="train-instruction-filter")
def train_instruction_filter(
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Where to write the filter (default: the shipped rag/models/instructions)."),
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", min=8, help="Train on only N examples: a quick check, not a usable filter.")
    ] = None,
) -> None:
    """Rebuild the learned instruction filter from the shared corpora and the phrase tables (fixed seed, CPU, about
    3 minutes); prints the record written beside it, with the held-out evaluation."""
    from rag.training.instructions import MODEL_DIR, FilterConfig, build

    record = build(out or MODEL_DIR, FilterConfig(limit=limit), log=lambda line: print(line, file=sys.stderr))
    print(json.dumps(record, ensure_ascii=False))


@app.command(name="train-reranker")
def train_reranker(
    out: Annotated[Path, typer.Option("--out", help="The folder to write the model to (a Hugging Face model folder).")],
    limit: Annotated[
        int | None, typer.Option("--limit", min=8, help="Train on only N pairs: a quick check, not a usable model.")
    ] = None,
) -> None:
    """Build a reranker for RAG_RERANK_MODEL from the bundled MiniLM (fixed seed, CPU, about 15 minutes)."""
    from rag.training.reranker import RerankConfig, build

    record = build(out, RerankConfig(limit=limit), log=lambda line: print(line, file=sys.stderr))
    print(json.dumps(record, ensure_ascii=False))


@app.command(name="eval")
def eval_command(
    datasets: Annotated[
        list[Path] | None, typer.Argument(help="Evaluation datasets (JSONL, the format of docs/contracts.md).")
    ] = None,
    config: Annotated[Path | None, typer.Option("--config", help="TOML file of named runs (eval/configs/).")] = None,
    out: Annotated[Path, typer.Option("--out", help="Where report.json, report.md and plots go.")] = Path(
        "eval/reports/latest"
    ),
    retrieval_only: Annotated[
        bool, typer.Option("--retrieval-only", help="Score retrieval only (no answers).")
    ] = False,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Only the first N questions of each dataset.")
    ] = None,
    compare: Annotated[
        tuple[Path, Path] | None, typer.Option("--compare", help="Compare two report folders: A (before) B (after).")
    ] = None,
    data_dir: DataDir = None,
) -> None:
    """Score retrieval, citations and answers on evaluation datasets; resumable; or compare two reports."""
    if compare:
        from rag.evaluation import compare_folders

        lines, regressions = compare_folders(*compare)
        if len(lines) <= 2:
            raise BadInput("the two reports have no run on the same dataset in common: nothing to compare")
        print("\n".join(lines))
        print(f"\n{regressions} regression(s) flagged" if regressions else "\nno regressions")
        return
    if not datasets:
        raise BadInput("name at least one dataset, e.g. eval/datasets/seeds_qa.jsonl (or use --compare A B)")
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    from rag.engine import Engine
    from rag.evaluation import check_gold_indexed, evaluate, load_config, load_datasets, markdown

    runs = load_config(config)
    loaded = load_datasets(datasets, limit)  # every bad input is reported before the progress bar starts
    engine = Engine(load_settings(data_dir))
    check_gold_indexed(engine.library, loaded)
    with Progress(
        "[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
        console=_stderr_console(), transient=True,
    ) as bar:  # fmt: skip

        def track(label: str, total: int) -> Callable[[int], None]:
            task = bar.add_task(label, total=total)
            return lambda n: bar.advance(task, n)

        summaries = evaluate(engine, loaded, runs, out, retrieval_only, track)
    print(markdown(summaries).split("\n## ")[0])
    print(f"Reports in {out}/ (report.json, report.md, metrics_by_run.png, latency.png)")


@app.command()
def doctor(
    repair: Annotated[bool, typer.Option("--repair", help=REPAIR_HELP)] = False,
    data_dir: DataDir = None,
    as_json: AsJson = False,
) -> None:
    """Check the index: every chunk has its vector, every paper all its chunks, the keyword index agrees with the
    collection, the embedding precision is the configured one. Exit code 1 while a problem remains."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress

    from rag.index import Library

    with Progress(
        "[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(), console=_stderr_console(),
        transient=True,
    ) as bar:  # fmt: skip
        task = bar.add_task("Reading vectors", total=None)
        checkup = Library(load_settings(data_dir)).checkup(
            repair, lambda done, total: bar.update(task, completed=done, total=total)
        )
    if as_json:
        print(json.dumps(checkup.contract(), ensure_ascii=False))
    else:
        for f in checkup.findings:
            print(f"{'ok     ' if f.ok else 'PROBLEM'}  {f.check:<14} {f.detail}" + (f" -> {f.fix}" if f.fix else ""))
        for done in checkup.repaired:
            print(f"repaired: {done}")
        for paper in checkup.flagged:
            for sentence in paper["sentences"]:
                print(terminal_safe(f"flagged  {paper['doc_id']}: {sentence}"))
    if not checkup.healthy:
        raise typer.Exit(1)


@app.command()
def migrate(
    to_store: Annotated[str, typer.Option("--to-store", help="The destination store: chroma or milvus.")],
    to_uri: Annotated[
        str | None,
        typer.Option(
            "--to-uri",
            help="With --to-store milvus: MILVUS_URI of the destination (a server "
            "URL or a folder; default: the destination data directory's milvus.db).",
        ),
    ] = None,
    to_data_dir: Annotated[
        Path | None, typer.Option("--to-data-dir", help="The destination's data directory (default: the source's).")
    ] = None,
    to_collection: Annotated[
        str | None, typer.Option("--to-collection", help="The destination collection (default: RAG_COLLECTION).")
    ] = None,
    data_dir: DataDir = None,
) -> None:
    """Copy the index into another store (Chroma to Milvus or back), keeping every chunk's id, text, metadata and
    vector: nothing is embedded again. Run it again to complete an interrupted copy."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    from rag.index import Library
    from rag.settings import StoreKind

    if to_store not in get_args(StoreKind):
        raise BadInput(f"unknown --to-store {to_store!r}; use one of {', '.join(get_args(StoreKind))}")
    source = load_settings(data_dir)
    update: dict[str, object] = {"store": to_store, "milvus_uri": to_uri}
    if to_data_dir:
        update["data_dir"] = to_data_dir
    if to_collection:
        update["collection"] = to_collection
    destination = Settings(**{**source.model_dump(), **update})  # validated; given values win over the environment
    with Progress(
        "[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
        console=_stderr_console(), transient=True,
    ) as bar:  # fmt: skip
        task = bar.add_task("Copying chunks", total=None)
        report = Library(source).migrate_to(destination, lambda done, total: bar.update(task, completed=done,
                                                                                         total=total))  # fmt: skip
    print(f"copied {report.chunks} chunks from {report.source} to {report.destination}")


@app.command()
def stats(data_dir: DataDir = None, as_json: AsJson = False) -> None:
    """Show what is indexed: abstracts, chunks, venues and years."""
    from rag.index import Library

    info = Library(load_settings(data_dir)).stats()
    if as_json:
        print(json.dumps(info, ensure_ascii=False))
        return
    print(f"store:       {info['store']}")
    print(f"collection:  {info['collection']}")
    print(f"abstracts:   {info['abstracts']}")
    print(f"chunks:      {info['chunks']}")
    print(f"venues:      {_counts(info['venues'])}")
    print(f"years:       {_counts(info['years'])}")
    print(f"embeddings:  {info['embedding_model']}")


def _counts(counts: dict[str, Any]) -> str:
    return ", ".join(f"{name} ({n})" for name, n in counts.items()) or "none"


def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1].rsplit(" ", 1)[0] + " …"


def _stderr_console():
    from rich.console import Console

    return Console(stderr=True)


# Commands that only read: once one has printed its result, the process ends without the interpreter's teardown,
# which frees every module's objects one by one (a tenth of a second of a cold `rag search`) and has nothing left
# to write for them.
READ_ONLY = frozenset({"search", "ask", "stats"})


def run() -> NoReturn:
    """The `rag` script and `python -m rag`: main(), then the exit (a quick one after a command that only reads)."""
    code = main()
    if sys.argv[1:2] and sys.argv[1] in READ_ONLY:
        import logging

        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except OSError:  # the reader went away (`rag search ... | head`): nothing more to say
            pass
        logging.shutdown()
        os._exit(code)
    sys.exit(code)


def main(argv: list[str] | None = None) -> int:
    """Entry point: turns exceptions into the exit codes of the contract."""
    command = typer.main.get_command(app)
    try:
        result = command.main(args=argv, prog_name="rag", standalone_mode=False)
        return result if isinstance(result, int) else 0
    except typer.Exit as exc:
        return exc.exit_code
    except click_errors.NoArgsIsHelpError as exc:
        print(exc.format_message(), file=sys.stderr)
        return 2
    except click_errors.ClickException as exc:  # usage errors
        err(exc.format_message().replace("\n", " "))
        return 2
    except ValidationError as exc:  # a setting in the environment or .env is invalid
        first = exc.errors()[0]
        err(f"invalid setting {'.'.join(map(str, first['loc']))}: {first['msg']}")
        return 2
    except (typer.Abort, KeyboardInterrupt):
        err("interrupted")
        return 130
    except BadInput as exc:
        err(str(exc))
        return 2
    except Exception as exc:
        if os.environ.get("RAG_DEBUG"):
            raise
        err(f"error: {exc} (set RAG_DEBUG=1 for a traceback)")
        return 1


if __name__ == "__main__":
    sys.exit(main())
