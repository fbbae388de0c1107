"""The package's shape: modules import each other without a cycle, the protocol's
namespaces and limits are written in one module only (:mod:`sitemap_middleware.core.spec`),
and what each install promises imports only what that install brings.

Read from the source with ``ast``. For the cycles every import counts, those under
``TYPE_CHECKING`` and those inside functions too, since each is a dependency a reader has
to follow. For the installs, only what runs on import counts.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

import sitemap_middleware
from sitemap_middleware.core import spec as protocol

PACKAGE = Path(sitemap_middleware.__file__).parent
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


@functools.cache
def _tree(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once for all the tests that read it."""
    return ast.parse(path.read_text(encoding="utf-8"))


def _imported(module: str, path: Path, nodes: Iterable[ast.AST] | None = None) -> Iterator[str]:
    """The modules that ``module`` imports by name (of ``nodes``; default: every import)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    if nodes is None:
        nodes = ast.walk(_tree(path))
    for node in nodes:
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


@functools.cache
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
    assert f"{NAME}.output.xml" in edges[f"{NAME}.output.extensions"]  # from .xml import ...
    assert f"{NAME}.output.html" in edges[f"{NAME}.core.sitemap"]  # from . import html
    assert f"{NAME}.core.spec" in edges[f"{NAME}.cli.values"]  # from ..protocol import ...
    assert f"{NAME}.check" not in edges[f"{NAME}.cli.main"]
    assert f"{NAME}.cli.check" in edges[f"{NAME}.cli.main"]  # inside a function
    assert edges[f"{NAME}.core.spec"] == set()


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
    assert holders == [f"{NAME}.core.spec"]


def _number_literals(path: Path) -> Iterator[int]:
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Constant) and type(node.value) is int:
            yield node.value


@pytest.mark.parametrize("value", NUMBERS_DECLARED_ONCE)
def test_limits_in_protocol_only(value: int) -> None:
    holders = [name for name, path in MODULES.items() if value in set(_number_literals(path))]
    assert holders == [f"{NAME}.core.spec"]


# Still spelling the changefreq words out: the SQL form of the list, to be built from
# protocol.CHANGEFREQS (listed here so that the test fails once it is, and the entry goes).


def test_changefreqs_in_protocol_only() -> None:
    # The seven words in a row, in any quoting: "always", "hourly", ... or 'always','hourly'.
    listed = re.compile(r"always\W+hourly\W+daily\W+weekly\W+monthly\W+yearly\W+never")
    holders = [name for name, path in MODULES.items() if listed.search(path.read_text("utf-8"))]
    assert holders == [f"{NAME}.core.spec"]


# The protocol's lists of names: the fields of an entry and of a video, the retired image
# fields, the changefreq words. A literal tuple, list or set holding a run of two or more
# of one of them, in its order, is a second copy.
NAME_LISTS = [
    protocol.URL_FIELDS,
    protocol.SITEMAP_FIELDS,
    protocol.VIDEO_FIELDS,
    protocol.VIDEO_PLAYABLE,
    protocol.RETIRED_IMAGE_FIELDS,
    protocol.CHANGEFREQS,
]


def _copies(path: Path, names: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    for node in ast.walk(_tree(path)):
        if not isinstance(node, ast.Tuple | ast.List | ast.Set) or len(node.elts) < 2:
            continue
        values = [e.value for e in node.elts if isinstance(e, ast.Constant)]
        if len(values) == len(node.elts) and all(type(v) is str for v in values):
            run = tuple(values)
            if any(names[i : i + len(run)] == run for i in range(len(names))):
                yield run


@pytest.mark.parametrize("names", NAME_LISTS, ids=lambda names: names[0])
def test_name_lists_in_protocol_only(names: tuple[str, ...]) -> None:
    holders = [name for name, path in MODULES.items() if any(_copies(path, names))]
    assert holders == [f"{NAME}.core.spec"]


def test_the_copies_finder_finds_one(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('ORDER = ("lastmod", "changefreq")\nOTHER = ["loc", "priority"]\n')
    assert list(_copies(module, protocol.URL_FIELDS)) == [("lastmod", "changefreq")]


# The CLI's limits: a number of the protocol spelt out in the command line (its --help
# prose aside) is a copy that can drift from the writer's.
CLI_NUMBERS = [
    protocol.MAX_URLS,
    protocol.MAX_CHILDREN,
    protocol.MAX_BYTES,
    protocol.MAX_LOC_LENGTH,
    protocol.XSD_MAX_LOC_LENGTH,
    protocol.MAX_IMAGES,
    protocol.MAX_NEWS_PER_SITEMAP,
    protocol.INDEXNOW_MAX_URLS,
]


@pytest.mark.parametrize("value", CLI_NUMBERS)
def test_the_cli_spells_no_limit(value: int) -> None:
    cli = [name for name in MODULES if name.startswith(f"{NAME}.cli.")]
    assert [name for name in cli if value in set(_number_literals(MODULES[name]))] == []


def test_the_cli_reads_dates_through_core_dates() -> None:
    # One W3C Datetime reader (core.dates.parse_w3c) for the writer and check: no other.
    for name, path in MODULES.items():
        if name.startswith(f"{NAME}.cli."):
            text = path.read_text("utf-8")
            assert "fromisoformat" not in text and "strptime" not in text, name
    assert f"{NAME}.core.dates" in graph()[f"{NAME}.cli.values"]


# What runs on import. Each install the README names promises some modules: they may
# import, when they are imported, the standard library, the declared dependency (anyio)
# and what that install brings; anything else they import only where it is used, so
# that the error of a missing extra comes at that point and names the extra.


def _runs_on_import(body: Iterable[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of ``body`` that run when the module is imported: not the bodies of
    functions, nor those under ``if TYPE_CHECKING``."""
    for node in body:
        yield node
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from _runs_on_import(node.orelse)
            continue
        for field in ("body", "orelse", "finalbody"):
            yield from _runs_on_import(getattr(node, field, ()))
        for handler in getattr(node, "handlers", ()):
            yield from _runs_on_import(handler.body)


