"""Fuzz every target (or some) for a bounded time, then minimise each corpus in place.

``python -m fuzz.campaign [--seconds 180] [NAME ...]``: for each target, atheris
runs from the stored corpus into a scratch directory; then libFuzzer's merge
keeps the smallest set of inputs (old and new) with the same coverage, and that
set replaces ``fuzz/corpus/NAME``. A crash stops the campaign and leaves its
input in ``fuzz/artifacts/``.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from fuzz.targets import TARGETS

HERE = Path(__file__).resolve().parent
MAX_LEN = {"preconditions": 512, "core": 512, "accept_encoding": 256}


def fuzz(name: str, seconds: int) -> None:
    corpus = HERE / "corpus" / name
    artifacts = HERE / "artifacts"
    artifacts.mkdir(exist_ok=True)
    corpus.mkdir(parents=True, exist_ok=True)
    run = [sys.executable, "-m", "fuzz.run", name]
    options = [
        f"-max_len={MAX_LEN.get(name, 200)}",
        "-timeout=10",  # a slow input (a regex backtracking) is a finding too
        f"-artifact_prefix={artifacts}/{name}-",
    ]
    with tempfile.TemporaryDirectory() as scratch:
        found = Path(scratch) / "found"
        merged = Path(scratch) / "merged"
        found.mkdir()
        merged.mkdir()
        started = subprocess.run(
            [*run, *options, f"-max_total_time={seconds}", "-print_final_stats=1", found, corpus],
            cwd=HERE.parent,
        )
        if started.returncode != 0:
            sys.exit(f"{name}: the fuzzer stopped with {started.returncode}; see {artifacts}")
        subprocess.run(
            [*run, *options, "-merge=1", merged, corpus, found], check=True, cwd=HERE.parent
        )
        if not any(merged.iterdir()):
            sys.exit(f"{name}: the merge kept nothing; the corpus is left as it was")
        shutil.rmtree(corpus)
        shutil.copytree(merged, corpus)
    files = list(corpus.iterdir())
    size = sum(f.stat().st_size for f in files)
    print(f"{name}: {len(files)} inputs, {size} bytes after minimising", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=int, default=180, help="fuzzing time per target")
    parser.add_argument("names", nargs="*", choices=[[], *TARGETS], help="targets (default: all)")
    args = parser.parse_args()
    for name in args.names or TARGETS:
        fuzz(name, args.seconds)


if __name__ == "__main__":
    main()
