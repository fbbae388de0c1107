"""The options of ``check`` beyond the sitemap rules: whom it speaks as, what it speaks to
(``--app``), the lastmod audit and the indexability audit."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from .argtypes import positive

if TYPE_CHECKING:  # the audits need httpx (the cli extra); --help must not
    from .audit import AuditOptions
    from .indexable import IndexableOptions

USER_AGENT = "sitemap-middleware-check/1"


def add_check_options(check: argparse.ArgumentParser) -> None:
    check.add_argument(
        "--user-agent",
        default=USER_AGENT,
        metavar="UA",
        help=f"the User-Agent of every request (default {USER_AGENT}); a crawler's to see "
        "what it gets",
    )
    check.add_argument(
        "--app",
        metavar="MODULE:ATTR",
        help="check this ASGI or WSGI application in-process (no server; as render loads "
        "it): URL gives the path and the Host",
    )
    check.add_argument("--app-dir", default=".", metavar="DIR", help="folder to import MODULE from")
    check.add_argument(
        "--host",
        metavar="HOST",
        help="with --app and sites=: the host whose sitemap is checked (its requests carry that "
        "Host); URL may be left out: that site's root sitemap",
    )
    audit = check.add_argument_group("lastmod audit")
    audit.add_argument(
        "--audit-lastmod",
        type=positive,
        metavar="N",
        help="request N pages spread over every sitemap checked (HEAD, GET where HEAD is "
        "refused; never more than N requests) and report whether the lastmods are true",
    )
    audit.add_argument(
        "--audit-concurrency",
        type=positive,
        default=2,
        metavar="N",
        help="page requests in flight at once (default 2)",
    )
    audit.add_argument(
        "--audit-delay",
        type=_seconds,
        default=0.2,
        metavar="SECONDS",
        help="each connection's pause after each page request (default 0.2)",
    )
    audit.add_argument(
        "--audit-seed",
        "--seed",
        dest="audit_seed",
        type=int,
        metavar="S",
        help="sample pages at random with seed S (default: spread evenly over each sitemap)",
    )
    indexable = check.add_argument_group("indexability audit")
    indexable.add_argument(
        "--audit-indexable",
        type=_per_source,
        metavar="N",
        help="GET N URLs of each source (or all) and the robots.txt of their hosts, and "
        "report those that do not answer 200, name another canonical, are noindex, are "
        "disallowed by robots.txt, or whose hreflang alternates do not list them back "
        "(at --audit-concurrency and --audit-delay); findings exit 3",
    )
    indexable.add_argument(
        "--baseline",
        type=Path,
        metavar="FILE",
        help="an earlier --json report of --audit-indexable: only findings not in it fail",
    )


def audit_options(args: argparse.Namespace) -> AuditOptions | None:
    if args.audit_lastmod is None:
        return None
    from .audit import AuditOptions

    return AuditOptions(
        args.audit_lastmod, args.audit_concurrency, args.audit_delay, args.audit_seed
    )


def indexable_options(args: argparse.Namespace) -> IndexableOptions | None:
    """The indexability audit's options; raises :class:`~.baseline.BaselineError` for a
    baseline that cannot be read, or given without the audit."""
    from .baseline import BaselineError, read_baseline
    from .indexable import IndexableOptions

    if args.audit_indexable is None:
        if args.baseline is not None:
            raise BaselineError("--baseline needs --audit-indexable")
        return None
    baseline = read_baseline(args.baseline) if args.baseline is not None else None
    return IndexableOptions(
        args.audit_indexable,
        args.audit_concurrency,
        args.audit_delay,
        args.audit_seed,
        baseline,
        str(args.baseline) if args.baseline is not None else None,
    )


def _per_source(text: str) -> int | Literal["all"]:
    if text.strip().lower() == "all":
        return "all"
    return positive(text)


def _seconds(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 60:
        raise argparse.ArgumentTypeError(f"must be 0 to 60 seconds, got {value}")
    return value
