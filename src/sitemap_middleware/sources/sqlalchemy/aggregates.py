"""The aggregates that let a SQL source's summary follow the bytes it serves.

* A **checksum** of every row's values that feed a served byte: the key, the
  lastmod (at the precision it is stored), changefreq and priority, and the
  *shown* columns (a loc template's fields, an image column; every selected
  column when a loc callable or an extension function takes the row). It is the
  sum of a per-row hash, so that an insert, delete or edit of any of them (also
  two rows trading values) changes it. PostgreSQL hashes the row's text with
  ``hashtextextended`` (dates as epochs with their microseconds, never as text,
  so the session's time zone and date style cannot make replicas disagree).
  SQLite has no hash function: its term is modular arithmetic on an integer key
  and codes of the changefreq and priority, and the CRC-32 of the stored values of
  the other columns (a text key, the lastmod's text with its fraction of a second,
  the shown columns) from ``sitemap_row_hash`` (:mod:`.sqlite_hash`), a function
  registered on the connection.
* The **newest lastmod served**: the newest one not later than ``listed_until``
  (now + ``lastmods.tolerance``, a bound parameter), and the **earliest future**
  one, after which a remembered summary is stale. SQLite keeps dates as text,
  and texts do not sort as moments ('T' after ' ', offsets): its lastmods are
  compared as epochs of the texts that read as dates (a day that exists), in
  one pass with the count and checksum, so a value that fails to parse cannot
  hide the valid newest one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta, tzinfo
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Date,
    DateTime,
    Float,
    Integer,
    LargeBinary,
    Numeric,
    String,
    Text,
    and_,
    bindparam,
    case,
    cast,
    extract,
    func,
    literal_column,
    null,
    select,
    type_coerce,
)
from sqlalchemy.sql.elements import BindParameter, ColumnElement
from sqlalchemy.sql.selectable import FromClause

from ...core.dates import AsOf, to_utc
from ...core.spec import CHANGEFREQS
from .sqlite_hash import ROW_HASH
from .stored_dates import Parser, parse_one

LISTED_UNTIL = "sitemap_listed_until"
"""The bound parameter holding ``listed_until``, in the lastmod column's own type."""
LISTED_UNTIL_EPOCH = "sitemap_listed_until_epoch"
"""``listed_until`` as an epoch of the stored wall clock (SQLite key ranges)."""

# SQLite term: (K * V) mod P mod Q, with K = 2 * (key mod M) + 1 (odd, never 0) and V the
# fields mod P: codes of the changefreq and priority and the CRC-32 of the other stored
# values (the lastmod's text among them). P is a prime wider than a CRC, so one edit of
# one value always moves V; (2M + 1) * P < 2**63 keeps every product an integer;
# Q < 2**32 lets a sum of 2**31 terms stay an integer.
_P = 549_755_813_881
_Q = 4_294_967_291
_M = 8_388_593
_CHANGEFREQS = "," + ",".join(CHANGEFREQS) + ","  # codes: positions in this text
# What str.strip() removes (the renderer reads " Daily\t" as "daily").
_WHITESPACE = "".join(chr(c) for c in range(0x3100) if chr(c).isspace())

Columns = Callable[[str], ColumnElement[Any]]


