"""The built-in rules for one sitemap document: XML, schema structure, values, limits,
scope and duplicates; extension elements through :mod:`.extension_rules`.

The structural rules are those of the official ``sitemap.xsd`` and
``siteindex.xsd``, read from the declaration the writer follows too
(:data:`~sitemap_middleware.core.spec.ENTRIES`) so ``check`` needs no schema files:
the root is ``urlset`` or ``sitemapindex`` in the sitemaps.org namespace and
holds at least one entry; an entry's children come in the order ``loc``,
``lastmod``, ``changefreq``, ``priority`` (index: ``loc``, ``lastmod``), then
elements of other namespaces; ``loc`` is required; no text between elements
and no attributes but ``xsi:*``. Every namespace prefix must be declared (or
the document is not namespace-well-formed XML); an element of a namespace
no crawler knows is a warning, one whose namespace is a misspelling of a
known one (``https://``, another version, a trailing slash) an error. With
``--schemas`` the XSDs are applied as well (:mod:`.schemas`), to the
extensions' every field too.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime

from lxml import etree

from ..core.spec import (
    ENTRIES,
    EXTENSION_NAMESPACES,
    IMAGE_NS,
    MAX_CHILDREN,
    MAX_URLS,
    SITEMAP_NS,
    XML_WHITESPACE,
    XSI_NS,
)
from .extension_rules import ExtensionRules
from .findings import Findings
from .scope import resource, scope_problem
from .values import changefreq_problem, lastmod_problems, loc_problems, priority_problem

KNOWN_EXTENSIONS = frozenset(EXTENSION_NAMESPACES.values())
_VERSION = re.compile(r"/\d+(?:\.\d+)*$")


def _near_miss_key(namespace: str) -> str:
    """What a misspelling keeps of a namespace: no scheme, ``www.``, case, version or
    trailing slash."""
    key = namespace.strip().lower().rstrip("/")
    key = key.removeprefix("https://").removeprefix("http://").removeprefix("www.")
    return _VERSION.sub("", key)


# Namespaces crawlers match exactly, by what a misspelling of one keeps (see _near_miss).
_NEAR_MISS_KEYS = {_near_miss_key(ns): ns for ns in (*KNOWN_EXTENSIONS, SITEMAP_NS)}
_UNDECLARED = re.compile(r"Namespace prefix (\S+) (?:on|for) .* is not defined")


@dataclass
class Document:
    """What the rules learnt of a document: its kind, the locs of its entries in order, the
    lastmod beside each (None where there is none), and the hrefs of the hreflang
    alternates of each loc that has some."""

    kind: str | None = None
    entries: int = 0
    locs: list[str] = field(default_factory=list)
    lastmods: list[str | None] = field(default_factory=list)
    alternates: dict[str, frozenset[str]] = field(default_factory=dict)
    root: etree._Element | None = None


def parse(body: bytes, findings: Findings) -> etree._Element | None:
    """The root element, or None (with an ``xml.*`` finding) when the bytes are not XML."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    try:
        root = etree.fromstring(body, parser)
    except etree.XMLSyntaxError as exc:
        undeclared = _UNDECLARED.search(str(exc))
        if undeclared is not None:
            findings.add(
                "xml.namespace",
                "a namespace prefix is used without its xmlns declaration (declare it on "
                f'<urlset>, e.g. xmlns:image="{IMAGE_NS}")',
                str(exc),
            )
        else:
            findings.add("xml.malformed", "not well-formed XML", str(exc))
        return None
    info = root.getroottree().docinfo
    encoding = (info.encoding or "UTF-8").upper().replace("_", "-")
    if encoding not in ("UTF-8", "UTF8"):
        findings.add("xml.encoding", "the file must be UTF-8 encoded", info.encoding)
    doctype = getattr(info, "doctype", "")
    if doctype:
        findings.add("xml.doctype", "a sitemap needs no DOCTYPE", doctype)
    return root


