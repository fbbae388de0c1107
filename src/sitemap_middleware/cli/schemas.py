"""Validation against the official XSDs in a folder the user names (``--schemas DIR``).

The schemas are not shipped: ``check`` reads them from ``DIR`` (or the
``SITEMAP_SCHEMAS`` environment variable) and applies them in addition to its
built-in rules. A ``urlset`` is validated with ``urlset-with-extensions.xsd``
when the folder has it (image, video, news and xhtml elements then validate
too), else with ``sitemap.xsd``; a ``sitemapindex`` with ``siteindex.xsd``.
Imports of remote schema locations resolve to files of the same name in
``DIR``; nothing is fetched from the network.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from lxml import etree

URLSET_SCHEMAS = ("urlset-with-extensions.xsd", "sitemap.xsd")
INDEX_SCHEMA = "siteindex.xsd"


class SchemaError(ValueError):
    """The folder does not hold loadable sitemap schemas."""


class _LocalFiles(etree.Resolver):
    """Resolve ``http://.../xml.xsd`` and the like to the file of that name in the folder."""

    def __init__(self, directory: Path) -> None:
        super().__init__()
        self.directory = directory

    # lxml calls resolve(url, public_id, context); its stubs leave out the context.
    def resolve(  # type: ignore[override]
        self, system_url: str, public_id: str, context: object
    ) -> object:
        candidate = self.directory / system_url.rstrip("/").rsplit("/", 1)[-1]
        if candidate.is_file():
            return self.resolve_filename(str(candidate), context)  # type: ignore[attr-defined]
        return None


class Schemas:
    """The loaded ``urlset`` and ``sitemapindex`` schemas of one folder."""

    def __init__(self, directory: Path) -> None:
        if not directory.is_dir():
            raise SchemaError(f"--schemas: {directory} is not a folder")
        urlset_file = next(
            (directory / name for name in URLSET_SCHEMAS if (directory / name).is_file()), None
        )
        if urlset_file is None or not (directory / INDEX_SCHEMA).is_file():
            raise SchemaError(
                f"--schemas: {directory} must hold sitemap.xsd (or urlset-with-extensions.xsd) "
                f"and {INDEX_SCHEMA}"
            )
        self.files = {"urlset": urlset_file.name, "sitemapindex": INDEX_SCHEMA}
        self._schemas = {
            "urlset": _load(urlset_file, directory),
            "sitemapindex": _load(directory / INDEX_SCHEMA, directory),
        }

    def errors(self, root: etree._Element, kind: str) -> list[str]:
        """XSD errors of a parsed document of ``kind`` (``urlset`` or ``sitemapindex``)."""
        schema = self._schemas[kind]
        if schema.validate(root):
            return []
        entries: Iterable[Any] = schema.error_log  # type: ignore[assignment]  # iterable at run time
        return [f"line {entry.line}: {entry.message}" for entry in entries]


def _load(path: Path, directory: Path) -> etree.XMLSchema:
    parser = etree.XMLParser(no_network=True)
    parser.resolvers.add(_LocalFiles(directory))
    try:
        return etree.XMLSchema(etree.parse(str(path), parser))
    except (etree.XMLSyntaxError, etree.XMLSchemaParseError, OSError) as exc:
        raise SchemaError(f"--schemas: cannot load {path}: {exc}") from None
