"""Check the built distributions against the tracked tree: the wheel holds exactly the package
(every file git tracks under src/sitemap_middleware, byte for byte, and nothing else but its
metadata and the license), the sdist every file git tracks under src/ and nothing beside the
build files.

Usage: python .ci/check_dists.py dist/NAME.whl dist/NAME.tar.gz (from the checkout's root).
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path, PurePosixPath

PACKAGE = "sitemap_middleware"
# What an sdist holds beside src/: the build's own files (setuptools writes PKG-INFO,
# setup.cfg and the egg-info).
SDIST_TOP = {"PKG-INFO", "pyproject.toml", "setup.cfg", "README.md", "LICENSE", "MANIFEST.in"}


def tracked(under: str) -> dict[str, bytes]:
    """Every file git tracks under ``under``, with its bytes in the work tree."""
    names = subprocess.run(
        ["git", "ls-files", "-z", "--", under], check=True, capture_output=True
    ).stdout.split(b"\0")
    return {name.decode(): Path(name.decode()).read_bytes() for name in names if name}


def compare(kind: str, found: dict[str, bytes], expected: dict[str, bytes]) -> list[str]:
    problems = [f"{kind}: missing {name}" for name in sorted(expected.keys() - found.keys())]
    problems += [
        f"{kind}: {name} differs from the tracked file"
        for name in sorted(expected.keys() & found.keys())
        if found[name] != expected[name]
    ]
    return problems


def check_wheel(path: Path) -> list[str]:
    with zipfile.ZipFile(path) as wheel:
        files = {info.filename: wheel.read(info) for info in wheel.infolist() if not info.is_dir()}
    dist_info = next(name.split("/")[0] for name in files if ".dist-info/" in name)
    package = {name: data for name, data in files.items() if name.startswith(f"{PACKAGE}/")}
    expected = {
        str(PurePosixPath(name).relative_to("src")): data
        for name, data in tracked(f"src/{PACKAGE}").items()
    }
    problems = compare("wheel", package, expected)
    problems += [f"wheel: untracked {name}" for name in sorted(package.keys() - expected.keys())]
    problems += [
        f"wheel: {name} is neither the package nor its metadata"
        for name in sorted(files)
        if not name.startswith((f"{PACKAGE}/", f"{dist_info}/"))
    ]
    if files.get(f"{dist_info}/licenses/LICENSE") != Path("LICENSE").read_bytes():
        problems.append(f"wheel: {dist_info}/licenses/LICENSE is not the LICENSE file")
    return problems


def check_sdist(path: Path) -> list[str]:
    with tarfile.open(path) as sdist:
        members = [member for member in sdist.getmembers() if member.isfile()]
        root = members[0].name.split("/")[0]
        files = {
            member.name.removeprefix(f"{root}/"): sdist.extractfile(member).read()  # type: ignore[union-attr]
            for member in members
        }
    expected = tracked("src") | {"LICENSE": Path("LICENSE").read_bytes()}
    problems = compare("sdist", files, expected)
    problems += [
        f"sdist: {name} is neither tracked under src/ nor a build file"
        for name in sorted(files.keys() - expected.keys() - SDIST_TOP)
        if not name.startswith(f"src/{PACKAGE}.egg-info/")
    ]
    return problems


def main(wheel: str, sdist: str) -> int:
    problems = check_wheel(Path(wheel)) + check_sdist(Path(sdist))
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print(f"{wheel} and {sdist}: every tracked file of the package, nothing else")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