def inspect(
    body: bytes, url: str, now: datetime, findings: Findings, check_scope: bool = True
) -> Document:
    """Apply every built-in rule to the document ``body`` served at ``url``."""
    root = parse(body, findings)
    if root is None:
        return Document()
    namespace, name = _split(root.tag)
    if name not in ENTRIES:
        findings.add(
            "schema.root", "the root element must be <urlset> or <sitemapindex>", f"<{name}>"
        )
        return Document(root=root)
    if namespace != SITEMAP_NS:
        findings.add(
            "schema.namespace",
            f"<{name}> must be in the namespace {SITEMAP_NS}",
            f"namespace {namespace or '(none)'}",
        )
    document = Document(name, root=root)
    entry_name, fields = ENTRIES[name]
    _attributes(root, namespace, findings)
    _text(root, findings)
    rules = ExtensionRules(findings, now) if name == "urlset" else None
    entries = 0
    for child in _elements(root):
        child_ns, child_name = _split(child.tag)
        if child_ns == namespace and child_name == entry_name:
            entries += 1
            found = _entry(child, namespace, entries, fields, now, findings, rules)
            if found is not None:
                document.locs.append(found[0])
                document.lastmods.append(found[1])
        elif child_ns and child_ns != namespace:
            if entries:
                findings.add(
                    "schema.order",
                    f"elements of other namespaces may only precede the <{entry_name}> entries",
                    f"<{child_name}> ({child_ns})",
                )
            _extension(child_ns, child_name, findings)
        else:
            findings.add(
                "schema.unexpected",
                f"<{name}> may hold only <{entry_name}> entries",
                f"<{child_name}>",
            )
    document.entries = entries
    if entries == 0:
        findings.add("schema.empty", f"<{name}> must hold at least one <{entry_name}>")
    most, code = (MAX_URLS, "limit.urls") if name == "urlset" else (MAX_CHILDREN, "limit.children")
    if entries > most:
        findings.add(code, f"more than {most:,} <{entry_name}> entries", f"{entries:,}")
    if rules is not None:
        document.alternates = rules.alternates
        rules.finish(document.locs)
    _duplicates(document.locs, findings)
    if check_scope:
        code = "scope.loc" if name == "urlset" else "scope.child"
        for loc in document.locs:
            problem = scope_problem(loc, url)
            if problem is not None:
                findings.add(code, f"loc {problem}", loc)
    return document


def _entry(
    element: etree._Element,
    namespace: str,
    number: int,
    fields: tuple[str, ...],
    now: datetime,
    findings: Findings,
    rules: ExtensionRules | None = None,
) -> tuple[str, str | None] | None:
    """Check one ``url``/``sitemap`` entry; its loc and lastmod (stripped) when it has a loc."""
    plain = _plain_entry(element, namespace, fields)
    if plain is None:
        plain = _any_entry(element, namespace, number, fields, findings)
    values, extensions = plain
    loc = values.get("loc")
    entry_name = _split(element.tag)[1]
    where = loc.strip() if loc is not None else f"<{entry_name}> #{number}"
    if loc is None:
        findings.add("schema.loc-missing", f"<{entry_name}> has no <loc>", where)
        return None
    for code, message in loc_problems(loc):
        findings.add(code, message, loc)
    if (lastmod := values.get("lastmod")) is not None:
        for code, message in lastmod_problems(lastmod, now):
            findings.add(code, message, f"{lastmod} ({where})")
    changefreq = values.get("changefreq")
    if changefreq is not None and (problem := changefreq_problem(changefreq)) is not None:
        findings.add("schema.changefreq", problem, f"{changefreq!r} ({where})")
    priority = values.get("priority")
    if priority is not None and (problem := priority_problem(priority)) is not None:
        findings.add("schema.priority", problem, f"{priority} ({where})")
    loc = loc.strip(XML_WHITESPACE)
    if rules is not None and extensions:
        rules.url(loc, extensions)
    return loc, lastmod.strip(XML_WHITESPACE) if lastmod is not None else None


@functools.cache
def _plain_shapes(namespace: str, fields: tuple[str, ...]) -> frozenset[tuple[str, ...]]:
    """Every valid sequence of an entry's own children: loc, then any later fields in order."""
    tags = [f"{{{namespace}}}{name}" for name in fields]
    return frozenset(
        (tags[0], *rest)
        for size in range(len(tags))
        for rest in itertools.combinations(tags[1:], size)
    )


def _plain_entry(
    element: etree._Element, namespace: str, fields: tuple[str, ...]
) -> tuple[dict[str, str], list[etree._Element]] | None:
    """The values and extension elements of an entry in the common shape (its fields in
    order, then elements of known extension namespaces, nothing else), or None."""
    if element.attrib or (element.text and element.text.strip(XML_WHITESPACE)):
        return None
    children = list(element)
    own = f"{{{namespace}}}"
    split = len(children)
    for position, child in enumerate(children):
        if not (isinstance(child.tag, str) and child.tag.startswith(own)):
            split = position
            break
    if tuple(child.tag for child in children[:split]) not in _plain_shapes(namespace, fields):
        return None
    values = {}
    for child in children[:split]:
        if len(child) or child.attrib or (child.tail and child.tail.strip(XML_WHITESPACE)):
            return None
        values[child.tag[len(own) :]] = child.text or ""
    extensions = children[split:]
    for child in extensions:
        tag = child.tag
        if (
            not isinstance(tag, str)
            or tag[1 : tag.find("}")] not in KNOWN_EXTENSIONS
            or (child.tail and child.tail.strip(XML_WHITESPACE))
        ):
            return None
    return values, extensions


