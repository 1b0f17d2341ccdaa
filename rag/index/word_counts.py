"""How many chunks hold each word, kept beside an embedded Milvus for the refusal gate's idf.

milvus-lite answers `TEXT_MATCH` by tokenizing every row (about 2 s a word at 30,000 chunks, 5 minutes a question at
100,000 abstracts), so the embedded store keeps document frequencies itself, in SQLite next to its folder. Only
the process holding milvus-lite's lock writes there, so the counts stay exact: the store marks them dirty before it
writes to Milvus and clean, with the change, after; counts left dirty by a crash, or counting another number of
chunks than the collection holds, are counted again from the collection.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterable
from contextlib import closing
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS words (word TEXT PRIMARY KEY, chunks INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""
CHUNKS, DIRTY = "chunks", "dirty"
ASK = 500  # words per lookup (SQLite's default limit on parameters is higher; this keeps statements short)


def counts_path(target: str, collection: str) -> Path:
    """The counts of a collection of the embedded Milvus in folder `target`."""
    return Path(f"{target}.{collection}.words.sqlite")


class WordCounts:
    def __init__(self, path: Path) -> None:
        self.path = path

    def _connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.path)
        connection.executescript(SCHEMA)
        return connection

    def chunks(self) -> int | None:
        """How many chunks are counted; None when the counts are missing or a write to the store did not finish."""
        if not self.path.exists():
            return None
        with closing(self._connect()) as db:
            state = dict(db.execute("SELECT key, value FROM state").fetchall())
        return None if CHUNKS not in state or state.get(DIRTY) else state[CHUNKS]

    def frequencies(self, words: list[str]) -> dict[str, int]:
        """How many chunks hold each word (0 for a word none holds)."""
        found: dict[str, int] = {}
        with closing(self._connect()) as db:
            for i in range(0, len(words), ASK):
                part = words[i : i + ASK]
                marks = ",".join("?" * len(part))
                found.update(db.execute(f"SELECT word, chunks FROM words WHERE word IN ({marks})", part).fetchall())
        return {word: found.get(word, 0) for word in words}

    def begin(self) -> None:
        """Marks the counts dirty before the store is written to: a crash before `change` leaves them so."""
        with closing(self._connect()) as db, db:
            db.execute("INSERT OR REPLACE INTO state VALUES (?, 1)", (DIRTY,))

    def change(self, added: Iterable[Iterable[str]], removed: Iterable[Iterable[str]] = ()) -> None:
        """Counts chunks that were added (each its words) and uncounts removed ones, and marks the counts clean."""
        delta: Counter[str] = Counter()
        chunks = 0
        for words in added:
            delta.update(set(words))
            chunks += 1
        for words in removed:
            delta.subtract(set(words))
            chunks -= 1
        with closing(self._connect()) as db, db:
            db.executemany(
                "INSERT INTO words VALUES (?, ?) ON CONFLICT(word) DO UPDATE SET chunks = chunks + excluded.chunks",
                [(word, n) for word, n in delta.items() if n],
            )
            db.execute("DELETE FROM words WHERE chunks <= 0")
            db.execute("INSERT INTO state VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = value + excluded.value",
                       (CHUNKS, chunks))  # fmt: skip
            db.execute("DELETE FROM state WHERE key = ?", (DIRTY,))

    def recount(self, chunks: Iterable[Iterable[str]]) -> None:
        """Counts every chunk of the collection afresh (each its words)."""
        self.path.unlink(missing_ok=True)
        self.change(chunks)

    def drop(self) -> None:
        self.path.unlink(missing_ok=True)
