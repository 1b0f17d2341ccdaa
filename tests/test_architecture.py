"""The shape of the code, read from its import statements (lazy ones and TYPE_CHECKING ones included): no import
cycle anywhere in rag/ and ui/, no module importing a floor above its own, and answering sees the index only
through the `Library` protocol (docs/architecture.md draws the floors)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Lowest first: a module may import its own floor and those below it, never one above.
FLOORS = [
    ("ground", ["rag", "rag.settings", "rag.errors", "rag.records", "rag.text", "rag.sentences", "rag.terms",
                "rag.onnx", "rag.packages", "rag.prompts"]),
    ("corpus", ["rag.corpus"]),
    ("index", ["rag.index"]),
    ("answer", ["rag.answer"]),
    ("engine", ["rag.engine"]),
    ("evaluation and training", ["rag.evaluation", "rag.training"]),
    ("front ends", ["rag.frontends", "rag.__main__", "ui"]),
]  # fmt: skip


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules() -> dict[str, Path]:
    files = [*ROOT.glob("rag/**/*.py"), *ROOT.glob("ui/**/*.py")]
    return {module_name(path): path for path in files}


def imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules a file imports anywhere in it; `from package import module` counts as the module."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            subs = {f"{node.module}.{alias.name}" for alias in node.names}
            found |= (subs & modules.keys()) or {node.module}
    return {name for name in found if name in modules}


def graph() -> dict[str, set[str]]:
    modules = project_modules()
    return {name: imports(path, modules) - {name} for name, path in modules.items()}


def floor_of(module: str) -> int:
    best, floor = -1, -1
    for i, (_, prefixes) in enumerate(FLOORS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, floor = len(prefix), i
    return floor


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in edges[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return groups


def test_every_module_has_a_floor() -> None:
    assert [m for m in project_modules() if floor_of(m) < 0] == []


def test_no_import_cycles() -> None:
    assert cycles(graph()) == []


def test_no_module_imports_a_floor_above_its_own() -> None:
    upward = [
        f"{module} ({FLOORS[floor_of(module)][0]}) imports {other} ({FLOORS[floor_of(other)][0]})"
        for module, others in graph().items()
        for other in sorted(others)
        if floor_of(other) > floor_of(module)
    ]
    assert upward == []


def test_answering_sees_the_index_only_through_the_library_protocol() -> None:
    reaching = {m: sorted(o for o in others if o.startswith("rag.index")) for m, others in graph().items()}
    assert {m: o for m, o in reaching.items() if m.startswith("rag.answer") and o} == {}


def test_nothing_at_run_time_imports_training() -> None:
    importers = {m for m, others in graph().items() for o in others if o.startswith("rag.training")}
    assert importers - {"rag.frontends.cli"} == {m for m in importers if m.startswith("rag.training")}


@pytest.mark.parametrize(
    ("edges", "expected"),
    [({"a": {"b"}, "b": {"a"}, "c": set()}, [["a", "b"]]), ({"a": {"b"}, "b": set()}, [])],
)
def test_the_cycle_finder_finds_cycles(edges: dict[str, set[str]], expected: list[list[str]]) -> None:
    assert cycles(edges) == expected


def test_the_import_reader_sees_lazy_and_type_checking_imports(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from rag.engine import Engine\n"
        "def f():\n    from rag.index import store\n    import rag.text\n"
    )
    assert imports(source, project_modules()) == {"rag.engine", "rag.index.store", "rag.text"}
