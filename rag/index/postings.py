"""BM25's score arrays (bm25s's column-sorted layout) built in bounded memory, whatever the collection's size.

bm25s builds its index from every chunk's words held in memory at once, with temporaries of about 30 bytes per
(chunk, word) pair: gigabytes for a million abstracts. Here each slice of chunks is counted as it comes (which
words, how often) and spilled to disk sorted by word; the arrays are then written word block by word block, each
block gathered from the spills. Memory holds one slice or one block, and per word and per chunk a few numbers.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    import numpy as np

SLICE_CHUNKS = 10_000  # chunks counted and spilled at a time
BLOCK_ENTRIES = 2_000_000  # (chunk, word) entries gathered per written block: about 120 MB at work
SPILL_PREFIX = ".keywords-spill-"  # then the building process's id
SPILLS = ("words", "chunks", "counts")  # per entry, in slices sorted by word then chunk: int32 each
ARRAYS = {"data": "data.csc.index.npy", "indices": "indices.csc.index.npy", "indptr": "indptr.csc.index.npy"}


class Spill:
    """Files written while an index is built and read back when it is saved, in a folder of workdir (the data
    directory; the system's temporary folder may be memory) that is removed when done, or by the next build if
    this process died first."""

    def __init__(self, workdir: Path | None = None) -> None:
        self._workdir = workdir
        self._folder: Path | None = None
        self._files: dict[str, BinaryIO] = {}

    def file(self, name: str) -> BinaryIO:
        """The named file, open for appending and reading back."""
        if self._folder is None:
            workdir = Path(self._workdir or tempfile.gettempdir())
            workdir.mkdir(parents=True, exist_ok=True)
            _remove_stale_spills(workdir)
            self._folder = Path(tempfile.mkdtemp(prefix=f"{SPILL_PREFIX}{os.getpid()}-", dir=workdir))
            weakref.finalize(self, shutil.rmtree, self._folder, True)
        if name not in self._files:
            self._files[name] = (self._folder / name).open("w+b")
        return self._files[name]

    def read_back(self, name: str) -> BinaryIO:
        """The named file from its start (empty if nothing was written to it)."""
        file = self.file(name)
        file.flush()
        file.seek(0)
        return file

    def close(self) -> None:
        for file in self._files.values():
            file.close()
        self._files = {}
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


class Postings:
    """Which chunks hold which words how often, counted slice by slice and kept on disk until `write`."""

    def __init__(self, spill: Spill) -> None:
        self.lengths = array("i")  # words per chunk
        self.frequencies = array("q")  # chunks per word id
        self._pending: list[array] = []
        self._slices: list[int] = []  # entries per spilled slice, in order
        self._spill = spill

    def __len__(self) -> int:
        return len(self.lengths)

    def add(self, chunks: list[array]) -> None:
        """Each chunk's words as vocabulary ids, in chunk order."""
        self._pending += chunks
        if len(self._pending) >= SLICE_CHUNKS:
            self.flush()

    def write(self, folder: Path, n_words: int, idf: np.ndarray, tfc: Callable[..., np.ndarray]) -> None:
        """Write bm25s's data, indices and indptr arrays into folder: for word w and chunk d, idf[w] * tfc(tf,
        chunk length, mean length). `n_words` columns (words never seen in a chunk have empty ones)."""
        import numpy as np

        self.flush()
        pointers = np.zeros(n_words + 1, dtype=np.int64)
        counts = np.frombuffer(self.frequencies, dtype=np.int64)
        np.cumsum(counts, out=pointers[1 : len(counts) + 1])
        pointers[len(counts) + 1 :] = pointers[len(counts)]
        np.save(folder / ARRAYS["indptr"], pointers)
        lengths = np.frombuffer(self.lengths, dtype=np.int32)
        mean_length = float(lengths.mean()) if len(lengths) else 1.0
        with (
            _npy(folder / ARRAYS["data"], np.float32, pointers[-1]) as data,
            _npy(folder / ARRAYS["indices"], np.int32, pointers[-1]) as indices,
        ):
            for words, chunks, tf in self._blocks(pointers):
                data.write(
                    (idf[words] * tfc(tf_array=tf, l_d=lengths[chunks], l_avg=mean_length)).astype(np.float32).tobytes()
                )
                indices.write(chunks.tobytes())

    def flush(self) -> None:
        """Count the pending chunks' words and append them to the spill files, sorted by word then chunk."""
        import numpy as np

        if not self._pending:
            return
        sizes = np.fromiter((len(c) for c in self._pending), dtype=np.int64, count=len(self._pending))
        words = np.frombuffer(b"".join(c.tobytes() for c in self._pending), dtype=np.int32).astype(np.int64)
        first = len(self.lengths)
        local = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
        keys, tf = np.unique((words << 32) | local, return_counts=True)
        found = (keys >> 32).astype(np.int32)
        self._grow(int(words.max()) + 1 if len(words) else 0)
        frequencies = np.frombuffer(self.frequencies, dtype=np.int64)
        np.add.at(frequencies, found, 1)
        self.lengths.frombytes(sizes.astype(np.int32).tobytes())
        chunks = (keys & 0xFFFFFFFF).astype(np.int32) + first
        for name, values in zip(SPILLS, (found, chunks, tf.astype(np.int32)), strict=True):
            self._spill.file(name).write(values.tobytes())
        self._slices.append(len(keys))
        self._pending = []

    def _grow(self, n_words: int) -> None:
        if n_words > len(self.frequencies):
            self.frequencies.frombytes(bytes(8 * (n_words - len(self.frequencies))))

    def _blocks(self, pointers: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """(words, chunks, counts) of consecutive word ranges of about BLOCK_ENTRIES entries, sorted by word then
        chunk: each slice's part of a range is one stretch of its spill, found by its sorted words."""
        import numpy as np

        starts = np.concatenate([[0], np.cumsum(self._slices)]).astype(np.int64)
        bounds = _word_ranges(pointers)
        cuts = np.array(
            [np.searchsorted(self._read("words", s, n), bounds) for s, n in zip(starts[:-1], self._slices, strict=True)]
        )
        for r in range(len(bounds) - 1):
            parts = [
                tuple(self._read(name, starts[s] + cuts[s, r], cuts[s, r + 1] - cuts[s, r]) for name in SPILLS)
                for s in range(len(self._slices))
            ]
            if not parts:
                continue
            words, chunks, tf = (np.concatenate(column) for column in zip(*parts, strict=True))
            order = np.argsort(words, kind="stable")  # slices are in chunk order: a stable sort keeps it per word
            yield words[order], chunks[order], tf[order].astype(np.float32)

    def _read(self, name: str, start: int, count: int) -> np.ndarray:
        import numpy as np

        file = self._spill.read_back(name)
        file.seek(4 * int(start))
        return np.frombuffer(file.read(4 * int(count)), dtype=np.int32)


def _remove_stale_spills(workdir: Path) -> None:
    """Remove the spills of builds whose process is gone (killed before it could clean up)."""
    for folder in workdir.glob(f"{SPILL_PREFIX}*"):
        pid = folder.name.removeprefix(SPILL_PREFIX).split("-")[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        pass
    return True


def _word_ranges(pointers: np.ndarray) -> np.ndarray:
    """Word ids that cut the columns into ranges of about BLOCK_ENTRIES entries (a common word may make one
    range larger): [0, ..., n_words]."""
    import numpy as np

    targets = np.arange(BLOCK_ENTRIES, pointers[-1], BLOCK_ENTRIES)
    inner = np.unique(np.searchsorted(pointers, targets, side="right") - 1)
    return np.unique(np.concatenate([[0], inner, [len(pointers) - 1]]))


class _npy:
    """A .npy file of a known length written front to back (np.save would want the whole array in memory)."""

    def __init__(self, path: Path, dtype: type, length: int) -> None:
        self.path, self.dtype, self.length = path, dtype, int(length)

    def __enter__(self) -> BinaryIO:
        import numpy as np

        self.file = self.path.open("wb")
        header = {"descr": np.lib.format.dtype_to_descr(np.dtype(self.dtype)), "fortran_order": False,
                  "shape": (self.length,)}  # fmt: skip
        np.lib.format.write_array_header_1_0(self.file, header)
        return self.file

    def __exit__(self, *exc: object) -> None:
        self.file.close()