class Aggregates:
    """The dialect's expressions for one source's checksum, newest and earliest future lastmod."""

    def __init__(
        self,
        dialect: str,
        key_columns: Sequence[tuple[str, Any]],
        lastmod: tuple[str, Any] | None,
        changefreq: str | None,
        priority: str | None,
        parser: Parser | None,
        shown: Sequence[tuple[str, Any]] = (),
        types: Mapping[str, Any] | None = None,
    ) -> None:
        self.dialect = dialect
        self.keys = list(key_columns)
        self.shown = list(shown)
        """The other columns that feed served bytes (name, type)."""
        self.types = dict(types or {})
        """Every selected column's type, by name (how PostgreSQL's hash joins its value)."""
        self.lastmod = lastmod
        self.changefreq, self.priority = changefreq, priority
        self.parser = parser
        self.as_text = dialect == "sqlite"
        lastmod_type = lastmod[1] if lastmod is not None else None
        self.lastmod_type = lastmod_type
        self.is_date = isinstance(lastmod_type, Date) and not isinstance(lastmod_type, DateTime)
        self.is_datetime = isinstance(lastmod_type, DateTime)
        self.epochs = dialect == "postgresql" and (self.is_date or self.is_datetime)
        self.aware = isinstance(lastmod_type, DateTime) and bool(lastmod_type.timezone)
        self.listed_until: BindParameter[Any] = _listed_until_param(lastmod_type)
        self.listed_until_epoch: BindParameter[Any] = bindparam(
            LISTED_UNTIL_EPOCH, type_=BigInteger
        )
        self.hashed = [
            *(name for name, type_ in self.keys if not isinstance(type_, Integer)),
            *([lastmod[0]] if lastmod is not None else []),
            *(name for name, _ in self.shown),
        ]
        """SQLite: the columns whose stored values ``sitemap_row_hash`` reads."""
        self.row_hash = dialect == "sqlite" and bool(self.hashed)
        """Whether the statements with a checksum call ``sitemap_row_hash``: the connection
        that runs them needs it (:func:`.sqlite_hash.ensure`)."""

    # -- checksum -------------------------------------------------------------------------

    def term(self, c: Columns) -> ColumnElement[Any] | None:
        """The per-row hash whose sum is the checksum; None on a dialect without one. The
        same expression in every statement (a page's summary, the pages of a recount, the
        cuts): the same rows give the same checksum whichever read them."""
        if self.dialect == "postgresql":
            return self._postgres_term(c)
        if self.dialect == "sqlite":
            return self._sqlite_term(c)
        return None

    def _postgres_term(self, c: Columns) -> ColumnElement[Any]:
        # Numbers and epochs hold no control character: joined by U+001F, NULL as U+001E.
        # Texts may hold anything: each but the last is prefixed with its length and the
        # last with '=', so no two rows' values join to the same text (cheaper than
        # quoting each value: a recount costs the same as without the texts).
        fixed: list[ColumnElement[Any]] = []
        texts: list[ColumnElement[Any]] = []

        def add(value: ColumnElement[Any], type_: Any) -> None:
            if isinstance(type_, Date | DateTime):
                # As its epoch (microseconds kept): its text would depend on the
                # session's TimeZone and DateStyle.
                fixed.append(cast(extract("epoch", value), Text))
            elif isinstance(type_, Integer | Numeric | Float | Boolean):
                fixed.append(cast(value, Text))
            else:
                texts.append(cast(value, Text))

        for name, type_ in self.keys:
            add(c(name), type_)
        if self.lastmod is not None:
            add(c(self.lastmod[0]), self.lastmod[1] if self.epochs else None)
        for column in (self.changefreq, self.priority):
            if column is not None:
                add(c(column), self.types.get(column))
        for name, type_ in self.shown:
            add(c(name), type_)
        marker: ColumnElement[Any] = literal_column("chr(30)")
        parts = [func.coalesce(value, marker) for value in fixed]
        for at, value in enumerate(texts):
            if at == len(texts) - 1:
                joined = literal_column("'='", Text).concat(value)
            else:
                length = cast(func.octet_length(value), Text)
                joined = length.concat(literal_column("':'", Text)).concat(value)
            parts.append(func.coalesce(joined, marker))
        row = func.concat_ws(literal_column("chr(31)"), *parts)
        return func.hashtextextended(row, literal_column("0"))

    def _sqlite_term(self, c: Columns) -> ColumnElement[Any]:
        # A row without a key is never served: its NULL term is left out of the sum.
        key: ColumnElement[Any] | None = None
        for name, type_ in self.keys:
            column = c(name)
            if isinstance(type_, Integer):
                feature: ColumnElement[Any] = column % _M
            else:  # text: its length and first and last characters (all of it: the row hash)
                feature = (
                    (func.length(column) * 1_114_112 + func.coalesce(func.unicode(column), 0))
                    * 1_114_112
                    + func.coalesce(func.unicode(func.substr(column, -1)), 0)
                ) % _M
            key = feature if key is None else (key + feature) % _M
        assert key is not None
        fields: ColumnElement[Any] | None = None
        extra: ColumnElement[Any] | None = None
        if self.changefreq is not None:
            column = c(self.changefreq)
            position = func.instr(
                _CHANGEFREQS, "," + func.lower(func.trim(column, _WHITESPACE)) + ","
            )
            extra = (func.coalesce(position, 0) + 64 * func.coalesce(func.length(column), 0)) * 4099
        if self.priority is not None:
            column = c(self.priority)
            number = type_coerce(column, Float)  # SQLite reads a text priority as a number too
            scaled = func.coalesce(cast(func.round(number * 1_000_000), BigInteger), 0) % _P
            shape = func.coalesce(func.length(column), 0) + case(
                (func.typeof(column) == "text", 64), else_=0
            )
            extra = (extra if extra is not None else 0) + scaled + shape * 4_194_304
        if extra is not None:
            fields = extra % _P
        if self.hashed:
            # The stored values as blobs: no text decoded, every value readable, and the
            # lastmod's text with whatever fraction of a second it holds (SQLite's date
            # functions read whole seconds, or milliseconds).
            crc = getattr(func, ROW_HASH)(
                *(cast(c(name), LargeBinary) for name in self.hashed), type_=BigInteger
            )
            fields = ((fields * 1_000_003 if fields is not None else 0) + crc) % _P
        if fields is None:
            fields = literal_column("1")
        return (2 * key + 1) * fields % _P % _Q

    # -- the newest lastmod served, the earliest future one --------------------------------

    def epoch(self, column: ColumnElement[Any]) -> ColumnElement[Any]:
        """SQLite: the epoch of a stored text that reads as a date, in whole seconds; NULL
        for one that does not. Texts compare as text, not as moments ('T' sorts after ' ',
        offsets move the instant): ``listed_until`` is compared with epochs.

        Per row, on every summary: cheap checks first. SQLite reads any day up to 31
        ('2024-02-30' as March 1st): only days 29 to 31 are checked against the
        calendar. It rounds a fraction to milliseconds ('.9995' is the next second),
        while the lastmod written drops the fraction: that second is taken back. A
        stored number (which SQLite would read as a Julian day) reads as no date.
        """
        epoch = func.unixepoch(column)
        date = func.substr(column, 1, 10)
        no_such_day = and_(func.substr(column, 9, 2) > "28", func.date(date, "+0 days") != date)
        rounded_up = and_(
            func.substr(column, 20, 1) == ".", func.substr(column, 21, 4).op("GLOB")("999[5-9]")
        )
        # A number is a Julian day to SQLite but no date to the renderer (a bad field).
        not_text = func.typeof(column) != "text"
        return case((not_text, null()), (no_such_day, null()), (rounded_up, epoch - 1), else_=epoch)

    def newest(
        self, column: ColumnElement[Any], window: ColumnElement[Any] | None = None
    ) -> ColumnElement[Any]:
        """An aggregate (over ``window``'s partitions if given): the newest lastmod not
        later than ``listed_until`` (SQLite: as an epoch)."""
        if self.as_text:
            epoch = self.epoch(column)
            return _over(func.max(case((epoch <= self.listed_until_epoch, epoch))), window)
        return self._read(_over(func.max(case((column <= self.listed_until, column))), window))

    def earliest(
        self, column: ColumnElement[Any], window: ColumnElement[Any] | None = None
    ) -> ColumnElement[Any]:
        """An aggregate (over ``window``'s partitions if given): the earliest lastmod later
        than ``listed_until`` (SQLite: as an epoch)."""
        if self.as_text:
            epoch = self.epoch(column)
            return _over(func.min(case((epoch > self.listed_until_epoch, epoch))), window)
        return self._read(_over(func.min(case((column > self.listed_until, column))), window))

    def _read(self, value: ColumnElement[Any]) -> ColumnElement[Any]:
        """As the driver can read it (PostgreSQL: the epoch, so that 'infinity' is a
        number and not a value the driver refuses)."""
        if self.epochs:
            return extract("epoch", value)
        return value

    def newest_alone(self, rows: FromClause, column: ColumnElement[Any]) -> ColumnElement[Any]:
        """:meth:`newest` as a scalar subquery a lastmod index answers (not SQLite: its
        lastmods come from :meth:`range_summary`)."""
        return (
            select(self._read(func.max(column)))
            .where(column <= self.listed_until)
            .select_from(rows)
            .scalar_subquery()
        )

    def earliest_alone(self, rows: FromClause, column: ColumnElement[Any]) -> ColumnElement[Any]:
        """:meth:`earliest` as a scalar subquery a lastmod index answers."""
        return (
            select(self._read(func.min(column)))
            .where(column > self.listed_until)
            .select_from(rows)
            .scalar_subquery()
        )

    @property
    def range_pass(self) -> bool:
        """SQLite: a key range's count, checksum and lastmods come from one pass over the
        range, each lastmod read once as an epoch (NULL for text that is no date)."""
        return self.dialect == "sqlite" and self.lastmod is not None

    def range_summary(
        self, rows: FromClause, names: Sequence[str], extremes: Sequence[ColumnElement[Any]]
    ) -> Any:
        """count, ``extremes``, checksum, newest served and earliest future epoch of
        ``rows`` (SQLite, a key range): one scan, no lastmod index walked."""
        assert self.lastmod is not None
        epoch = self.epoch(rows.c[self.lastmod[0]]).label("sitemap_epoch")
        # LIMIT -1 keeps SQLite from flattening the subquery (and computing each epoch thrice).
        scan = select(*(rows.c[name] for name in names), epoch).limit(-1).subquery("sitemap_scan")
        e = scan.c.sitemap_epoch
        term = self.term(scan.c.__getitem__)
        assert term is not None
        bound = self.listed_until_epoch
        return select(
            func.count(),
            *extremes,
            func.sum(term),
            func.max(case((e <= bound, e))),
            func.min(case((e > bound, e))),
        ).select_from(scan)

    def column_value(self, moment: datetime, naive_timezone: tzinfo) -> Any:
        """``moment`` (``listed_until``, a refresh's start) as the lastmod column holds its
        values (for a bound parameter).

        Fractions of a second are not written: a lastmod is future when its whole
        seconds are, so the bound covers ``moment``'s whole second."""
        if self.is_date:
            return moment.astimezone(UTC).date()
        last = moment.replace(microsecond=999_999)
        if self.aware:
            return last.astimezone(UTC)
        wall = last.astimezone(naive_timezone).replace(tzinfo=None)
        return wall if self.is_datetime else wall.isoformat()

    def listed_until_epochs(self, as_of: AsOf) -> int:
        """``listed_until`` as SQLite's ``unixepoch`` reads the stored wall clock (a date counts
        from midnight UTC)."""
        zone = UTC if self.is_date else as_of.naive_timezone
        wall = as_of.listed_until.astimezone(zone).replace(tzinfo=None)
        return int((wall - datetime(1970, 1, 1)).total_seconds())

    def moment(
        self,
        value: Any,
        as_of: AsOf,
        newest: bool,
        epochs: bool = False,
    ) -> datetime | None:
        """The newest served (``newest``) or earliest future lastmod an aggregate read,
        as an aware UTC datetime; None when there is none that reads as a date.
        ``epochs``: the value is SQLite's epoch of the stored wall clock."""
        if value is None:
            return None
        if self.epochs or epochs:
            return self._from_epoch(value, as_of.naive_timezone, wall=epochs)
        moment = to_utc(self._parsed(value), as_of.naive_timezone)
        if moment is None or (moment.replace(microsecond=0) <= as_of.listed_until) != newest:
            return None
        return moment

    def _parsed(self, text: Any) -> Any:
        if self.parser is not None and isinstance(text, str):
            return parse_one(text, self.parser)
        return text

    def _from_epoch(
        self, value: Any, naive_timezone: tzinfo, wall: bool = False
    ) -> datetime | None:
        if isinstance(value, Decimal) and not value.is_finite():
            return None
        try:
            moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=float(value))
        except (OverflowError, ValueError):
            return None
        if wall and self.is_date:
            return moment
        if wall or (self.is_datetime and not self.aware):  # the wall clock, in naive_timezone
            return to_utc(moment.replace(tzinfo=None), naive_timezone)
        return moment


def _over(aggregate: Any, window: ColumnElement[Any] | None) -> ColumnElement[Any]:
    result: ColumnElement[Any] = (
        aggregate if window is None else aggregate.over(partition_by=window)
    )
    return result


def _listed_until_param(lastmod_type: Any) -> BindParameter[Any]:
    type_ = lastmod_type if isinstance(lastmod_type, DateTime | Date) else String()
    return bindparam(LISTED_UNTIL, type_=type_)
