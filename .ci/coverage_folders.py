"""Branch coverage per folder of the package, and in total, from ``coverage json``'s report.

``coverage report`` lists files; the layers are folders (docs/architecture.md, "The tree"),
so their sums are printed here: statements and branches covered, as coverage counts them.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import PurePosixPath

PACKAGE = "sitemap_middleware"
FIELDS = ("covered_lines", "num_statements", "covered_branches", "num_branches")


def folder(path: str) -> str:
    """The layer a file belongs to: its folder below the package (root modules: ``.``),
    ``sources/sqlalchemy`` and ``contrib/*`` one level deeper."""
    parts = PurePosixPath(path.replace("\\", "/")).parts
    last = len(parts) - 1 - parts[::-1].index(PACKAGE)  # a checkout may bear the same name
    inner = parts[last + 1 : -1]
    depth = 2 if inner[:1] in (("contrib",), ("sources",)) and len(inner) > 1 else 1
    return "/".join(inner[:depth]) or "."


def percent(sums: dict[str, int]) -> float:
    total = sums["num_statements"] + sums["num_branches"]
    covered = sums["covered_lines"] + sums["covered_branches"]
    return 100.0 * covered / total if total else 100.0


def main(report: str) -> None:
    with open(report, encoding="utf-8") as file:
        files = json.load(file)["files"]
    folders: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(FIELDS, 0))
    total = dict.fromkeys(FIELDS, 0)
    for path, measured in files.items():
        for name in FIELDS:
            folders[folder(path)][name] += measured["summary"][name]
            total[name] += measured["summary"][name]
    print(f"{'folder':<22}{'statements':>12}{'branches':>12}{'cover':>9}")
    for name, sums in sorted(folders.items()):
        lines = f"{sums['covered_lines']}/{sums['num_statements']}"
        branches = f"{sums['covered_branches']}/{sums['num_branches']}"
        print(f"{name:<22}{lines:>12}{branches:>12}{percent(sums):>8.1f}%")
    lines = f"{total['covered_lines']}/{total['num_statements']}"
    branches = f"{total['covered_branches']}/{total['num_branches']}"
    print(f"{'total':<22}{lines:>12}{branches:>12}{percent(total):>8.1f}%")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "coverage.json")