def _any_entry(
    element: etree._Element,
    namespace: str,
    number: int,
    fields: tuple[str, ...],
    findings: Findings,
) -> tuple[dict[str, str], list[etree._Element]]:
    """The values of an entry of any shape, with a finding for every structural problem, and
    its elements of other namespaces."""
    entry_name = _split(element.tag)[1]
    _attributes(element, namespace, findings)
    _text(element, findings)
    values: dict[str, str] = {}
    extensions: list[etree._Element] = []
    order: list[str] = []
    position = -1
    extension_seen = False
    out_of_order = False
    for child in _elements(element):
        child_ns, name = _split(child.tag)
        order.append(name)
        if child_ns == namespace and name in fields:
            index = fields.index(name)
            if name in values:
                findings.add("schema.order", f"<{entry_name}> repeats <{name}>")
            elif index < position or extension_seen:
                out_of_order = True
            position = max(position, index)
            _attributes(child, namespace, findings)
            values.setdefault(name, _simple(child, findings))
        elif child_ns and child_ns != namespace:
            extension_seen = True
            extensions.append(child)
            _extension(child_ns, name, findings)
        else:
            findings.add(
                "schema.unexpected",
                f"<{entry_name}> may hold only {', '.join(fields)} and extension elements",
                f"<{name}>",
            )
    if out_of_order:
        where = values.get("loc", f"<{entry_name}> #{number}").strip()
        findings.add(
            "schema.order",
            f"the children of <{entry_name}> must come in the order {', '.join(fields)}, "
            "then extension elements",
            f"{', '.join(order)} ({where})",
        )
    return values, extensions


def _duplicates(locs: list[str], findings: Findings) -> None:
    """Locs that name one resource, however spelt (``a b``, ``a%20b``), listed twice."""
    if len(set(locs)) == len(locs) and len({resource(loc) for loc in locs}) == len(locs):
        return
    spellings: dict[str, list[str]] = {}
    for loc in locs:
        spellings.setdefault(resource(loc), []).append(loc)
    for found in spellings.values():
        if len(found) > 1:
            others = sorted(set(found) - {found[0]})
            also = f", also spelt {', '.join(others)}" if others else ""
            findings.add(
                "duplicate.loc",
                "loc listed more than once",
                f"{found[0]} ({len(found)} times{also})",
            )


def _extension(namespace: str, name: str, findings: Findings) -> None:
    if namespace in KNOWN_EXTENSIONS:
        return
    meant = _near_miss(namespace)
    if meant is not None:
        findings.add(
            "schema.extension-namespace",
            "the namespace is a misspelling of a known one; crawlers match namespaces exactly, "
            "so they ignore these elements",
            f"<{name}> in {namespace}, not {meant}",
        )
        return
    findings.add(
        "schema.extension",
        "element of an unknown namespace (the XSD demands a declaration for it)",
        f"<{name}> ({namespace})",
    )


@functools.lru_cache(maxsize=64)
def _near_miss(namespace: str) -> str | None:
    """The known namespace ``namespace`` misspells (scheme, ``www.``, case, version, a trailing
    slash), or None."""
    return _NEAR_MISS_KEYS.get(_near_miss_key(namespace))


def _attributes(element: etree._Element, namespace: str, findings: Findings) -> None:
    for attribute in element.attrib:
        if not str(attribute).startswith("{" + XSI_NS + "}"):
            findings.add(
                "schema.attribute",
                "sitemap elements take no attributes (only xsi:*)",
                f"<{_split(element.tag)[1]} {_split(str(attribute))[1]}=...>",
            )


def _text(element: etree._Element, findings: Findings) -> None:
    """Element-only content: no text between the children (comments may carry tails)."""
    texts = [element.text, *(child.tail for child in element)]
    if any(text and text.strip(XML_WHITESPACE) for text in texts):
        name = _split(element.tag)[1]
        findings.add("schema.text", "text outside the elements", f"<{name}>")


def _simple(element: etree._Element, findings: Findings) -> str:
    """The text of a simple-typed element; comments inside it are skipped, as the XSD does."""
    parts = [element.text or ""]
    for child in element:
        if isinstance(child.tag, str):
            findings.add(
                "schema.unexpected",
                f"<{_split(element.tag)[1]}> holds text only",
                f"<{_split(child.tag)[1]}>",
            )
        parts.append(child.tail or "")
    return "".join(parts)


def _elements(element: etree._Element) -> Iterator[etree._Element]:
    """Child elements, skipping comments, processing instructions and entity references."""
    return (child for child in element if isinstance(child.tag, str))


def _split(tag: object) -> tuple[str, str]:
    text = str(tag)
    if text.startswith("{"):
        namespace, _, name = text[1:].partition("}")
        return namespace, name
    return "", text
