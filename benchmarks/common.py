"""What several benchmarks share: a free port, the seeds' index built once into a work folder."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def seeds_index(work: Path) -> Path:
    """A data directory holding the seeds' index (built with `rag ingest seeds/` on first use)."""
    data = work / "seeds-data"
    if not (data / "chroma").exists():
        print("indexing the seeds ...", file=sys.stderr)
        env = {**os.environ, "RAG_DATA_DIR": str(data)}
        subprocess.run([sys.executable, "-m", "rag", "ingest", "seeds/"], cwd=ROOT, env=env, check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip
    return data
