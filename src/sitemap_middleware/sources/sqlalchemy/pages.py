"""The pages of a SQLAlchemy source, in one statement over the whole select: fixed
integer key ranges grouped by ``key // page_size``, or runs of ``page_size`` rows in key order
(cuts) for any other key."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, null, or_, select
from sqlalchemy.engine import Row
from sqlalchemy.sql.elements import ColumnElement

from ...core.dates import AsOf
from ..base import Page
from .summaries import lastmod_moments

if TYPE_CHECKING:
    from .options import AnySelect, SQLOptions
    from .statements import SQLStatements

logger = logging.getLogger("sitemap_middleware")


class SQLPages:
    """The statements that find a source's pages, and their rows read as pages."""

    def __init__(self, options: SQLOptions, statements: SQLStatements) -> None:
        self.statements = statements
        self.aggregates = statements.aggregates
        self.stmt = options.stmt
        self.name = options.name
        self.key_names = options.key_names
        self.lastmod_name = options.lastmod_name
        self.fixed_ranges = options.fixed_ranges
        self._nulls_reported: Any = None

    def pages_stmt(self, page_size: int) -> AnySelect:
        """One aggregate over the whole select: per page (fixed integer ranges) its number,
        count, lowest key, checksum, newest served and earliest future lastmod; or the cuts
        of a source with another key. Built once per page size."""
        if not self.fixed_ranges:
            return self.cuts_stmt(page_size)
        return self.statements.built(("pages", page_size), lambda: self._pages_stmt(page_size))

    def _pages_stmt(self, page_size: int) -> AnySelect:
        rows = self.statements.keyed(self.stmt).order_by(None).subquery("sitemap_rows")
        key = rows.c[self.key_names[0]]
        page = (key // page_size).label("page")
        term = self.aggregates.term(rows.c.__getitem__)
        columns: list[ColumnElement[Any]] = [
            page,
            func.count(),
            func.min(key),
            func.sum(term) if term is not None else null(),
        ]
        if self.lastmod_name is not None:
            lastmod = rows.c[self.lastmod_name]
            columns += [self.aggregates.newest(lastmod), self.aggregates.earliest(lastmod)]
        return select(*columns).group_by(page).order_by(page)

    def cuts_stmt(self, page_size: int) -> AnySelect:
        """Per run of ``page_size`` rows in key order: its number, count, checksum, newest served
        and earliest future lastmod, and its last key.

        One statement (one snapshot, one pass in key order): rows are numbered,
        grouped ``page_size`` at a time, and only each group's last row is returned.
        Built once per page size.
        """
        return self.statements.built(("cuts", page_size), lambda: self._cuts_stmt(page_size))

    def _cuts_stmt(self, page_size: int) -> AnySelect:
        rows = self.statements.keyed(self.stmt).order_by(None).subquery("sitemap_rows")
        keys = [rows.c[name] for name in self.key_names]
        lastmod = self.lastmod_name
        term = self.aggregates.term(rows.c.__getitem__)
        numbered = select(
            *keys,
            *([rows.c[lastmod].label("sitemap_lastmod")] if lastmod is not None else []),
            *([term.label("sitemap_term")] if term is not None else []),
            func.row_number().over(order_by=keys).label("sitemap_rn"),
            func.count().over().label("sitemap_total"),
        ).subquery("numbered")
        grouped = select(
            numbered,
            ((numbered.c.sitemap_rn - 1) // page_size).label("sitemap_page"),
        ).subquery("grouped")
        page = grouped.c.sitemap_page
        moments = []
        if lastmod is not None:
            column = grouped.c.sitemap_lastmod
            moments = [
                self.aggregates.newest(column, page).label("sitemap_newest"),
                self.aggregates.earliest(column, page).label("sitemap_expires"),
            ]
        checksum = (
            func.sum(grouped.c.sitemap_term).over(partition_by=page) if term is not None else null()
        )
        windowed = select(
            *(grouped.c[name] for name in self.key_names),
            page,
            grouped.c.sitemap_rn,
            grouped.c.sitemap_total,
            func.count().over(partition_by=page).label("sitemap_count"),
            checksum.label("sitemap_checksum"),
            *moments,
        ).subquery("windowed")
        last = or_(
            windowed.c.sitemap_rn % page_size == 0,
            windowed.c.sitemap_rn == windowed.c.sitemap_total,
        )
        columns = [windowed.c.sitemap_page, windowed.c.sitemap_count, windowed.c.sitemap_checksum]
        if lastmod is not None:
            columns += [windowed.c.sitemap_newest, windowed.c.sitemap_expires]
        columns += [windowed.c[name] for name in self.key_names]
        return select(*columns).where(last).order_by(windowed.c.sitemap_rn)

    def report_nulls(self, count: Any) -> None:
        """Log rows with a NULL key, once per count: they are on no page."""
        if not count or count == self._nulls_reported:
            return
        self._nulls_reported = count
        logger.warning(
            "bad sitemap rows: source %r: %d rows have a NULL key (%s) and are not listed; "
            "give them a key or leave them out of the select",
            self.name,
            count,
            ", ".join(self.key_names),
        )

    def pages(self, rows: Sequence[Row[Any]], as_of: AsOf) -> list[Page] | None:
        """The pages :meth:`pages_stmt` found; None when a key below 0 means the source
        must be cut (read :meth:`cuts_stmt` and give its rows to :meth:`cuts`)."""
        if not self.fixed_ranges:
            return self.cuts(rows, as_of)
        epochs = self.aggregates.as_text  # SQLite's lastmod aggregates are epochs
        out = []
        for row in rows:
            values = tuple(row)
            if values[2] < 0:
                return None
            newest, expires = lastmod_moments(
                self.aggregates,
                self.lastmod_name,
                values[4:6],
                as_of,
                epochs,
            )
            out.append(Page(int(values[0]), int(values[1]), newest, None, str(values[3]), expires))
        return out

    def cuts(self, rows: Sequence[Row[Any]], as_of: AsOf) -> list[Page]:
        first_key = 5 if self.lastmod_name is not None else 3
        epochs = self.aggregates.as_text  # SQLite's lastmod aggregates are epochs
        out = []
        for row in rows:
            values = tuple(row)
            newest, expires = lastmod_moments(
                self.aggregates,
                self.lastmod_name,
                values[3:5],
                as_of,
                epochs,
            )
            last = values[first_key:]
            out.append(
                Page(int(values[0]), int(values[1]), newest, tuple(last), str(values[2]), expires)
            )
        return out
