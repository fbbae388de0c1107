"""``sitemap-middleware render``: write every document the middleware serves to static files.

The application is driven in-process (:mod:`sitemap_middleware.testing`'s clients),
so every file holds exactly the bytes the
middleware sends for the same request: the root, then each child the index
lists, each as ``.xml`` (no ``Accept-Encoding``) and as ``.xml.gz`` (the gzip
file the middleware serves beside it); with ``html`` also the human view's
``.html`` sibling of each (not sitemaps: left out unless asked). Files are
laid out by their path in the application (``/sitemap.xml`` ->
``DIR/sitemap.xml``); upload the folder to where ``base_url`` points.

Everything is staged (:mod:`.staging`): a document that fails (a non-200 such
as a 503, or a transfer the middleware aborts) leaves no file behind, and no
file of the run is moved into place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO
from urllib.parse import urlsplit
from xml.etree import ElementTree

from ..core.routing import Routes
from ..core.spec import SITEMAP_NS
from ..core.urls import Site
from ..testing import Fetch, ResponseFailed, WSGIClient, with_lifespan
from .loader import (
    Interface,
    Mounted,
    find_sitemaps,
    host_sitemaps,
    import_attribute,
    resolve_app,
    sites_of,
    wsgi_middlewares,
)
from .logs import after_startup
from .progress import Progress
from .staging import Staging, UnsafePath

NS = f"{{{SITEMAP_NS}}}"


class RenderError(RuntimeError):
    """A document could not be rendered; nothing was written."""


class OptionError(ValueError):
    """The options do not fit the application (nothing was fetched)."""


@dataclass
class RenderOptions:
    app: str
    out: Path
    paths: list[str] = field(default_factory=list)
    factory: bool | None = None
    app_dir: str = "."
    gz: bool = True
    html: bool = False
    quiet: bool = False
    interface: Interface | None = None
    """Forced with --asgi / --wsgi; told from the application otherwise."""
    host: str | None = None
    """The host whose sitemap is rendered, for an application given ``sites=``."""


@dataclass(frozen=True)
class Root:
    """A root sitemap to render: its path in the application and, when known, its site."""

    path: str
    site: Site | None = None
    prefix: str = ""
    html: bool | None = None
    """Whether the middleware serves the human view; None when not known."""

    @classmethod
    def of(cls, mounted: Mounted) -> Root:
        settings = mounted.settings
        return cls(mounted.path, settings.site, mounted.prefix, settings.html)

    def child_path(self, loc: str) -> str:
        """The application path of a child the index lists by its public URL."""
        if self.site is None:
            # Not a middleware we know: take the URL's path as the application's.
            return urlsplit(loc).path
        if not loc.startswith(self.site.base_url):
            raise RenderError(f"the index lists {loc}, which is not below {self.site.base_url}")
        return f"{self.prefix}/{loc[len(self.site.base_url) :]}"


def plan(app: object, paths: list[str], per_host: list[Mounted] | None = None) -> list[Root]:
    """The roots to render: the ``--path`` ones, or every sitemap found in the app (and, with
    ``--host``, the sitemaps that host gets from the middlewares given ``sites=``)."""
    found = {mounted.path: mounted for mounted in [*(per_host or []), *find_sitemaps(app)]}
    if not paths:
        return [Root.of(m) for m in found.values()] or [Root("/sitemap.xml")]
    return [Root.of(found[p]) if p in found else Root(p) for p in paths]


async def run_render(options: RenderOptions, stdout: TextIO, stderr: TextIO) -> int:
    """0 when every file was written; raises RenderError (nothing written) otherwise."""
    target = import_attribute(options.app, options.app_dir)
    loaded = await resolve_app(target, options.factory, options.interface)
    app = loaded.app

    async def work(fetch: Fetch) -> list[Path]:
        after_startup()  # the application's logging is configured by now
        # After startup: Starlette builds its stack then.
        roots = plan(app, options.paths, await _per_host(app, options.host))
        if options.html:
            for root in roots:
                if root.html is False:
                    raise OptionError(
                        f"--html: the sitemap at {root.path} has no human view (the middleware "
                        "is configured without html=True)"
                    )
        staging = Staging(options.out)
        progress = Progress(stderr, enabled=not options.quiet)
        renderer = _Renderer(fetch, staging, progress, options.gz, options.html)
        try:
            last = set()
            for root in roots:
                last |= await renderer.tree(root)
            return staging.commit(last)
        except BaseException:
            staging.discard()
            raise
        finally:
            progress.close()

    base_url = next((m.settings.site.base_url for m in find_sitemaps(app)), "http://localhost/")
    if options.host is not None:  # the requests carry that Host
        base_url = f"https://{options.host}/"
    try:
        if loaded.interface == "wsgi":
            written = await work(WSGIClient(app, base_url).fetch)
        else:
            written = await with_lifespan(app, base_url, lambda client: work(client.fetch))
    finally:
        # A WSGI middleware may run an event loop thread for async sources: stop it, or the
        # process would wait for it at exit.
        for middleware in wsgi_middlewares(app):
            middleware.close()
    if not options.quiet:
        size = sum(path.stat().st_size for path in written)
        stdout.write(f"wrote {len(written)} files ({size:,} bytes) to {options.out}\n")
    return 0


async def _per_host(app: object, host: str | None) -> list[Mounted]:
    """With ``--host``: the sitemaps that host gets; without, none (an application given
    ``sites=`` has no sitemap but per host: it needs ``--host``)."""
    if host is None:
        if sites_of(app):
            raise OptionError(
                "--host: the application serves a sitemap per host (sites=); name the host "
                "whose sitemap to render, e.g. --host shop.example.com"
            )
        return []
    return await host_sitemaps(app, host)


class _Renderer:
    def __init__(
        self, fetch: Fetch, staging: Staging, progress: Progress, gz: bool, html: bool
    ) -> None:
        self.fetch = fetch
        self.staging = staging
        self.progress = progress
        self.gz = gz
        self.html = html
        self.per_document = 1 + gz + html
        self.done = 0
        self.total = 0
        self.size = 0

    async def tree(self, root: Root) -> set[Path]:
        """Stage the root and every child; the root's own files (to be moved last)."""
        self.total += self.per_document
        root_file = await self.document(root.path)
        roots = {root_file, *await self.siblings(root.path)}
        locs = _index_locs(self.staging, root_file)
        children = list(dict.fromkeys(root.child_path(loc) for loc in locs))
        self.total += len(children) * self.per_document
        self._show()
        for path in children:
            # The form the index lists (.xml, or .xml.gz with gzip.index_files), then the others.
            await self.document(path)
            await self.siblings(path)
        return roots

    async def siblings(self, path: str) -> list[Path]:
        """Stage the other forms of the document at ``path``: gzip file, HTML page."""
        staged = []
        if self.gz:
            xml, gz = Routes.form(path), Routes.form(path, gz=True)
            staged.append(await self.document(gz if path == xml else xml))
        if self.html:
            staged.append(await self.document(Routes.form(path, html=True), "text/html"))
        return staged

    async def document(self, path: str, media_type: str | None = None) -> Path:
        """Stage the document at ``path`` (of ``media_type`` when given); its target file."""
        try:
            target = self.staging.target(path)
        except UnsafePath as exc:
            raise RenderError(str(exc)) from None
        handle = self.staging.open(target)
        written = 0

        def write(chunk: bytes) -> None:
            nonlocal written
            handle.write(chunk)
            written += len(chunk)

        try:
            with handle:
                head = await self.fetch(path, {}, write)
        except ResponseFailed as exc:
            raise RenderError(str(exc)) from exc
        if head.status != 200:
            reason = ""
            if (head.header("content-type") or "").startswith("text/plain"):
                with self.staging.temporary(target).open("rb") as staged:
                    reason = ": " + staged.read(200).decode("utf-8", "replace").strip()
            raise RenderError(f"{path}: status {head.status}{reason}")
        if head.header("content-encoding"):
            raise RenderError(f"{path}: coded as {head.header('content-encoding')}, not plain")
        content_type = head.header("content-type") or ""
        if media_type is not None and not content_type.startswith(media_type):
            raise RenderError(f"{path}: served as {content_type or 'nothing'}, not {media_type}")
        self.done += 1
        self.size += written
        self._show()
        return target

    def _show(self) -> None:
        self.progress.update(self.done, self.total, self.size)


def _index_locs(staging: Staging, target: Path) -> list[str]:
    """The child locs of a staged ``sitemapindex``; none for a ``urlset``."""
    locs: list[str] = []
    try:
        events = ElementTree.iterparse(staging.temporary(target), ("start", "end"))
        _, root = next(events)
        if root.tag == f"{NS}urlset":
            return []
        if root.tag != f"{NS}sitemapindex":
            raise RenderError(f"{target.name} is neither a urlset nor a sitemapindex")
        for event, element in events:
            if event == "end" and element.tag == f"{NS}loc":
                locs.append((element.text or "").strip())
    except ElementTree.ParseError as exc:
        raise RenderError(f"{target.name} is not well-formed XML: {exc}") from None
    return locs