@functools.cache
def on_import() -> dict[str, set[str]]:
    """Module -> the modules it imports when it is imported."""
    edges = {}
    for module, path in MODULES.items():
        edges[module] = set(_imported(module, path, _runs_on_import(_tree(path).body)))
    return edges


def loaded_with(entry: str) -> dict[str, set[str]]:
    """The distributions' top-level modules that importing ``entry`` imports, each with the
    package's modules that import it (the package's ``__init__`` of each module included,
    which Python runs first)."""
    found: dict[str, set[str]] = {}
    seen: set[str] = set()
    todo = [entry]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        parts = module.split(".")
        todo += [".".join(parts[:n]) for n in range(1, len(parts))]
        for name in on_import()[module]:
            if name in MODULES:
                todo.append(name)
            elif name and not name.startswith(NAME + "."):
                found.setdefault(name.partition(".")[0], set()).add(module)
    return found


BASE = {"anyio"}
CLI = {"httpx", "lxml", "protego"}
SQLALCHEMY = {"sqlalchemy"}
DJANGO = {"django", "asgiref", *CLI}  # asgiref: Django's own dependency
INDEXNOW = {"httpx", "sqlalchemy"}
# Module -> the extra that must suffice to import it (pyproject.toml says which
# distributions each one installs; tests/e2e/test_install.py installs them).
PROMISES = {
    NAME: set(),  # serving lists, generators and custom sources
    f"{NAME}.testing": set(),  # the in-process clients, for any install's tests
    f"{NAME}.cli": set(),  # sitemap-middleware and every COMMAND --help
    f"{NAME}.cli.main": set(),
    f"{NAME}.cli.render": set(),  # render needs only the application
    f"{NAME}.cli.routes": set(),  # routes too
    f"{NAME}.cli.check": CLI,
    f"{NAME}.cli.app_transport": CLI,
    f"{NAME}.sources.sqlalchemy.source": SQLALCHEMY,
    f"{NAME}.sources.sqlalchemy.async_source": SQLALCHEMY,
    f"{NAME}.contrib.varnish": set(),  # the standard library's http.client only
    f"{NAME}.contrib.indexnow": INDEXNOW,
    f"{NAME}.contrib.indexnow.background": INDEXNOW,
    f"{NAME}.cli.indexnow": INDEXNOW,
    f"{NAME}.contrib.django": DJANGO,  # adopted Sitemap classes and the middleware: no SQLAlchemy
    f"{NAME}.contrib.django.apps": DJANGO,
    f"{NAME}.contrib.django.checks": DJANGO,
    f"{NAME}.contrib.django.project": DJANGO,
    f"{NAME}.contrib.django.management.commands.sitemap_render": DJANGO,
    f"{NAME}.contrib.django.management.commands.sitemap_check": DJANGO,
    f"{NAME}.contrib.django.management.commands.sitemap_routes": DJANGO,
    f"{NAME}.contrib.django.routes": DJANGO,
    f"{NAME}.contrib.django.sources": DJANGO | SQLALCHEMY,  # DjangoSource compiles with SQLAlchemy
}


