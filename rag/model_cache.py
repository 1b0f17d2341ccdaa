"""Where models prepared for ONNX Runtime are kept: once per machine, shared by every data directory.

The ONNX export, the int8 model and its agreement record of a model go in a folder of the user's cache (the
platform's, e.g. ~/.cache/abstracts-rag/models; RAG_MODEL_CACHE overrides) named by the model files' checksum and
the ONNX Runtime version, so that a changed model or runtime never reuses an old export. One process prepares a
folder at a time (a lock; the others wait, then use its files); files are written under temporary names and moved
into place, and their sizes are recorded, so that a half-written or damaged file is found and made again.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

APP = "abstracts-rag"
SIZES = "sizes.json"  # the prepared files' sizes, written after them
CHECKSUMS = "checksums.json"  # a model folder's checksum by its files' (path, size, mtime): hashing takes time
SKIPPED_FOLDERS = {"onnx", "openvino", ".git"}  # other runtimes' copies inside a Hugging Face folder
SKIPPED_FILES = {"README.md", ".gitattributes"}


def user_cache() -> Path:
    """The platform's cache folder for this tool's prepared models."""
    import platformdirs

    return platformdirs.user_cache_path(APP) / "models"


def model_files(folder: Path) -> list[Path]:
    """The files that make a model (config, tokenizer, weights), in a fixed order."""
    return sorted(
        path
        for path in folder.rglob("*")
        if path.is_file()
        and path.name not in SKIPPED_FILES
        and path.suffix != ".onnx"
        and not SKIPPED_FOLDERS.intersection(path.relative_to(folder).parts[:-1])
    )


def checksum(paths: list[Path], names_from: Path | None = None) -> str:
    """SHA-256 over the files' names (relative to names_from, else the bare names) and contents."""
    digest = hashlib.sha256()
    for path in paths:
        name = path.relative_to(names_from).as_posix() if names_from else path.name
        digest.update(name.encode() + b"\0")
        with path.open("rb") as file:
            digest.update(hashlib.file_digest(file, "sha256").digest())
    return digest.hexdigest()


def folder_checksum(model_dir: Path, cache: Path) -> str:
    """The model folder's checksum, remembered in the cache by its files' paths, sizes and modification times
    (reading 90 MB of weights at every start would cost a tenth of a second)."""
    files = model_files(model_dir)
    stamp = hashlib.sha256(
        "\n".join(f"{p.resolve()}|{stat.st_size}|{stat.st_mtime_ns}" for p in files if (stat := p.stat())).encode()
    ).hexdigest()
    memo = cache / CHECKSUMS
    try:
        known = json.loads(memo.read_text())
    except (OSError, ValueError):
        known = {}
    if not isinstance(known, dict):
        known = {}
    if stamp not in known:
        known[stamp] = checksum(files, model_dir)
        cache.mkdir(parents=True, exist_ok=True)
        write_atomically(memo, json.dumps(known))
    return known[stamp]


def runtime_version() -> str:
    from importlib.metadata import version

    return version("onnxruntime")


def export_folder(cache: Path, name: str, model_dir: Path) -> Path:
    """The folder for a model's prepared files: its name, checksum and the ONNX Runtime version."""
    return cache / f"{name}-{folder_checksum(model_dir, cache)[:16]}-ort{runtime_version()}"


@contextmanager
def preparing(folder: Path) -> Iterator[None]:
    """Hold the folder's lock while preparing it: another process preparing the same folder is waited for."""
    from rag.locks import exclusive

    def waiting() -> None:
        print(f"waiting for another process preparing the model in {folder} ...", file=sys.stderr, flush=True)

    folder.mkdir(parents=True, exist_ok=True)
    with exclusive(folder.parent / f".{folder.name}.lock", waiting):
        yield


def record_sizes(folder: Path, names: list[str]) -> None:
    """Record the prepared files' sizes (after they are in place)."""
    sizes = read_sizes(folder)
    sizes.update({name: (folder / name).stat().st_size for name in names})
    write_atomically(folder / SIZES, json.dumps(sizes))


def read_sizes(folder: Path) -> dict[str, int]:
    try:
        sizes = json.loads((folder / SIZES).read_text())
    except (OSError, ValueError):
        return {}
    return sizes if isinstance(sizes, dict) else {}


def intact(folder: Path, names: list[str], repair: bool = False) -> bool:
    """Whether the named files are there, each with its recorded size. With `repair` (only under the folder's
    lock: another process may be writing them), a file of another size, cut short or overwritten, is removed
    with a one-line note, so that it is made again."""
    sizes = read_sizes(folder)
    whole = True
    for name in names:
        path = folder / name
        if not path.exists():
            whole = False
        elif sizes.get(name) != path.stat().st_size:
            whole = False
            if repair:
                print(f"note: {path} is damaged or incomplete; preparing it again", file=sys.stderr, flush=True)
                path.unlink()
    return whole


def write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    tmp.replace(path)
