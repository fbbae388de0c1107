"""Every code block of the README and of docs/, run as written (parsed with sybil).

Collected: every ``*.md`` at the repository's root and under ``docs/`` (its subfolders
included), so a block added later is run without touching this file. Each fenced block is
a test, named ``FILE:LINE``. The blocks of one file run in order, in one namespace and one
temporary working directory (a later block may use an earlier one's names, as a reader
would); running one of them alone runs those before it first.

How a block is run, by its language:

* ``python``: executed (``exec``) in the file's namespace; a block of ``>>>`` lines is a
  doctest, its outputs compared.
* ``sh`` and ``bash``: run by ``bash -euo pipefail`` in the working directory, with this Python's
  ``bin`` first on ``PATH`` (``python``, ``sitemap-middleware``), 120 s at most.
* ``nginx``: checked by ``nginx -t``, with the ports and paths replaced as
  ``tests/docs_support.py:nginx_config`` does (the only lines that may differ); what the
  configuration does is tested by ``tests/e2e/test_nginx.py`` on that same block.
* ``vcl``: compiled by ``varnishd -C`` (the xkey module of varnish-modules installed), with
  the ports and the probe's host replaced as ``tests/docs_support.py:vcl_config`` does; what
  it does is tested by ``tests/e2e/test_varnish.py`` on that same block.
* any other language: a failure, unless skipped (below).

Markdown conventions, in HTML comments (invisible once rendered):

* ``<!-- skip: next "why" -->`` before a block: not run; the reason is the test's skip
  reason. ``<!-- skip: start "why" -->`` ... ``<!-- skip: end -->`` for several. Skip only
  what truly needs something absent (the internet, a long benchmark, a fresh install); a
  snippet that is wrong is fixed in the Markdown.
* ``<!-- invisible-code-block: python`` ... ``-->``: Python run like a visible block, for
  what a snippet assumes (``from tests.docs_support import Article, seed``, an ``app``)
  or to check what it did (``assert fetch(app, "/sitemap.xml").status == 200``). No ``--``
  inside the comment.
* ``<!-- write: PATH -->`` before a ``python`` block: the block is not executed in this
  process but written to ``PATH`` below the working directory, as a module of a project
  that a later (invisible) block runs, e.g. a Django ``wsgi.py``: Django is configured
  once per process, so its projects run in their own (``docs_support.django_get``).
* ``<!-- clear-namespace -->``: start a fresh namespace.

Helpers for invisible blocks are in ``tests/docs_support.py``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from unittest import SkipTest

import pytest
from sqlalchemy import Connection, Engine, event
from sybil import Document, Example, Region, Sybil
from sybil.evaluators.doctest import DocTestEvaluator
from sybil.evaluators.python import PythonEvaluator
from sybil.parsers.abstract.lexers import LexerCollection
from sybil.parsers.markdown import (
    ClearNamespaceParser,
    CodeBlockParser,
    PythonCodeBlockParser,
    SkipParser,
)
from sybil.parsers.markdown.lexers import DirectiveInHTMLCommentLexer, RawFencedCodeBlockLexer

from .docs_support import nginx_config, vcl_config

ROOT = Path(__file__).resolve().parents[1]
SHELLS = ("sh", "bash")
RUN = {"python", *SHELLS, "nginx", "vcl"}
WRITE = "__docs_write__"  # namespace key: the path the next python block is written to


def markdown_files() -> list[Path]:
    return sorted({*ROOT.glob("*.md"), *ROOT.glob("docs/**/*.md")})


class WriteParser:
    """``<!-- write: PATH -->``: the next python block goes to a file, not to ``exec``."""

    def __init__(self) -> None:
        self.lexers = LexerCollection([DirectiveInHTMLCommentLexer("write", r"\S+")])

    def __call__(self, document: Document) -> Iterable[Region]:
        for lexed in self.lexers(document):
            yield Region(lexed.start, lexed.end, lexed.lexemes["arguments"], self.evaluate)

    @staticmethod
    def evaluate(example: Example) -> None:
        example.namespace[WRITE] = str(example.parsed)


def run_python(example: Example) -> None:
    __tracebackhide__ = True
    target = example.namespace.pop(WRITE, None)
    if target is None:
        PythonEvaluator()(example)
        return
    path = Path(target)
    assert not path.is_absolute() and ".." not in path.parts, f"write: {target} must be below"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(str(example.parsed))


def run_shell(example: Example) -> None:
    __tracebackhide__ = True
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    # A user's shell has no Django settings of its own: the tests' (set by an in-process
    # Django test earlier in this process) would win over the project's setdefault().
    env.pop("DJANGO_SETTINGS_MODULE", None)
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", str(example.parsed)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"exit status {done.returncode}:\n{done.stdout}{done.stderr}"


def check_nginx(example: Example) -> None:
    __tracebackhide__ = True
    nginx = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/sbin")
    if nginx is None:
        raise SkipTest("nginx is not installed")
    here = Path.cwd()
    config = nginx_config(
        str(example.parsed), cache=here / "nginx-cache", replicas=(18001, 18002), listen=18080
    )
    (here / "nginx.conf").write_text(
        f"pid {here}/nginx.pid;\nevents {{ }}\nhttp {{\n{config}\n}}\n"
    )
    done = subprocess.run(
        [nginx, "-t", "-p", str(here), "-c", str(here / "nginx.conf"), "-e", "stderr"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr


def check_vcl(example: Example) -> None:
    __tracebackhide__ = True
    varnishd = shutil.which("varnishd") or shutil.which("varnishd", path="/usr/sbin:/sbin")
    if varnishd is None:
        raise SkipTest("Varnish is not installed")
    here = Path.cwd()
    config = vcl_config(str(example.parsed), replicas=(18001, 18002), probe_host="example.com")
    (here / "sitemap.vcl").write_text(config)
    done = subprocess.run(
        # -j none: run as the user the tests run as (root drops to varnish users otherwise,
        # who cannot read a pytest temporary folder).
        [
            varnishd,
            "-C",
            "-j",
            "none",
            "-n",
            str(here / "varnish"),
            "-f",
            str(here / "sitemap.vcl"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if "Could not find VMOD xkey" in done.stderr:
        raise SkipTest("the xkey module (varnish-modules) is not installed")
    assert done.returncode == 0, done.stderr[-4000:]


class PythonBlocks(PythonCodeBlockParser):
    """Python blocks: a doctest (``>>>``) is checked as one, any other block is executed or
    written (``<!-- write: PATH -->``)."""

    def __init__(self) -> None:
        super().__init__()
        self.codeblock_parser = CodeBlockParser("python", run_python)


class OtherBlocks:
    """Any fenced block in a language not run here: a failure unless skipped."""

    def __init__(self) -> None:
        info = re.compile(r"(?P<language>[^\n]*)$\n", re.MULTILINE)
        self.lexer = RawFencedCodeBlockLexer(info_pattern=info)

    def __call__(self, document: Document) -> Iterable[Region]:
        for region in self.lexer(document):
            language = str(region.lexemes["language"]).strip()
            if language not in RUN:
                yield Region(region.start, region.end, language, self.evaluate)

    @staticmethod
    def evaluate(example: Example) -> None:
        raise AssertionError(
            f"a {example.parsed or 'plain'!r} block is not run by tests/test_docs.py: give it "
            'a language that is, or put <!-- skip: next "why" --> before it'
        )


SYBIL = Sybil(
    parsers=[
        PythonBlocks(),
        *(CodeBlockParser(shell, run_shell) for shell in SHELLS),
        CodeBlockParser("nginx", check_nginx),
        CodeBlockParser("vcl", check_vcl),
        OtherBlocks(),
        SkipParser(),
        ClearNamespaceParser(),
        WriteParser(),
    ],
)


@dataclass
class Run:
    """One Markdown file's blocks and how far they have run."""

    document: Document
    examples: list[Example]
    done: int = 0
    failed: list[int] = field(default_factory=list)
    workdir: Path | None = None


