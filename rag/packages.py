"""Folders of installed packages, found without importing them: the packages that carry the bundled models, and the
data that llama-index and nltk ship."""

from __future__ import annotations

import importlib.util
from pathlib import Path


def package_folder(name: str) -> Path | None:
    """The folder of an installed package, without running its init (None when it is not installed)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))
