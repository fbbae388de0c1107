"""Argument parsing and exit statuses of ``sitemap-middleware``; the work is in the modules
each subcommand names."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urlsplit

from ..core.spec import (
    INDEXNOW_MAX_URLS,
    MAX_BYTES,
    MAX_IMAGES,
    MAX_LOC_LENGTH,
    MAX_NEWS_PER_SITEMAP,
    MAX_PRIORITY,
    MAX_URLS,
    MIN_PRIORITY,
)
from .argtypes import app_path, not_negative, positive
from .check_options import add_check_options as add_audit_options
from .check_options import audit_options, indexable_options
from .logs import library_logging

USAGE_ERROR = 2

DESCRIPTION = """\
Check a live sitemap the way a crawler reads it, render the sitemaps an
application serves through SitemapMiddleware (ASGI) or SitemapWSGIMiddleware
(WSGI) to static files, push the application's changed rows to IndexNow, or
list the application's routes that no source of its sitemap covers."""

EPILOG = """\
examples:
  sitemap-middleware check https://example.com/sitemap.xml
  sitemap-middleware check --json --sample 20 https://example.com/sitemap.xml
  sitemap-middleware render --app mysite.main:app --out public/
  sitemap-middleware indexnow --app mysite.main:app --once
  sitemap-middleware routes --app mysite.main:app

Run 'sitemap-middleware COMMAND --help' for the options of each command."""

_PRIORITIES = f"{MIN_PRIORITY}-{MAX_PRIORITY}"
CHECK_DESCRIPTION = f"""\
Fetch a sitemap as a crawler would (Accept-Encoding: gzip) and, when it is a
sitemap index, every sitemap it lists within its scope. For each document:

  XML        well-formed, UTF-8
  schema     the sitemaps.org structure (built in: namespace, root element,
             element order, required loc, at least one entry, changefreq
             values, priority {_PRIORITIES}, lastmod forms, loc an absolute URI under
             {MAX_LOC_LENGTH + 1:,} characters); with --schemas, the official XSDs as well
  limits     at most {MAX_URLS:,} URLs (or sitemaps) and --max-bytes uncompressed
  scope      every loc on the sitemap's scheme, host and port, under its
             directory (the string prefix crawlers compare)
  duplicates locs listed twice, in one document or across the index
  lastmod    W3C Datetime forms the XSD accepts, none in the future
  extensions elements after loc, lastmod, changefreq and priority; every
             prefix declared; namespaces spelled exactly (an unknown one is a
             warning); hreflang alternates (xhtml:link) valid, listing the URL
             itself, and listed back by the alternates in the same document;
             image:image with one absolute image:loc, at most {MAX_IMAGES:,} per URL;
             video:video with thumbnail_loc, title, description and
             content_loc or player_loc; news:news complete, its language
             ISO 639 (or zh-cn/zh-tw), at most {MAX_NEWS_PER_SITEMAP:,} per sitemap (older than
             two days: a warning); the rest with --schemas
  headers    status 200; Content-Type XML (application/gzip without
             Content-Encoding for .xml.gz); ETag; Last-Modified in IMF-fixdate
             and not later than Date; Vary: Accept-Encoding when the body
             depends on it; no field defined as one value (Date, ETag,
             Content-Type, Last-Modified, ...) sent twice, in any answer
  requests   If-None-Match with the ETag gets 304 with the same validators;
             If-Modified-Since with the Last-Modified gets 304; If-None-Match
             takes precedence over If-Modified-Since; HEAD sends GET's headers

An HTML page (such as the middleware's human view, sitemap.html) is not a
sitemap: it is reported as such (document.html) and gets no other check.

With --audit-lastmod N, N pages spread over every urlset checked are
requested (HEAD; GET where HEAD gets 405 or 501; never more than N requests;
--audit-concurrency at once, each pausing --audit-delay) and each sitemap's
lastmods are judged (pass, WARN, FAIL): audit.stamp (half or more of them one
instant: a build stamp), audit.future, audit.older (pages whose Last-Modified
is later than their lastmod), audit.no-last-modified and
audit.last-modified-now (unverifiable), audit.status (a page not 2xx),
audit.unreachable. With --app the application is checked in-process; an
application given sites= serves a sitemap per host: --host HOST checks that
host's (URL left out: its root sitemap).

With --audit-indexable N (or all), N URLs of each source (the sitemaps that
differ only by a page number) are requested with GET, after the robots.txt of
their hosts, at the same pace, and each that a crawler would not index is
reported: indexable.robots (disallowed for Googlebot, Bingbot or * by
robots.txt, as RFC 9309 reads it), indexable.redirect (with its target),
indexable.status (not 200), indexable.unreachable, indexable.canonical (its
rel=canonical, in the head or a Link header, is another URL),
indexable.noindex (meta robots, googlebot or bingbot, or X-Robots-Tag, for
all or for one crawler), indexable.hreflang (an hreflang alternate of its
sitemap entry lists it back neither in its own entry nor on its page). With
--baseline FILE (an earlier --json report), only findings not in FILE count.
Its memory does not grow with the URLs requested (a few digests aside), and on
a terminal a progress bar shows them, their rate and the findings so far.

Exit status: 0 when every check passes, 1 when one fails (an audit finding
judged FAIL included), 2 on a usage error or when a document could not be
fetched at all (connection refused, timeout), 3 when the documents pass but
the indexability audit has findings (not in the baseline). Warnings (and
audit WARNs) do not change the exit status."""

