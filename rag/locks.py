"""An exclusive lock on a file, shared by the places that make writers take turns (ingests in one data directory,
model preparation in the cache, the embedded Milvus's word counts)."""

from __future__ import annotations

import fcntl
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def exclusive(path: Path, waiting: Callable[[], None] | None = None) -> Iterator[None]:
    """Hold an exclusive `flock` on the file at `path` (made if missing) for the block. Another holder, in another
    process or on another open in this one, is waited for; `waiting` is called first, to say so."""
    with path.open("a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if waiting is not None:
                waiting()
            fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
