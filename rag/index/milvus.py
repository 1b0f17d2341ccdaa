"""Milvus behind the store seam (RAG_STORE=milvus): chunks, vectors and BM25 in one collection, searched there.

MILVUS_URI is a `.db` file for the embedded edition (milvus-lite 2.5, Milvus's own C++ core; one process at a time)
or a server's URL (Milvus standalone or distributed, or `rag milvus-server`), where several ingest workers and
`rag serve` replicas share one index. Each chunk row holds its text, its dense vector, `terms` (its words as the
project's keyword index tokenizes them: lower-cased, stemmed, no stop words) from which Milvus's BM25 function
derives a sparse vector, the fields the filters use (venue, year, authors) and its whole metadata as JSON. Questions
are tokenized the same way, so BM25 sees the words bm25s sees in the Chroma setup. A hybrid search is a dense and a
BM25 search in Milvus, each one's RAG_CANDIDATES best chunks collapsed to their papers and the two rankings fused
here, as the Chroma setup does (rag/index/fusion.py): Milvus's own `hybrid_search` fuses by chunk before grouping,
so a paper whose best chunks differ between the two searches would lose one of its ranks, and its RRF has no
weights; Milvus's grouped searches were also slower than these (BM25 18.6 ms against 5.0 ms at 318,583 chunks).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag.errors import BadInput, StoreUnavailable
from rag.index.fusion import Hit, collapse, fuse
from rag.index.store import PAGE, StoredDoc, assembled, count_stored, make_folder, paper_row, papers_of
from rag.index.word_counts import WordCounts, counts_path, drop_counts
from rag.records import Paper, doc_of_chunk
from rag.settings import Settings
from rag.terms import tokenize

if TYPE_CHECKING:
    from llama_index.core.schema import TextNode
    from pymilvus import MilvusClient

    from rag.index.keywords import Filters

PRECISION_KEY = "embedding_precision"
TEXT_LIMIT = 65_535  # Milvus's longest VARCHAR
ITERATE = 1000  # rows per page when reading every chunk
BM25_K1 = 1.5  # bm25s's default; Milvus's scores carry a factor k1 + 1 that bm25s's (Lucene's) do not
UNREACHABLE = 2  # pymilvus's error code for a server it cannot connect to
CONNECT_TIMEOUT = 10  # seconds to reach a server before saying it cannot be reached
# Seconds a call may take. Whole seconds: pymilvus 2.5 ignores a float, and without a timeout it retries a server
# that has gone away for three and a half minutes.
CALL_TIMEOUT = 60
LOAD_TIMEOUT = 600  # loading a collection: milvus-lite 2.5 reads every row (41-83 s at 318,583 chunks)
EMBEDDED_NAME = re.compile(r"^[A-Za-z0-9._-]{1,33}\.db$")  # milvus-lite's rule for its file's name (36 at most)
LOCAL_MODE = "local mode only support"  # milvus-lite's refusal of an index type (HNSW) or of TEXT_MATCH
NO_PACKAGE = "RAG_STORE=milvus needs the milvus extra: pip install 'abstracts-rag[milvus]' (make setup installs it)"


def location(settings: Settings) -> str:
    target = settings.milvus_target
    return f"milvus server {target}" if is_server(target) else f"embedded milvus in {target}"


def is_server(target: str) -> bool:
    return target.startswith(("http://", "https://", "tcp://", "unix:"))


def connect(settings: Settings, create: bool) -> MilvusClient | None:
    """A client of the Milvus the settings name; None for an embedded file that does not exist and create=False.
    An unreachable server, or an embedded file another process holds, is BadInput naming it."""
    target = settings.milvus_target
    embedded = not is_server(target)
    if embedded:
        check_embedded(Path(target))
    try:
        with imported_quietly(embedded):
            from pymilvus import MilvusClient
    except ImportError:
        raise BadInput(NO_PACKAGE) from None
    for name in ("pymilvus", "pymilvus.milvus_client"):  # each failed call is logged: the errors here say it
        logging.getLogger(name).setLevel(logging.CRITICAL)
    if embedded:
        if not create and not Path(target).exists():
            return None
        make_folder(Path(target).parent)
        serving(Path(target))
    try:
        return MilvusClient(uri=target, token=settings.milvus_token or "", timeout=CONNECT_TIMEOUT)
    except Exception as exc:
        raise BadInput(f"cannot reach Milvus at {target} (MILVUS_URI): {first_line(exc)}") from None


@contextmanager
def imported_quietly(embedded: bool) -> Iterator[None]:
    """For importing pymilvus (and milvus-lite for an embedded index). pymilvus 2.5 reads MILVUS_URI when imported,
    from the environment or a .env file it looks for itself, and refuses anything but a URL (this project's setting
    may be a file): the variable is empty meanwhile, which it takes as unset and a .env does not override.
    milvus-lite 2.5 imports pkg_resources (hence setuptools<81), which warns that it is deprecated."""
    import os
    import sys
    import warnings

    if "pymilvus" not in sys.modules:
        previous = os.environ.get("MILVUS_URI")
        os.environ["MILVUS_URI"] = ""
        try:
            import pymilvus  # noqa: F401
        finally:
            if previous is None:
                del os.environ["MILVUS_URI"]
            else:
                os.environ["MILVUS_URI"] = previous
    if embedded:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="pkg_resources is deprecated")
            import milvus_lite  # noqa: F401
    yield


def server_log(path: Path) -> Path:
    """Where milvus-lite's server over an index file writes (its full-text engine logs every commit)."""
    return path.with_name(path.name + ".log")