CHECK_EPILOG = """\
examples:
  sitemap-middleware check https://example.com/sitemap.xml
  sitemap-middleware check --schemas ./schemas https://example.com/sitemap.xml
  sitemap-middleware check --json https://example.com/sitemap.xml | jq '.documents[].findings'
  sitemap-middleware check --sample 25 --timeout 10 https://example.com/sitemap.xml
  sitemap-middleware check --max-bytes 10485760 https://example.com/sitemap-1.xml.gz
  sitemap-middleware check --audit-lastmod 200 https://example.com/sitemap.xml
  sitemap-middleware check --audit-indexable 50 https://example.com/sitemap.xml
  sitemap-middleware check --json --audit-indexable all --baseline known.json https://example.com/sitemap.xml
  sitemap-middleware check --app mysite.main:app https://example.com/sitemap.xml
  sitemap-middleware check --app mysite.main:app --host shop.example.com --audit-lastmod 50"""

RENDER_DESCRIPTION = """\
Write every document the application's sitemap middleware serves (the root,
and every sitemap its index lists, each as .xml and .xml.gz) to DIR, byte for
byte what the middleware sends: the application is run in-process (an ASGI
app with its lifespan, a WSGI app as a WSGI server calls it) and asked for
each document. Files are laid out by their path in the application
(/sitemap.xml -> DIR/sitemap.xml); upload DIR to where the middleware's
base_url points.

--app MODULE:ATTR names (dotted for nested attributes):
  ASGI  - a Starlette or FastAPI application with SitemapMiddleware added,
        - a SitemapMiddleware or SitemapApp instance (or any ASGI application);
  WSGI  - a Flask application whose wsgi_app is wrapped in SitemapWSGIMiddleware
          (app.wsgi_app = SitemapWSGIMiddleware(app.wsgi_app, ...)),
        - a SitemapWSGIMiddleware instance, e.g. around Django's
          get_wsgi_application(), or a SitemapWSGIApp (or any WSGI application);
  or a function with no required arguments returning one of those (sync or
  async; use --factory when it is not a plain function).
ASGI or WSGI is told from the object: the middleware classes by their type,
others by their call signature: async, or three parameters (scope, receive,
send), is ASGI; two (environ, start_response) is WSGI. When the signature
says neither (a wrapper taking *args), render stops and asks for --asgi or
--wsgi.
Every sitemap configured in the application is rendered, unless --path names
the ones to render.

The HTML pages of the human view (html=True: sitemap.html beside
sitemap.xml) are not sitemaps and are left out; --html writes them too.

Nothing is written unless every document succeeds: files are staged beside
their targets and moved into place together, the root sitemaps last. A
document that fails (an error status such as 503, or a transfer the middleware
aborts because a source failed mid-stream) exits 1 and leaves no file;
an application that cannot be loaded, or --html for a sitemap without the
human view, exits 2."""

