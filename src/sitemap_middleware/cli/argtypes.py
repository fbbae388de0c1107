"""The value types of the command line's options: each refuses a bad value with a message
that says what the option takes."""

from __future__ import annotations

import argparse


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def not_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def app_path(text: str) -> str:
    if not text.startswith("/") or "?" in text or not text.isascii():
        raise argparse.ArgumentTypeError(
            f"must be an ASCII path such as /sitemap.xml, got {text!r}"
        )
    return text
