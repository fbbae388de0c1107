"""The fuzzers' corpora, replayed as regression tests (no atheris needed).

Every input kept in ``fuzz/corpus/<target>/`` goes through its target again;
the targets check invariants (round trips, scope, XSD types, the RFC 9110
decision), so an input that once reached a corner case keeps guarding it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzz.targets import TARGETS

CORPUS = Path(__file__).resolve().parents[1] / "fuzz" / "corpus"


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_corpus_replays_cleanly(name: str) -> None:
    inputs = sorted((CORPUS / name).iterdir())
    assert inputs, f"fuzz/corpus/{name} is empty"
    for path in inputs:
        try:
            TARGETS[name](path.read_bytes())
        except Exception as exc:
            raise AssertionError(f"fuzz/corpus/{name}/{path.name}: {exc!r}") from exc


def test_every_corpus_has_a_target() -> None:
    assert sorted(p.name for p in CORPUS.iterdir()) == sorted(TARGETS)
