"""``core.spec`` says what the official XSDs say, and the writer writes by it.

The XSDs are not shipped, so ``sitemap-middleware check`` applies the structure rules
written in ``core.spec`` (and the XSDs too with ``--schemas``); the writer follows the
same declarations. Here each declaration is read back from the schema files.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from lxml import etree

from sitemap_middleware.core import spec
from sitemap_middleware.core.urls import Site
from sitemap_middleware.output.extensions import Video, video_xml
from sitemap_middleware.output.xml import UrlFields, sitemap_element, url_element

from ..support import SCHEMAS

XS = "{http://www.w3.org/2001/XMLSchema}"


def _schema(name: str) -> etree._Element:
    return etree.parse(str(SCHEMAS / name)).getroot()


def _sequence(schema: etree._Element, type_name: str) -> list[etree._Element]:
    (found,) = schema.iterfind(f"{XS}complexType[@name='{type_name}']/{XS}sequence")
    return list(found.iterfind(f"{XS}element"))


def _facet(schema: etree._Element, type_name: str, facet: str) -> str:
    (found,) = schema.iterfind(f".//{XS}simpleType[@name='{type_name}']//{XS}{facet}")
    return str(found.get("value"))


def _entry(schema: etree._Element, root: str) -> tuple[str, str]:
    (element,) = schema.iterfind(f"{XS}element[@name='{root}']//{XS}element")
    return str(element.get("name")), str(element.get("type"))


def test_the_entries_are_the_xsds() -> None:
    for root, file in (("urlset", "sitemap.xsd"), ("sitemapindex", "siteindex.xsd")):
        schema = _schema(file)
        entry, entry_type = _entry(schema, root)
        fields = _sequence(schema, entry_type)
        assert spec.ENTRIES[root] == (entry, tuple(str(e.get("name")) for e in fields))
        # loc is required, every other field optional.
        assert [e.get("minOccurs", "1") for e in fields] == ["1"] + ["0"] * (len(fields) - 1)


def test_the_values_are_the_xsds() -> None:
    schema = _schema("sitemap.xsd")
    assert _facet(schema, "tLoc", "minLength") == str(spec.MIN_LOC_LENGTH)
    assert _facet(schema, "tLoc", "maxLength") == str(spec.XSD_MAX_LOC_LENGTH)
    assert spec.MAX_LOC_LENGTH == spec.XSD_MAX_LOC_LENGTH - 1  # "less than 2,048"
    words = schema.iterfind(f".//{XS}simpleType[@name='tChangeFreq']//{XS}enumeration")
    assert tuple(str(word.get("value")) for word in words) == spec.CHANGEFREQS
    assert Decimal(_facet(schema, "tPriority", "minInclusive")) == Decimal(spec.MIN_PRIORITY)
    assert Decimal(_facet(schema, "tPriority", "maxInclusive")) == Decimal(spec.MAX_PRIORITY)
    assert schema.get("targetNamespace") == spec.SITEMAP_NS


def test_the_video_fields_follow_the_xsd() -> None:
    schema = _schema("sitemap-video.xsd")
    (video,) = schema.iterfind(f"{XS}element[@name='video']/{XS}complexType/{XS}sequence")
    order = [str(e.get("name")) for e in video.iterfind(f"{XS}element")]
    assert [name for name in order if name in spec.VIDEO_FIELDS] == list(spec.VIDEO_FIELDS)
    required = [
        str(e.get("name")) for e in video.iterfind(f"{XS}element") if "minOccurs" not in e.attrib
    ]
    assert tuple(required) == spec.VIDEO_REQUIRED
    assert set(spec.VIDEO_PLAYABLE) <= set(order)


def _children(xml: str, namespace: str) -> list[str]:
    element = etree.fromstring(xml.replace(">", f' xmlns="{namespace}">', 1))
    return [etree.QName(child).localname for child in element]


def test_the_writer_writes_in_the_declared_order() -> None:
    url = UrlFields("https://example.com/a", "2024-01-02", "daily", "0.5")
    assert _children(url_element(url), spec.SITEMAP_NS) == list(spec.URL_FIELDS)
    assert _children(
        sitemap_element("https://example.com/s.xml", "2024-01-02"), spec.SITEMAP_NS
    ) == list(spec.SITEMAP_FIELDS)
    site = Site.build("https://example.com/", "/sitemap.xml")
    video = Video(
        "/t.jpg",
        "T",
        "D",
        content_loc="/v.mp4",
        player_loc="/p",
        duration=1,
        expiration_date="2030-01-01",
        rating=1.0,
        view_count=1,
        publication_date=datetime(2024, 1, 2, tzinfo=UTC),
        tags=["a"],
        family_friendly=True,
        restriction=("allow", ["US"]),
        requires_subscription=False,
        uploader="U",
        platform=("allow", ["web"]),
        live=False,
    )
    written = video_xml(video, site, UTC).replace("video:", "")
    assert _children(written, spec.VIDEO_NS) == list(spec.VIDEO_FIELDS)
