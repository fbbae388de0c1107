"""The package's shape: modules import each other without a cycle, and the protocol's
namespaces and limits are written in one module only (:mod:`sitemap_middleware.protocol`).

Read from the source with ``ast``: every import counts, those under ``TYPE_CHECKING`` and
those inside functions too, since each is a dependency a reader has to follow.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from sitemap_middleware import protocol

PACKAGE = Path(protocol.__file__).parent
NAME = PACKAGE.name


def _modules() -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its own name)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = [NAME, *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imported(module: str, path: Path) -> Iterator[str]:
    """The package's modules that ``module`` imports by name."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            yield base
            # "from . import html" names a module, "from .xml import escape" an attribute.
            yield from (f"{base}.{alias.name}" for alias in node.names)


def graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports (its own package's ``__init__`` left out:
    Python runs that first anyway, and it re-exports what it names)."""
    edges: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        targets = {name for name in _imported(module, path) if name in MODULES}
        edges[module] = {t for t in targets if t != module and not module.startswith(t + ".")}
    return edges


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path of modules (first and last the same), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    trail: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        trail.append(node)
        for target in sorted(edges[node]):
            if state.get(target) == 1:
                return [*trail[trail.index(target) :], target]
            if target not in state and (cycle := visit(target)) is not None:
                return cycle
        trail.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (cycle := visit(node)) is not None:
            return cycle
    return None


def test_the_walker_sees_the_imports_it_must() -> None:
    edges = graph()
    assert f"{NAME}.xml" in edges[f"{NAME}.extensions"]  # from .xml import ...
    assert f"{NAME}.html" in edges[f"{NAME}.core"]  # from . import html
    assert f"{NAME}.protocol" in edges[f"{NAME}.cli.values"]  # from ..protocol import ...
    assert f"{NAME}.check" not in edges[f"{NAME}.cli.main"]
    assert f"{NAME}.cli.check" in edges[f"{NAME}.cli.main"]  # inside a function
    assert edges[f"{NAME}.protocol"] == set()


def test_find_cycle_finds_one() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_no_import_cycle() -> None:
    assert find_cycle(graph()) is None


# Values that only protocol.py may spell out. A module needing one imports it.
DECLARED_ONCE = [
    protocol.SITEMAP_NS,
    protocol.XSI_NS,
    protocol.XHTML_NS,
    protocol.IMAGE_NS,
    protocol.VIDEO_NS,
    protocol.NEWS_NS,
    protocol.HREFLANG.pattern,
    protocol.NEWS_LANGUAGE.pattern,
    protocol.ENTITY_TAG.pattern,
]
# Numbers, as literals in code (in any spelling: 50000, 50_000).
NUMBERS_DECLARED_ONCE = [
    protocol.MAX_URLS,
    protocol.MAX_BYTES,
    protocol.MAX_LOC_LENGTH,
]


@pytest.mark.parametrize("value", DECLARED_ONCE)
def test_written_in_protocol_only(value: str) -> None:
    holders = [name for name, path in MODULES.items() if value in path.read_text("utf-8")]
    assert holders == [f"{NAME}.protocol"]


def _number_literals(path: Path) -> Iterator[int]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and type(node.value) is int:
            yield node.value


@pytest.mark.parametrize("value", NUMBERS_DECLARED_ONCE)
def test_limits_in_protocol_only(value: int) -> None:
    holders = [name for name, path in MODULES.items() if value in set(_number_literals(path))]
    assert holders == [f"{NAME}.protocol"]


# Still spelling the changefreq words out: the SQL form of the list, to be built from
# protocol.CHANGEFREQS (listed here so that the test fails once it is, and the entry goes).


def test_changefreqs_in_protocol_only() -> None:
    # The seven words in a row, in any quoting: "always", "hourly", ... or 'always','hourly'.
    listed = re.compile(r"always\W+hourly\W+daily\W+weekly\W+monthly\W+yearly\W+never")
    holders = [name for name, path in MODULES.items() if listed.search(path.read_text("utf-8"))]
    assert holders == [f"{NAME}.protocol"]
