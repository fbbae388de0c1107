"""Files written all-or-nothing: each goes to a temporary file beside its target, and only
when every one of them is complete are they moved into place (``os.replace``), the
given last ones (the root sitemaps) after all others, so a server or CDN syncing the
folder never sees an index that lists a child not yet there. On failure every
temporary file (and every folder made for them) is removed; files already in the
folder are left as they were.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import IO


class UnsafePath(ValueError):
    """A document path that would leave the output folder."""


class Staging:
    def __init__(self, out: Path) -> None:
        self.out = out
        self._staged: dict[Path, Path] = {}  # target -> temporary file
        self._made: list[Path] = []

    def target(self, path: str) -> Path:
        """The file for an application path such as ``/sitemap-articles-1.xml``."""
        segments = path.lstrip("/").split("/")
        if "?" in path or any(s in ("", ".", "..") or "\\" in s or "\0" in s for s in segments):
            raise UnsafePath(f"{path!r} cannot be written below {self.out}")
        return self.out.joinpath(*segments)

    def open(self, target: Path) -> IO[bytes]:
        """A new temporary file that :meth:`commit` will move to ``target``."""
        self._mkdir(target.parent)
        handle = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed by the caller
            mode="wb", dir=target.parent, prefix=f".{target.name}.", suffix=".tmp", delete=False
        )
        previous = self._staged.get(target)
        if previous is not None:
            previous.unlink(missing_ok=True)
        self._staged[target] = Path(handle.name)
        return handle

    def temporary(self, target: Path) -> Path:
        """Where ``target`` is staged."""
        return self._staged[target]

    def commit(self, last: set[Path]) -> list[Path]:
        """Move every staged file into place, ``last`` ones at the end; the targets, in order."""
        order = [t for t in self._staged if t not in last] + [t for t in self._staged if t in last]
        mode = 0o666 & ~_umask()  # NamedTemporaryFile makes 0600 files; these are public
        for target in order:
            temporary = self._staged[target]
            with temporary.open("rb") as handle:
                os.fsync(handle.fileno())
            os.chmod(temporary, mode)
            os.replace(temporary, target)
        self._staged.clear()
        return order

    def discard(self) -> None:
        for temporary in self._staged.values():
            temporary.unlink(missing_ok=True)
        self._staged.clear()
        for folder in reversed(self._made):
            with contextlib.suppress(OSError):  # not empty: something else lives there
                folder.rmdir()
        self._made.clear()

    def _mkdir(self, folder: Path) -> None:
        missing = []
        while not folder.exists():
            missing.append(folder)
            folder = folder.parent
        for made in reversed(missing):
            made.mkdir()
            self._made.append(made)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
