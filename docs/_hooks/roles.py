"""MkDocs hook: the docstrings' Sphinx roles (``:class:`~a.B` ``) shown as plain code.

The docstrings are written for Sphinx-style readers; mkdocstrings renders them as Markdown,
where a role would show as literal text.
"""

from __future__ import annotations

import re
from typing import Any

_ROLE = re.compile(
    r":(?:py:)?(?:class|meth|func|attr|mod|exc|data|obj|const):<code>(~?)([^<]+)</code>"
)


def _name(match: re.Match[str]) -> str:
    tilde, target = match.groups()
    return f"<code>{target.rsplit('.', 1)[-1] if tilde else target}</code>"


def on_page_content(html: str, **kwargs: Any) -> str:
    return _ROLE.sub(_name, html)