def test_the_import_time_walker_sees_what_runs() -> None:
    assert loaded_with(f"{NAME}.sources.sqlalchemy.aggregates")["sqlalchemy"] == {
        f"{NAME}.sources.sqlalchemy.aggregates",
        f"{NAME}.sources.sqlalchemy.stored_dates",
    }
    # "if TYPE_CHECKING:" and function bodies do not run on import; "try:" does.
    assert f"{NAME}.cli.audit" not in on_import()[f"{NAME}.cli.check_options"]
    assert f"{NAME}.cli.audit" in graph()[f"{NAME}.cli.check_options"]
    assert f"{NAME}.cli.check" not in on_import()[f"{NAME}.cli.main"]
    assert "httpx" in loaded_with(f"{NAME}.cli.audit")
    assert f"{NAME}.sources.sqlalchemy.source" in on_import()[f"{NAME}.contrib.django.sources"]
    assert loaded_with(f"{NAME}.sources.sqlalchemy.source")["sqlalchemy"] >= {
        f"{NAME}.sources.sqlalchemy.source",  # in "try:"
        f"{NAME}.sources.sqlalchemy.aggregates",
    }
    # A module's packages run first: the django package's imports count for its commands.
    assert loaded_with(f"{NAME}.contrib.django.management.commands.sitemap_check")["django"] >= {
        f"{NAME}.contrib.django.adopted",
        f"{NAME}.contrib.django.management.commands.sitemap_check",
    }


@pytest.mark.parametrize("entry", sorted(PROMISES))
def test_imports_only_what_its_install_brings(entry: str) -> None:
    allowed = set(sys.stdlib_module_names) | BASE | PROMISES[entry]
    beyond = {name: sorted(by) for name, by in loaded_with(entry).items() if name not in allowed}
    assert beyond == {}


def test_every_promise_names_a_module() -> None:
    assert set(PROMISES) <= set(MODULES)


# The layers of docs/architecture.md ("The tree"): a folder never imports the folders
# that build on it. Two crossings are the design: the ASGI lifespan runs the IndexNow
# task of ``indexnow.every`` (imported when that setting is given), and Django's
# management commands are the command line's commands in ``manage.py``.
BUILT_ON = {
    "core": ("servers", "contrib", "cli"),
    "state": ("servers", "contrib", "cli"),
    "output": ("servers", "contrib", "cli"),
    "sources": ("servers", "contrib", "cli"),
    "servers": ("contrib.django", "cli"),
    "contrib.indexnow": ("contrib.django", "cli"),
    "contrib.django": ("cli",),
}
COMMANDS = f"{NAME}.contrib.django.management"


def _in(module: str, folder: str) -> bool:
    return module == f"{NAME}.{folder}" or module.startswith(f"{NAME}.{folder}.")


@pytest.mark.parametrize("folder", sorted(BUILT_ON))
def test_a_layer_imports_no_layer_built_on_it(folder: str) -> None:
    edges = graph()
    wrong = sorted(
        f"{module} -> {target}"
        for module, targets in edges.items()
        if _in(module, folder) and not module.startswith(COMMANDS)
        for target in targets
        if any(_in(target, above) for above in BUILT_ON[folder])
    )
    assert wrong == []


def test_the_testing_clients_stand_alone() -> None:
    """``sitemap_middleware.testing`` drives any ASGI or WSGI app: it imports nothing of the
    package (importing it loads only the package's ``__init__``)."""
    assert graph()[f"{NAME}.testing"] == set()
    assert f"{NAME}.testing" in graph()[f"{NAME}.cli.render"]


def test_the_root_holds_the_api_and_one_folder_per_layer() -> None:
    entries = sorted(
        path.name
        for path in PACKAGE.iterdir()
        if path.name not in ("__pycache__", "py.typed") and not path.name.endswith(".pyc")
    )
    folders = {"core", "state", "output", "sources", "servers", "contrib", "cli"}
    assert set(entries) - folders <= {"__init__.py", "settings.py", "errors.py", "testing.py"}
    assert folders <= {path.name for path in PACKAGE.iterdir() if path.is_dir()}