def serving(path: Path) -> None:
    """milvus-lite's server over an index file for this process, started unless it runs already and registered
    where pymilvus looks for it. Started here, not by pymilvus, so that it writes to server_log, not to this
    process's stdout (an MCP channel, say) and stderr. Another process's lock on the file is BadInput."""
    from milvus_lite.server_manager import server_manager_instance as manager

    key = str(path.absolute().resolve())
    with manager._lock:  # pymilvus starts servers under it too: no check here races a start in this process
        if key not in manager._servers:
            manager._servers[key] = launched(path, None)


def launched(path: Path, address: str | None, die_with_parent: bool = False):  # type: ignore[no-untyped-def]
    """A started milvus-lite server over an index file: at `address` (host:port) or, for this process alone, a
    Unix socket. The caller holds milvus-lite's manager lock."""
    if held_elsewhere(path):
        raise BadInput(f"the embedded Milvus in {path} is open in another process (milvus-lite serves one "
                       "process at a time; to share an index, run `rag milvus-server` and set MILVUS_URI to "
                       "its URL)")  # fmt: skip
    server = logged_server_class()(str(path.absolute().resolve()), address, server_log(path), die_with_parent)
    if not (server.init() and server.start()):
        server.stop()
        raise RuntimeError(f"milvus-lite could not open {path}; see {server_log(path)}")
    return server