INDEXNOW_DESCRIPTION = """\
Push the URLs of the rows that changed to IndexNow (Bing, Yandex, Naver, Seznam,
Yep share one endpoint): for every sitemap of the application configured with
indexnow.key, each SQLAlchemy source's rows whose lastmod moved since its
watermark, in (lastmod, key) order, in posts of at most 10,000 URLs, then the
URLs queued with sitemap_middleware.contrib.indexnow.queue_urls (deleted rows). The
watermark advances only when the endpoint accepted a post (200 or 202). The
first run pushes nothing: it starts from now. The watermark tables must exist:
sitemap_middleware.contrib.indexnow.install(engine), once per database.

--app is loaded as for render (an ASGI application is started with its
lifespan). Several processes may run this at once: each change is pushed once
(the watermark row is locked while a post is out); a crash between a post and
its commit pushes that one post again.

An application given sites= is pushed site by site, each under its own key
(SiteConfig(indexnow=...)): every site of a mapping, or those named with
--host (repeated; a resolver cannot list its sites, so it needs them). Each
site pushes its own sources' rows and the queued URLs under its base URL.

Exit status: 0 when every push succeeded or had nothing to do; 1 when the
endpoint rejected a post (400, 403, 422: the message says what) or kept asking
to wait (429, 5xx, network errors: retried with growing delays first), or the
database failed; 2 when the application cannot be loaded, has no sitemap with
indexnow.key, or lacks the watermark tables. With --every, a failed round is
reported and the next one tries again; the process runs until interrupted."""

INDEXNOW_EPILOG = """\
examples:
  sitemap-middleware indexnow --app mysite.main:app --once
  sitemap-middleware indexnow --app mysite.main:app --every 60
  sitemap-middleware indexnow --app mysite.main:app --dry-run
  sitemap-middleware indexnow --app shops.main:app --host a.example --host b.example"""

RENDER_EPILOG = """\
examples:
  sitemap-middleware render --app mysite.main:app --out public/
  sitemap-middleware render --app mysite.main:create_app --factory --out public/
  sitemap-middleware render --app mysite.flask_app:app --out public/
  sitemap-middleware render --app mysite.wsgi:application --out public/ --html
  sitemap-middleware render --app mysite.main:app --path /blog/sitemap.xml --out public/
  sitemap-middleware render --app mysite.main:app --out public/ --quiet && aws s3 sync public/ s3://page/"""


def build_parser() -> argparse.ArgumentParser:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="sitemap-middleware",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=formatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _check_parser(commands, formatter)
    _render_parser(commands, formatter)
    _indexnow_parser(commands, formatter)
    _routes_parser(commands, formatter)
    return parser


def _check_parser(commands: Any, formatter: Any) -> None:
    check = commands.add_parser(
        "check",
        help="check a live sitemap (and its children) as a crawler would",
        description=CHECK_DESCRIPTION,
        epilog=CHECK_EPILOG,
        formatter_class=formatter,
    )
    check.add_argument(
        "url",
        metavar="URL",
        nargs="?",
        help="the sitemap (or sitemap index) to check (with --app and --host: default, that "
        "host's root sitemap)",
    )
    add_check_options(check)


def add_check_options(parser: argparse.ArgumentParser) -> None:
    """The options of ``check`` after its URL (also those of Django's ``manage.py
    sitemap_check``)."""
    parser.add_argument("--json", action="store_true", help="print one JSON object, not text")
    parser.add_argument(
        "--schemas",
        metavar="DIR",
        default=os.environ.get("SITEMAP_SCHEMAS") or None,
        help="also validate with the official XSDs in DIR (sitemap.xsd or "
        "urlset-with-extensions.xsd, and siteindex.xsd); default: $SITEMAP_SCHEMAS",
    )
    parser.add_argument(
        "--max-bytes",
        type=positive,
        default=MAX_BYTES,
        metavar="N",
        help=f"uncompressed size limit per document (default {MAX_BYTES}; the older limit was "
        "10485760)",
    )
    bound = parser.add_mutually_exclusive_group()
    bound.add_argument(
        "--max-children", type=not_negative, metavar="N", help="fetch only the first N children"
    )
    bound.add_argument(
        "--sample",
        type=not_negative,
        metavar="N",
        help="fetch N children spread evenly over the index (first and last included)",
    )
    parser.add_argument(
        "--timeout", type=float, default=30.0, metavar="SECONDS", help="per request (default 30)"
    )
    parser.add_argument(
        "--concurrency",
        type=positive,
        default=1,
        metavar="N",
        help="documents fetched at once (default 1: one request at a time, to be polite)",
    )
    parser.add_argument(
        "--no-conditional",
        dest="conditional",
        action="store_false",
        help="skip the conditional-request, HEAD and Vary probes (5 requests per document)",
    )
    add_audit_options(parser)


