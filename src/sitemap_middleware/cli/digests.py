"""Compact sets and maps of short digests, for what ``check`` must remember of every URL.

A Python ``set`` of 8-byte ``bytes`` costs about 90 bytes an entry (the object and its
slot); these tables keep the 8-byte digest itself in an ``array`` slot, at most half of
the slots used, so an entry costs 16 to 32 bytes (:class:`DigestSet`), or 24 to 48 with
a 4-byte value (:class:`DigestMap`). Two texts with the same digest are taken as the same:
with 64 bits, even ten million entries make that a chance in a hundred billion.
"""

from __future__ import annotations

import hashlib
from array import array

_FIRST_SIZE = 1024


def digest(text: str) -> int:
    """A 64-bit digest of ``text`` (never 0: that marks an empty slot)."""
    raw = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(raw, "little") or 1


class DigestSet:
    """A set of :func:`digest` values, open addressing with linear probing."""

    def __init__(self) -> None:
        self._keys = array("Q", bytes(8 * _FIRST_SIZE))
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def __contains__(self, key: int) -> bool:
        return self._keys[self._slot(key)] == key

    def add(self, key: int) -> bool:
        """Add ``key``; whether it was not there yet."""
        slot = self._slot(key)
        if self._keys[slot] == key:
            return False
        self._keys[slot] = key
        self._added()
        return True

    @property
    def nbytes(self) -> int:
        return self._keys.itemsize * len(self._keys)

    def _slot(self, key: int) -> int:
        """The slot that holds ``key``, or the empty one where it would go."""
        keys = self._keys
        mask = len(keys) - 1
        slot = key & mask
        while keys[slot] and keys[slot] != key:
            slot = (slot + 1) & mask
        return slot

    def _added(self) -> None:
        self._count += 1
        if 2 * self._count > len(self._keys):
            self._grow()

    def _grow(self) -> None:
        old = self._keys
        self._keys = array("Q", bytes(16 * len(old)))
        for key in old:
            if key:
                self._keys[self._slot(key)] = key


class DigestMap(DigestSet):
    """A map from :func:`digest` values to non-negative integers below 2**32."""

    def __init__(self) -> None:
        super().__init__()
        self._values = array("I", bytes(4 * _FIRST_SIZE))

    def setdefault(self, key: int, value: int) -> int:
        """The value of ``key``, set to ``value`` first if it has none."""
        slot = self._slot(key)
        if self._keys[slot] == key:
            return int(self._values[slot])
        self._keys[slot] = key
        self._values[slot] = value
        self._added()
        return value

    def __setitem__(self, key: int, value: int) -> None:
        slot = self._slot(key)
        if self._keys[slot] != key:
            self._keys[slot] = key
            self._values[slot] = value
            self._added()
        else:
            self._values[slot] = value

    @property
    def nbytes(self) -> int:
        return super().nbytes + self._values.itemsize * len(self._values)

    def _grow(self) -> None:
        keys, values = self._keys, self._values
        self._keys = array("Q", bytes(16 * len(keys)))
        self._values = array("I", bytes(8 * len(keys)))
        for key, value in zip(keys, values, strict=True):
            if key:
                slot = self._slot(key)
                self._keys[slot] = key
                self._values[slot] = value