@cache
def logged_server_class() -> type:
    """milvus-lite's Server, its binary's output to a log file (and, if asked, ended when this process ends)."""
    import fcntl
    import os
    import subprocess

    from milvus_lite.server import Server

    class LoggedServer(Server):
        def __init__(self, db_file: str, address: str | None, log: Path, die_with_parent: bool) -> None:
            super().__init__(db_file, address)
            self.log, self.die_with_parent = log, die_with_parent

        def start(self) -> bool:
            """Server.start, writing to the log."""
            self._lock_fd = open(self._lock_path, "a")  # noqa: SIM115  (held while serving; Server.stop closes it)
            try:
                fcntl.lockf(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return False
            libraries = f"{self._bin_path}:{os.environ.get('LD_LIBRARY_PATH', '')}"
            env = {**os.environ, "LD_LIBRARY_PATH": libraries, "DYLD_LIBRARY_PATH": libraries}
            with self.log.open("ab") as out:
                self._p = subprocess.Popen(self.args, env=env, cwd=str(self._work_dir), stdout=out, stderr=out,
                                           preexec_fn=end_with_parent if self.die_with_parent else None)  # fmt: skip
            try:
                self._p.wait(0.5)  # as Server.start: a binary that has not failed by now has started
                return False
            except subprocess.TimeoutExpired:
                return True

    return LoggedServer


def end_with_parent() -> None:
    """In a child, before it runs its program: be sent SIGTERM when the parent ends (Linux; elsewhere nothing). A
    server started with a TCP address does not watch its parent's lock on the file."""
    import ctypes
    import signal
    from contextlib import suppress

    with suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def check_embedded(path: Path) -> None:
    """An embedded index is one file named as milvus-lite requires; a folder is an index of milvus-lite 3."""
    if path.is_dir():
        raise BadInput(f"{path} is an embedded Milvus index of milvus-lite 3 (a folder), which this version cannot "
                       "read: move it aside and ingest again, or set MILVUS_URI to a new .db file")  # fmt: skip
    if not EMBEDDED_NAME.match(path.name):
        raise BadInput(f"MILVUS_URI {str(path)!r} is not a server URL (http://host:19530) nor an embedded index: a "
                       "file whose name ends in .db, at most 36 letters, digits, '.', '-' or '_'")  # fmt: skip


def held_elsewhere(path: Path) -> bool:
    """Whether another process holds milvus-lite's lock on its file (checked before starting a server, which logs
    a traceback when it cannot take the lock). Only for a file this process does not serve: a POSIX lock is the
    process's, and closing this check's handle would let this process's lock go."""
    import errno
    import fcntl

    lock = path.parent / f".{path.name}.lock"  # milvus_lite.server.Server's
    if not lock.exists():
        return False
    try:
        with lock.open("a") as held:
            fcntl.lockf(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.lockf(held, fcntl.LOCK_UN)
        return False
    except OSError as exc:
        return exc.errno in (errno.EACCES, errno.EAGAIN)


def serve(path: Path, host: str, port: int) -> None:
    """Serve an embedded index file over gRPC at host:port (milvus-lite's own server, for development and tests:
    several processes share one index through it) until this process is stopped."""
    import signal
    import threading

    check_embedded(path)
    with imported_quietly(embedded=True):
        from milvus_lite.server_manager import server_manager_instance as manager
    make_folder(path.parent)
    with manager._lock:
        server = launched(path, f"{host}:{port}", die_with_parent=True)
    stopped = threading.Event()
    for sign in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sign, lambda *_: stopped.set())
    process = server._p  # milvus-lite's binary; Server.stop() would give it 2 s before killing it
    try:
        while not stopped.wait(1):
            if process.poll() is not None:
                raise RuntimeError(f"milvus-lite stopped serving {path} (exit {process.returncode}); see "
                                   f"{server_log(path)}")  # fmt: skip
    finally:
        process.terminate()  # let it close its file
        try:
            process.wait(timeout=30)
        finally:
            server.stop()


def first_line(exc: Exception) -> str:
    message = getattr(exc, "message", None) or str(exc)
    return str(message).splitlines()[0] if str(message) else type(exc).__name__


def drop(settings: Settings) -> None:
    client = connect(settings, create=False)
    if client is not None and client.has_collection(settings.collection, timeout=CALL_TIMEOUT):
        client.drop_collection(settings.collection, timeout=CALL_TIMEOUT)
    if not is_server(settings.milvus_target):
        drop_counts(counts_path(settings.milvus_target, settings.collection))


def quoted(value: str | list[str]) -> str:
    """A string or a list of strings as a Milvus expression literal."""
    return json.dumps(value, ensure_ascii=False)


@dataclass
class MilvusStore:
    client: MilvusClient
    name: str
    settings: Settings
    searches_itself = True
    _precision: str | None = field(default=None, repr=False)  # recorded when the collection is created
    _frequencies: dict[str, int] = field(default_factory=dict, repr=False)  # a server's document frequencies asked
    _counted_at: int = field(default=-1, repr=False)  # the collection's size when they were asked
    _counts_checked: bool = field(default=False, repr=False)  # the embedded store's word counts match it
    _no_text_match: bool = field(default=False, repr=False)  # the server refuses TEXT_MATCH (milvus-lite's)

    @classmethod
    def open(cls, settings: Settings, create: bool) -> MilvusStore | None:
        client = connect(settings, create)
        if client is None:
            return None
        exists = client.has_collection(settings.collection, timeout=CALL_TIMEOUT)
        if not create and not exists:
            return None
        if exists:
            client.load_collection(settings.collection, timeout=LOAD_TIMEOUT)  # a reopened embedded one is not loaded
        return cls(client, settings.collection, settings)

    # ----- the collection ------------------------------------------------------------------------------------
    def _exists(self) -> bool:
        return self._call("has_collection", self.name)

    def _call(self, operation: str, *args: Any, **kwargs: Any) -> Any:
        """A client call; a collection a restarted server has not loaded is loaded and the call made again, and a
        server that does not answer is StoreUnavailable naming it."""
        method = getattr(self.client, operation)
        kwargs.setdefault("timeout", CALL_TIMEOUT)
        try:
            try:
                return method(*args, **kwargs)
            except Exception as exc:
                if "call load()" not in str(exc):
                    raise
                self.client.load_collection(self.name, timeout=LOAD_TIMEOUT)
                return method(*args, **kwargs)
        except Exception as exc:
            if getattr(exc, "code", None) == UNREACHABLE or "UNAVAILABLE" in str(exc):
                raise StoreUnavailable(f"Milvus at {self.settings.milvus_target} did not answer "
                                       f"({first_line(exc)})") from None  # fmt: skip
            raise

    def _create(self, dim: int) -> None:
        from pymilvus import DataType, Function, FunctionType

        recorded = json.dumps({PRECISION_KEY: self._precision}) if self._precision else ""
        schema = self.client.create_schema(auto_id=False, enable_dynamic_field=False, description=recorded)
        schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=1024)
        schema.add_field("doc_id", DataType.VARCHAR, max_length=1024)
        schema.add_field("text", DataType.VARCHAR, max_length=TEXT_LIMIT)
        schema.add_field(
            "terms", DataType.VARCHAR, max_length=TEXT_LIMIT, enable_analyzer=True, enable_match=True,
            analyzer_params={"tokenizer": "standard"},
        )  # fmt: skip
        schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        schema.add_field("dense", DataType.FLOAT_VECTOR, dim=dim)
        schema.add_field("venue", DataType.VARCHAR, max_length=TEXT_LIMIT)
        schema.add_field("venue_key", DataType.VARCHAR, max_length=TEXT_LIMIT)  # lower-cased, for the venue filter
        schema.add_field("year", DataType.INT64)
        schema.add_field("authors_key", DataType.VARCHAR, max_length=TEXT_LIMIT)  # lower-cased, for `like`
        schema.add_field("pmid", DataType.VARCHAR, max_length=64)
        schema.add_field("chunk_index", DataType.INT64)
        schema.add_field("meta", DataType.JSON)
        schema.add_function(
            Function(name="terms_bm25", function_type=FunctionType.BM25, input_field_names=["terms"],
                     output_field_names=["sparse"])
        )  # fmt: skip
        self._call("create_collection", self.name, schema=schema)
        try:
            self._index("HNSW", {"M": 16, "efConstruction": 200})
        except Exception as exc:  # milvus-lite (embedded or served) builds its own graph index instead
            if LOCAL_MODE not in str(exc):
                raise
            self._index("AUTOINDEX", {})
        self._call("load_collection", self.name)

    def _index(self, dense: str, params: dict[str, Any]) -> None:
        index = self.client.prepare_index_params()
        index.add_index(field_name="dense", index_type=dense, metric_type="COSINE", params=params)
        index.add_index(field_name="sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25",
                        params={"bm25_k1": BM25_K1, "bm25_b": 0.75})  # bm25s's defaults  # fmt: skip
        self._call("create_index", self.name, index)

    def count(self) -> int:
        if not self._exists():
            return 0
        return int(self._call("query", self.name, filter="", output_fields=["count(*)"])[0]["count(*)"])

    def precision(self) -> str | None:
        if not self._exists():
            return None
        described = self._call("describe_collection", self.name)
        try:  # in the schema's description (milvus-lite keeps no properties), or a property (earlier servers)
            recorded = json.loads(described.get("description") or "{}").get(PRECISION_KEY)
        except (ValueError, AttributeError):
            recorded = None
        recorded = recorded or (described.get("properties") or {}).get(PRECISION_KEY)
        return str(recorded) if recorded else None

    def record_precision(self, precision: str) -> None:
        if not self._exists():
            self._precision = precision
        elif self.precision() is None:
            self._call("alter_collection_properties", self.name, properties={PRECISION_KEY: precision})

    # ----- writing -------------------------------------------------------------------------------------------
    def add(self, nodes: list[TextNode]) -> None:
        if not nodes:
            return
        if not self._exists():
            self._create(len(nodes[0].embedding or []))
        words = tokenize([node.text for node in nodes])
        rows = [row(node, terms) for node, terms in zip(nodes, words, strict=True)]
        counts = self._word_counts()
        if counts is None:
            self._call("upsert", self.name, rows)
            return
        with counts.updating() as change:
            replaced = self._call("get", self.name, ids=[r["id"] for r in rows], output_fields=["terms"])
            self._call("upsert", self.name, rows)
            change([r["terms"].split() for r in rows], [r["terms"].split() for r in replaced])

    def delete_docs(self, doc_ids: list[str]) -> None:
        if not self._exists():
            return
        counts = self._word_counts()
        for i in range(0, len(doc_ids), PAGE):
            leaving = f"doc_id in {quoted(doc_ids[i : i + PAGE])}"
            if counts is None:
                self._call("delete", self.name, filter=leaving)
                continue
            with counts.updating() as change:
                removed = self._where(leaving, ["terms"])
                self._call("delete", self.name, filter=leaving)
                change([], [r["terms"].split() for r in removed])

    def _word_counts(self) -> WordCounts | None:
        """The embedded store's word counts, checked against the collection once for this store (and counted again
        when they do not match); None for a server, whose inverted index counts a word quickly."""
        if is_server(self.settings.milvus_target):
            return None
        counts = WordCounts(counts_path(self.settings.milvus_target, self.name), self.count,
                            lambda: (r["terms"].split() for r in self._every("", ["terms"])))  # fmt: skip
        if not self._counts_checked:
            counts.check()
            self._counts_checked = True
        return counts

    # ----- reading -------------------------------------------------------------------------------------------
    def _where(self, expression: str, fields: list[str]) -> list[dict[str, Any]]:
        return list(self._call("query", self.name, filter=expression, output_fields=fields)) if self._exists() else []

    def stored_docs(self, doc_ids: list[str]) -> dict[str, StoredDoc]:
        found: dict[str, StoredDoc] = {}
        for i in range(0, len(doc_ids), PAGE):
            rows = self._where(f"doc_id in {quoted(doc_ids[i : i + PAGE])}", ["meta"])
            count_stored(found, [r["meta"] for r in rows])
        return found

    def docs_with_pmids(self, pmids: list[str]) -> set[str]:
        found: set[str] = set()
        for i in range(0, len(pmids), PAGE):
            found.update(r["doc_id"] for r in self._where(f"pmid in {quoted(pmids[i : i + PAGE])}", ["doc_id"]))
        return found

    def _every(self, expression: str, fields: list[str]) -> Iterator[dict[str, Any]]:
        if not self._exists():
            return
        pages = self._call("query_iterator", self.name, batch_size=ITERATE, filter=expression, output_fields=fields)
        try:
            while page := pages.next():
                yield from page
        finally:
            pages.close()

    def indexed_doc_ids(self) -> set[str]:
        return {r["doc_id"] for r in self._every("", ["doc_id"])}

    def iter_chunks(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        for r in self._every("", ["text", "meta"]):
            yield r["id"], r["text"], r["meta"]

    def iter_vectors(self) -> Iterator[tuple[str, str, dict[str, Any], list[float]]]:
        for r in self._every("", ["text", "meta", "dense"]):
            yield r["id"], r["text"], r["meta"], list(r["dense"])

    def get_chunks(self, chunk_ids: list[str]) -> dict[str, tuple[str, dict[str, Any]]]:
        if not chunk_ids or not self._exists():
            return {}
        rows = self._call("get", self.name, ids=chunk_ids, output_fields=["text", "meta"])
        return {r["id"]: (r["text"], r["meta"]) for r in rows}

    def get_abstracts(self, doc_ids: list[str]) -> dict[str, str]:
        if not doc_ids:
            return {}
        return assembled((r["text"], r["meta"]) for r in self._where(f"doc_id in {quoted(doc_ids)}", ["text", "meta"]))

    def get_papers(self, doc_ids: list[str]) -> list[Paper]:
        if not doc_ids:
            return []
        firsts = self._where(f"doc_id in {quoted(doc_ids)} and chunk_index == 0", ["meta"])
        return papers_of(doc_ids, self.get_abstracts(doc_ids), {r["meta"]["doc_id"]: r["meta"] for r in firsts})

    def list_papers(self) -> list[dict[str, Any]]:
        rows = [paper_row(r["text"], r["meta"]) for r in self._every("chunk_index == 0", ["text", "meta"])]
        return sorted(rows, key=lambda r: r["doc_id"])

    # ----- searching -----------------------------------------------------------------------------------------
    def venue_named(self, venue: str) -> str | None:
        """The indexed venue of this name in any case, or None."""
        named = f"venue_key == {quoted(venue.strip().lower())}"
        rows = self._call("query", self.name, filter=named, output_fields=["venue"], limit=1)
        return rows[0]["venue"] if rows else None

    def has_years(self, years: tuple[int, int]) -> bool:
        within = f"year >= {years[0]} and year <= {years[1]}"
        rows = self._call("query", self.name, filter=within, output_fields=["id"], limit=1)
        return bool(rows)

    def term_weights(self, words: list[str]) -> dict[str, float]:
        """BM25's idf of each (tokenized) word over the collection's chunks, as the keyword index gives it. The
        embedded store keeps its counts (rag/index/word_counts.py); a server's inverted index counts each word
        (`TEXT_MATCH`; `rag milvus-server`, which refuses it, by matching the word among the space-separated
        terms), once while the collection's size stays the same."""
        from rag.terms import idf

        counts = self._word_counts()
        if counts is not None:
            frequencies, total = counts.frequencies(words)
            return {word: idf(frequencies[word], total) for word in words}
        total = self.count()
        if total != self._counted_at:
            self._frequencies, self._counted_at = {}, total
        for word in words:
            if word not in self._frequencies:
                self._frequencies[word] = self._holding(word)
        return {word: idf(self._frequencies[word], total) for word in words}

    def _holding(self, word: str) -> int:
        """How many chunks hold a word (tokenized: no spaces, quotes or backslashes)."""
        if not self._no_text_match:
            try:
                found = self._call("query", self.name, filter=f"TEXT_MATCH(terms, {quoted(word)})",
                                   output_fields=["count(*)"])  # fmt: skip
                return int(found[0]["count(*)"])
            except Exception as exc:
                if LOCAL_MODE not in str(exc) and "TEXT_MATCH" not in str(exc):
                    raise
                self._no_text_match = True  # milvus-lite's server
        literal = word.replace("%", "\\%").replace("_", "\\_")
        among = " or ".join(f"terms like {quoted(form)}" for form in
                            (f"{literal} %", f"% {literal} %", f"% {literal}"))  # fmt: skip
        found = self._call("query", self.name, filter=f"terms == {quoted(word)} or {among}",
                           output_fields=["count(*)"])  # fmt: skip
        return int(found[0]["count(*)"])

    def ranked(
        self, question: str, vector: list[float], mode: str, pool: int, k: int, filters: Filters
    ) -> tuple[list[tuple[str, str, float, str, dict[str, Any]]], dict[str, float]]:
        """The k best papers' (chunk id, doc id, score, text, metadata) and the dense similarity of each paper's best
        chunk, ranked as the Chroma setup ranks: each search's `pool` best chunks collapsed to their papers, and
        for hybrid the two rankings fused; dense or keyword alone keep their own scores."""
        expression = self._filter(filters)
        terms = " ".join(tokenize([question])[0])
        if mode == "keyword" and not terms:
            return [], {}
        chunks: dict[str, tuple[str, dict[str, Any]]] = {}
        dense = self._ranking([vector], "dense", "dense", pool, expression, chunks) if mode != "keyword" else []
        keyword = (
            self._ranking([terms], "sparse", "keyword", pool, expression, chunks) if mode != "dense" and terms else []
        )
        if mode == "hybrid":  # as for Chroma, also when one ranking is empty
            ranked = fuse([dense, keyword], (self.settings.dense_weight, self.settings.keyword_weight),
                          self.settings.rrf_k)[:k]  # fmt: skip
        else:
            ranked = [(hit, hit.score) for hit in (dense or keyword)[:k]]
        hits = [(hit.chunk_id, hit.doc_id, score, *chunks[hit.chunk_id]) for hit, score in ranked]
        cosine = {hit.doc_id: hit.score for hit in dense}
        unmeasured = [doc for _, doc, _, _, _ in hits if doc not in cosine]
        return hits, cosine | self._cosine_of(unmeasured, vector)

    def _ranking(
        self, data: list, field: str, mode: str, limit: int, expression: str, chunks: dict[str, tuple[str, dict]]
    ) -> list[Hit]:
        """One search's `limit` best chunks collapsed to each paper's best, best first; their texts and metadata
        go into `chunks` (fetched with the search: a `get` afterwards cost more than both searches)."""
        found = self._call("search", self.name, data=data, anns_field=field, limit=limit, filter=expression,
                           output_fields=["doc_id", "text", "meta"])[0]  # fmt: skip
        chunks.update((h["id"], (h["entity"]["text"], h["entity"]["meta"])) for h in found)
        return collapse([Hit(h["id"], h["entity"]["doc_id"], self._score(h["distance"], mode)) for h in found])

    @staticmethod
    def _score(distance: float, mode: str) -> float:
        """A hit's score as the Chroma setup gives it: cosine similarity, BM25 as bm25s scores it, or fused.
        (milvus-lite reports BM25 negated, smaller being closer; a Milvus server reports it positive.)"""
        return abs(distance) / (BM25_K1 + 1) if mode == "keyword" else distance

    def _cosine_of(self, doc_ids: list[str], vector: list[float]) -> dict[str, float]:
        if not doc_ids:
            return {}
        found = self._call("search", self.name, data=[vector], anns_field="dense", limit=len(doc_ids),
                           filter=f"doc_id in {quoted(doc_ids)}", output_fields=["doc_id"],
                           group_by_field="doc_id")[0]  # fmt: skip
        return {h["entity"]["doc_id"]: h["distance"] for h in found}

    @staticmethod
    def _filter(filters: Filters) -> str:
        conditions = []
        if filters.venue:
            conditions.append(f"venue == {quoted(filters.venue)}")
        if filters.years:
            conditions.append(f"year >= {filters.years[0]} and year <= {filters.years[1]}")
        if filters.author:
            name = filters.author.strip().lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            conditions.append(f"authors_key like {quoted('%' + name + '%')}")
        return " and ".join(conditions)


def row(node: TextNode, terms: list[str]) -> dict[str, Any]:
    """A chunk as a Milvus row."""
    meta = dict(node.metadata) | {"doc_id": node.ref_doc_id or doc_of_chunk(node.id_)}
    venue = str(meta.get("venue") or "")
    return {
        "id": node.id_,
        "doc_id": meta["doc_id"],
        "text": node.text,
        "terms": " ".join(terms)[:TEXT_LIMIT],
        "dense": node.embedding,
        "venue": venue,
        "venue_key": venue.lower(),
        "year": int(meta.get("year") or 0),
        "authors_key": str(meta.get("authors") or "").lower()[:TEXT_LIMIT],
        "pmid": str(meta.get("pmid") or ""),
        "chunk_index": int(meta.get("chunk_index", 0)),
        "meta": meta,
    }