def _render_parser(commands: Any, formatter: Any) -> None:
    render = commands.add_parser(
        "render",
        help="write the sitemaps an application serves to static files",
        description=RENDER_DESCRIPTION,
        epilog=RENDER_EPILOG,
        formatter_class=formatter,
    )
    add_render_options(render, app=True)


def add_render_options(parser: argparse.ArgumentParser, app: bool) -> None:
    """The options of ``render``; ``app``: with those naming the application (Django's
    ``manage.py sitemap_render`` renders the project itself)."""
    if app:
        parser.add_argument("--app", required=True, metavar="MODULE:ATTR", help="the application")
    parser.add_argument("--out", required=True, type=Path, metavar="DIR", help="output folder")
    parser.add_argument(
        "--path",
        type=app_path,
        dest="paths",
        action="append",
        default=[],
        metavar="PATH",
        help="a root sitemap's path in the application (repeatable; default: every sitemap "
        "found, else /sitemap.xml)",
    )
    parser.add_argument(
        "--no-gz",
        dest="gz",
        action="store_false",
        help="skip the .xml.gz files (except those an index lists as its children)",
    )
    parser.add_argument(
        "--html",
        action="store_true",
        help="also write the human view's .html pages (the middleware needs html=True)",
    )
    parser.add_argument(
        "--quiet", action="store_true", help="no progress indicator and no summary line"
    )
    parser.add_argument(
        "--host",
        metavar="HOST",
        help="with sites=: the host whose sitemap is rendered (its requests carry that Host)",
    )
    if app:
        _application_options(parser)


def _application_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--factory", action="store_true", default=None, help="call ATTR to get the application"
    )
    interface = parser.add_mutually_exclusive_group()
    interface.add_argument(
        "--asgi",
        dest="interface",
        action="store_const",
        const="asgi",
        help="drive the application as ASGI (default: told from the application)",
    )
    interface.add_argument(
        "--wsgi",
        dest="interface",
        action="store_const",
        const="wsgi",
        help="drive the application as WSGI (default: told from the application)",
    )
    parser.add_argument(
        "--app-dir",
        default=".",
        metavar="DIR",
        help="folder to import MODULE from (default: the current folder)",
    )


def _indexnow_parser(commands: Any, formatter: Any) -> None:
    indexnow = commands.add_parser(
        "indexnow",
        help="push the application's changed rows to IndexNow",
        description=INDEXNOW_DESCRIPTION,
        epilog=INDEXNOW_EPILOG,
        formatter_class=formatter,
    )
    indexnow.add_argument("--app", required=True, metavar="MODULE:ATTR", help="the application")
    when = indexnow.add_mutually_exclusive_group()
    when.add_argument("--once", action="store_true", help="one round, then exit (the default)")
    when.add_argument(
        "--every", type=_seconds, metavar="SECONDS", help="a round every SECONDS, until stopped"
    )
    indexnow.add_argument(
        "--dry-run",
        action="store_true",
        help="print the JSON each post would send; post nothing, move no watermark",
    )
    indexnow.add_argument(
        "--max-urls",
        type=positive,
        default=INDEXNOW_MAX_URLS,
        metavar="N",
        help=f"URLs per post (default and most: {INDEXNOW_MAX_URLS:,})",
    )
    indexnow.add_argument(
        "--lag",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="push only rows whose lastmod is at least SECONDS old (writes that commit late)",
    )
    indexnow.add_argument(
        "--host",
        action="append",
        dest="hosts",
        metavar="HOST",
        help="with sites=: push this host's site only (repeat for several; a resolver needs it)",
    )
    indexnow.add_argument(
        "--factory", action="store_true", default=None, help="call ATTR to get the application"
    )
    indexnow.add_argument(
        "--app-dir", default=".", metavar="DIR", help="folder to import MODULE from"
    )


