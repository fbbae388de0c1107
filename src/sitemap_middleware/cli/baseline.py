"""``check --baseline FILE``: the indexability findings a site already has, to be tolerated.

FILE is the ``--json`` output of an earlier ``check --audit-indexable``: its
``indexable.found`` list names each finding by code, URL and subject (the
alternate of an hreflang finding). The check then fails only on findings not in
it; the rest are reported as known.
"""

from __future__ import annotations

import json
from pathlib import Path

Key = tuple[str, str, str]


class BaselineError(ValueError):
    """The baseline file cannot be read as one."""


def read_baseline(path: Path) -> frozenset[Key]:
    """The findings an earlier ``check --json --audit-indexable`` report at ``path`` lists."""
    try:
        report = json.loads(path.read_text("utf-8"))
    except OSError as exc:
        raise BaselineError(f"--baseline {path}: cannot be read ({exc.strerror})") from None
    except ValueError as exc:
        raise BaselineError(f"--baseline {path}: not JSON ({exc})") from None
    indexable = report.get("indexable") if isinstance(report, dict) else None
    found = indexable.get("found") if isinstance(indexable, dict) else None
    if not isinstance(found, list):
        raise BaselineError(
            f"--baseline {path}: no indexability findings in it; write it with "
            "'sitemap-middleware check --json --audit-indexable N URL > FILE'"
        )
    keys: set[Key] = set()
    for item in found:
        code, url, subject = (
            (item.get("code"), item.get("url"), item.get("subject") or "")
            if isinstance(item, dict)
            else (None, None, None)
        )
        if not (isinstance(code, str) and isinstance(url, str) and isinstance(subject, str)):
            raise BaselineError(f"--baseline {path}: not a finding (code, url): {item!r}")
        keys.add((code, url, subject))
    return frozenset(keys)