def _parse(path: Path) -> Run:
    document = SYBIL.parse(path)
    name = path.relative_to(ROOT).with_suffix("").as_posix()
    document.namespace["__name__"] = "docs_" + re.sub(r"\W", "_", name.lower())
    return Run(document, list(document.examples()))


BLOCKS = {run_python, run_shell, check_nginx, check_vcl, OtherBlocks.evaluate}
RUNS = {path: _parse(path) for path in markdown_files()}
CASES = [
    pytest.param(path, index, id=f"{path.relative_to(ROOT)}:{example.line}")
    for path, run in RUNS.items()
    for index, example in enumerate(run.examples)
    if example.region.evaluator in BLOCKS or isinstance(example.region.evaluator, DocTestEvaluator)
]


@pytest.fixture(scope="module", autouse=True)
def engines() -> Iterator[None]:
    """Every sync engine the blocks connect with, disposed once they have all run: a snippet
    rebinds ``engine`` freely, and a pool left to the garbage collector leaves its SQLite
    connections unclosed (a ``ResourceWarning`` on Python 3.13)."""
    seen: set[Engine] = set()

    def connected(connection: Connection) -> None:
        if not connection.engine.dialect.is_async:
            seen.add(connection.engine)

    event.listen(Engine, "engine_connect", connected)
    try:
        yield
    finally:
        event.remove(Engine, "engine_connect", connected)
        for engine in seen:
            engine.dispose()


@pytest.fixture
def workdir(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    path: Path = request.node.callspec.params["path"]
    run = RUNS[path]
    if run.workdir is None:
        run.workdir = tmp_path_factory.mktemp(path.stem.lower())
        run.document.namespace["workdir"] = run.workdir
    previous = Path.cwd()
    os.chdir(run.workdir)
    try:
        yield
    finally:
        os.chdir(previous)


def _evaluate(example: Example) -> None:
    __tracebackhide__ = True
    example.evaluate()


@pytest.mark.usefixtures("workdir")
@pytest.mark.parametrize(("path", "index"), CASES)
def test_block(path: Path, index: int) -> None:
    run = RUNS[path]
    while run.done < index:  # the blocks before it (skip directives included), if not yet run
        earlier = run.examples[run.done]
        run.done += 1
        try:
            _evaluate(earlier)
        except SkipTest:
            pass
        except Exception:
            run.failed.append(earlier.line)
    if run.done == index:
        run.done += 1
    try:
        _evaluate(run.examples[index])
    except SkipTest:
        raise
    except Exception as exc:
        run.failed.append(run.examples[index].line)
        earlier_failures = [line for line in run.failed if line < run.examples[index].line]
        if earlier_failures:
            exc.add_note(f"blocks before it failed (lines {earlier_failures})")
        raise


def test_every_markdown_file_is_collected() -> None:
    """The README and the pages under docs/ (subfolders too) are all here, with their blocks:
    the README's own, and the guides' that moved out of it."""
    names = {path.relative_to(ROOT).as_posix() for path in RUNS}
    assert {"README.md", "docs/deployment.md", "docs/reference/index.md"} <= names
    blocks = Counter(case.values[0] for case in CASES)
    assert blocks[ROOT / "README.md"] > 10
    assert blocks[ROOT / "docs" / "getting-started.md"] > 5
    assert sum(blocks.values()) > 60