ROUTES_DESCRIPTION = """\
List the application's GET routes (Starlette/FastAPI, Flask, Django) and,
for each, whether a source of its sitemap covers it: a source's loc template
maps onto the route (the same literal text, a placeholder where the route has
a parameter), or a loc the source lists matches the route's pattern (the
first --sample locs of each source are read; a list in memory whole).

Excluded, and reported as such: routes not answering GET, the sitemap's own
paths, robots.txt, static files, Django's admin, FastAPI's documentation,
views marked with @not_in_sitemap, Django's SITEMAP_ROUTES_EXCLUDED globs,
and --exclude globs.

The uncovered routes without parameters are printed as a static source,
ready to paste into sources=.

Exit status: 0 when every route is covered or excluded, 1 when one is not,
2 on a usage error or an application that cannot be loaded."""

ROUTES_EPILOG = """\
examples:
  sitemap-middleware routes --app mysite.main:app
  sitemap-middleware routes --app mysite.main:app --exclude '/search*' --exclude '/api/*'
  sitemap-middleware routes --app mysite.main:app --json | jq '.static_source'"""


def _routes_parser(commands: Any, formatter: Any) -> None:
    routes = commands.add_parser(
        "routes",
        help="list the application's GET routes and whether its sitemap covers each",
        description=ROUTES_DESCRIPTION,
        epilog=ROUTES_EPILOG,
        formatter_class=formatter,
    )
    routes.add_argument("--app", required=True, metavar="MODULE:ATTR", help="the application")
    add_routes_options(routes)
    _application_options(routes)


def add_routes_options(parser: argparse.ArgumentParser) -> None:
    """The options of ``routes`` but the application's (also Django's ``manage.py
    sitemap_routes``)."""
    from ..sources.coverage import SAMPLE

    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="PATTERN",
        help="a glob on the route path, such as '/search*' or '/api/*' (repeatable)",
    )
    parser.add_argument(
        "--sample",
        type=positive,
        default=SAMPLE,
        metavar="N",
        help=f"locs read from each source (default {SAMPLE}; a list in memory is read whole)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object, not text")


