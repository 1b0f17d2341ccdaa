"""How many chunks hold each word, kept beside an embedded Milvus for the refusal gate's idf.

milvus-lite refuses `TEXT_MATCH` (and its 3.x edition answered it by tokenizing every row: minutes a question at
100,000 abstracts), so the embedded store keeps document frequencies itself, in SQLite next to its file. Only the
process holding milvus-lite's lock writes them; inside it, writes and recounts take turns under a file
lock (`flock` on separate opens excludes threads too). A write is counted as pending before it reaches Milvus and
settled, with its words, in one transaction after; counts with a write still pending (a write that failed, a
process that died) or counting another number of chunks than the collection holds are counted again from the
collection. Readers never wait: during a write they see the counts from before it.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, closing, contextmanager
from pathlib import Path

from rag.locks import exclusive

SCHEMA = """
CREATE TABLE IF NOT EXISTS words (word TEXT PRIMARY KEY, chunks INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""
log = logging.getLogger(__name__)
CHUNKS, PENDING = "chunks", "pending"
ASK = 500  # words per lookup, to keep statements short
Chunks = Iterable[Iterable[str]]  # each chunk's words


def counts_path(target: str, collection: str) -> Path:
    """The counts of a collection of the embedded Milvus in folder `target`."""
    return Path(f"{target}.{collection}.words.sqlite")


class WordCounts:
    """The counts of one collection. `size` gives the collection's number of chunks and `every_chunk` its chunks'
    words, for checking and counting again."""

    def __init__(self, path: Path, size: Callable[[], int], every_chunk: Callable[[], Chunks]) -> None:
        self.path = path
        self.size = size
        self.every_chunk = every_chunk

    def _connect(self, path: Path | None = None) -> sqlite3.Connection:
        connection = sqlite3.connect(path or self.path, timeout=60)
        connection.executescript(SCHEMA)
        return connection

    def _turn(self) -> AbstractContextManager[None]:
        return turn(self.path)

    def state(self) -> tuple[int | None, int]:
        """The chunks counted (None when never counted) and the writes pending."""
        if not self.path.exists():
            return None, 0
        with closing(self._connect()) as db:
            state = dict(db.execute("SELECT key, value FROM state").fetchall())
        return state.get(CHUNKS), state.get(PENDING, 0)

    def check(self) -> bool:
        """Count again if the counts are missing, have a write pending or count another number of chunks than the
        collection holds; whether they had to be."""
        with self._turn():
            counted, pending = self.state()
            size = self.size()
            if counted is not None and not pending and counted == size:
                return False
            if size:
                log.warning("rag: counting the words of %s chunks of the embedded Milvus once, for the refusal gate "
                            "(about a minute per 60,000 chunks)", f"{size:,}")  # fmt: skip
            self._recount()
            return True

    def _recount(self) -> None:
        """Count into a new file, then put it in place: readers see the old counts until then."""
        fresh = Path(f"{self.path}.new")
        fresh.unlink(missing_ok=True)
        self._apply(self.every_chunk(), (), into=fresh)
        os.replace(fresh, self.path)

    @contextmanager
    def updating(self) -> Iterator[Callable[[Chunks, Chunks], None]]:
        """Around a write to the collection: yields `change(added, removed)`, to be called once the write is done.
        If the block raises before it, the write stays pending and the counts are made again at the next check."""
        with self._turn():
            if self.state()[1]:
                self._recount()  # an earlier write failed
            with closing(self._connect()) as db, db:
                db.execute("INSERT INTO state VALUES (?, 1) ON CONFLICT(key) DO UPDATE SET value = value + 1",
                           (PENDING,))  # fmt: skip
            yield lambda added, removed: self._apply(added, removed, settles=True)

    def _apply(self, added: Chunks, removed: Chunks, settles: bool = False, into: Path | None = None) -> None:
        delta: Counter[str] = Counter()
        chunks = 0
        for words in added:
            delta.update(set(words))
            chunks += 1
        for words in removed:
            delta.subtract(set(words))
            chunks -= 1
        with closing(self._connect(into)) as db, db:
            db.executemany(
                "INSERT INTO words VALUES (?, ?) ON CONFLICT(word) DO UPDATE SET chunks = chunks + excluded.chunks",
                [(word, n) for word, n in delta.items() if n],
            )
            db.execute("DELETE FROM words WHERE chunks <= 0")
            db.execute("INSERT INTO state VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = value + excluded.value",
                       (CHUNKS, chunks))  # fmt: skip
            if settles:
                db.execute("UPDATE state SET value = value - 1 WHERE key = ?", (PENDING,))

    def frequencies(self, words: list[str]) -> tuple[dict[str, int], int]:
        """How many chunks hold each word (0 for a word none holds), and how many chunks are counted."""
        found: dict[str, int] = {}
        with closing(self._connect()) as db:
            for i in range(0, len(words), ASK):
                part = words[i : i + ASK]
                marks = ",".join("?" * len(part))
                found.update(db.execute(f"SELECT word, chunks FROM words WHERE word IN ({marks})", part).fetchall())
            total = db.execute("SELECT value FROM state WHERE key = ?", (CHUNKS,)).fetchone()
        return {word: found.get(word, 0) for word in words}, total[0] if total else 0


def turn(path: Path) -> AbstractContextManager[None]:
    """One writer or recount of the counts at `path` at a time, across threads and processes."""
    return exclusive(Path(f"{path}.lock"))


def drop_counts(path: Path) -> None:
    with turn(path):
        path.unlink(missing_ok=True)