def routes_command(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    """``routes`` with parsed options; the exit status."""
    import anyio

    from ..testing import StartupFailed
    from .loader import LoadError
    from .routes import RoutesOptions, run_routes

    options = RoutesOptions(
        app=args.app,
        app_dir=args.app_dir,
        factory=args.factory,
        interface=args.interface,
        exclude=args.exclude,
        sample=args.sample,
        json=args.json,
    )
    try:
        with library_logging(stderr):
            return anyio.run(run_routes, options, stdout, stderr)
    except (LoadError, StartupFailed) as exc:
        stderr.write(f"sitemap-middleware routes: {exc}\n")
        return USAGE_ERROR


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a usage error (already printed)
        return exc.code if isinstance(exc.code, int) else USAGE_ERROR
    if args.command == "check":
        return check_command(args, sys.stdout, sys.stderr)
    if args.command == "indexnow":
        return _indexnow(args, sys.stdout, sys.stderr)
    if args.command == "routes":
        return routes_command(args, sys.stdout, sys.stderr)
    return render_command(args, sys.stdout, sys.stderr)


def check_command(
    args: argparse.Namespace, stdout: TextIO, stderr: TextIO, transport: Any = None
) -> int:
    """``check`` with parsed options; the exit status. ``transport``: an httpx transport to
    an in-process application instead of the network (Django's ``manage.py
    sitemap_check``)."""
    try:
        import anyio

        from ..testing import StartupFailed
        from .app_transport import run_app_check
        from .baseline import BaselineError
        from .check import CheckOptions, run_check
        from .loader import LoadError
        from .report import as_text, write_json
        from .schemas import SchemaError, Schemas
    except ImportError as exc:
        stderr.write(
            f"sitemap-middleware check needs the 'cli' extra ({exc.name} is missing): "
            "pip install 'sitemap_middleware[cli]'\n"
        )
        return USAGE_ERROR
    host = getattr(args, "host", None)
    app = getattr(args, "app", None)
    if host is not None and not app and transport is None:
        stderr.write(
            "sitemap-middleware check: --host names a site of an application checked "
            "in-process (--app); over HTTP the URL names the host\n"
        )
        return USAGE_ERROR
    if args.url is None and (host is None or not app):
        stderr.write("sitemap-middleware check: URL is required (or --app with --host)\n")
        return USAGE_ERROR
    parts = urlsplit(args.url or "")
    if args.url is not None and (parts.scheme not in ("http", "https") or not parts.netloc):
        stderr.write(f"sitemap-middleware check: URL must be an http(s) URL, got {args.url!r}\n")
        return USAGE_ERROR
    schemas = None
    if args.schemas:
        try:
            schemas = Schemas(Path(args.schemas))
        except SchemaError as exc:
            stderr.write(f"sitemap-middleware check: {exc}\n")
            return USAGE_ERROR
    try:
        indexable = indexable_options(args)
    except BaselineError as exc:
        stderr.write(f"sitemap-middleware check: {exc}\n")
        return USAGE_ERROR
    if indexable is not None:
        indexable.progress = stderr  # a bar while URLs are requested, if it is a terminal
    options = CheckOptions(
        url=args.url or "",
        schemas=schemas,
        max_bytes=args.max_bytes,
        max_children=args.max_children,
        sample=args.sample,
        timeout=args.timeout,
        concurrency=args.concurrency,
        conditional=args.conditional,
        user_agent=args.user_agent,
        audit=audit_options(args),
        indexable=indexable,
    )
    try:
        if app:
            report = anyio.run(run_app_check, options, app, args.app_dir, host)
        else:
            report = anyio.run(run_check, options, transport)
    except (LoadError, StartupFailed) as exc:
        stderr.write(f"sitemap-middleware check: {exc}\n")
        return USAGE_ERROR
    if args.json:
        write_json(report, stdout)
        stdout.write("\n")
    else:
        stdout.write(as_text(report) + "\n")
    return report.exit_status


def render_command(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    """``render`` with parsed options; the exit status."""
    import anyio

    from ..testing import StartupFailed
    from .loader import LoadError
    from .render import OptionError, RenderError, RenderOptions, run_render

    options = RenderOptions(
        app=args.app,
        out=args.out,
        paths=args.paths,
        factory=args.factory,
        app_dir=args.app_dir,
        gz=args.gz,
        html=args.html,
        quiet=args.quiet,
        interface=args.interface,
        host=args.host,
    )
    # The middleware reports bad rows and failures on its logger: show them once, on stderr
    # unless the application's logging (configured as it loads) handles them.
    try:
        with library_logging(stderr):
            return anyio.run(run_render, options, stdout, stderr)
    except (LoadError, StartupFailed, OptionError) as exc:
        stderr.write(f"sitemap-middleware render: {exc}\n")
        return USAGE_ERROR
    except (RenderError, OSError) as exc:
        stderr.write(f"sitemap-middleware render: {exc}; nothing was written\n")
        return 1


def _indexnow(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    import anyio

    from ..testing import StartupFailed
    from .loader import LoadError

    try:
        from .indexnow import IndexNowOptions, run_indexnow
    except ImportError as exc:
        stderr.write(
            f"sitemap-middleware indexnow needs the 'indexnow' extra ({exc.name} is missing): "
            "pip install 'sitemap_middleware[indexnow]'\n"
        )
        return USAGE_ERROR

    options = IndexNowOptions(
        app=args.app,
        every=args.every,
        dry_run=args.dry_run,
        factory=args.factory,
        app_dir=args.app_dir,
        max_urls=min(args.max_urls, INDEXNOW_MAX_URLS),
        lag=max(0.0, args.lag),
        hosts=tuple(args.hosts or ()),
    )
    try:
        with library_logging(stderr):
            return anyio.run(run_indexnow, options, stdout, stderr)
    except (LoadError, StartupFailed) as exc:
        stderr.write(f"sitemap-middleware indexnow: {exc}\n")
        return USAGE_ERROR
    except KeyboardInterrupt:
        return 0


def _seconds(text: str) -> float:
    value = float(text)
    if not 1 <= value <= 86_400:
        raise argparse.ArgumentTypeError(f"must be from 1 to 86400 seconds, got {text}")
    return value


def _version() -> str:
    try:
        return version("sitemap_middleware")
    except PackageNotFoundError:  # pragma: no cover - running from an uninstalled checkout
        return "unknown"
