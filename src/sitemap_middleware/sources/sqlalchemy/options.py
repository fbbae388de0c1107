"""The options of a SQLAlchemy source, checked once: what the statements and the row
mapping are built from (no choice of how rows are read: see :mod:`.sql_reads`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import DateTime, Integer, Select
from sqlalchemy.engine import Dialect, Row
from sqlalchemy.sql.elements import ColumnElement

from ...core.spec import CHANGEFREQS
from ...output.entry import format_priority
from ...settings import ConfigurationError, ConfigurationTypeError
from ..base import check_name
from .change_counter import ChangeCounter
from .locs import LocTemplate
from .stored_dates import Parser, text_parser

LocSpec = str | Callable[[Row[Any]], str]
if TYPE_CHECKING:
    # A select of any columns (SQLAlchemy 2.1 types a select by its column types).
    AnySelect = Select[*tuple[Any, ...]]
    VersionSpec = ChangeCounter | AnySelect | Callable[[], Any] | None


@dataclass(frozen=True)
class SQLOptions:
    """A source's options, validated: the columns by name and by position in the select."""

    name: str
    stmt: AnySelect
    """The select, ordered by the key."""
    dialect: Dialect
    columns: tuple[str, ...]
    loc: Callable[[Any], Any]
    key_names: tuple[str, ...]
    key_index: tuple[int | None, ...]
    key_columns: tuple[ColumnElement[Any], ...]
    lastmod_name: str | None
    lastmod_index: int | None
    changefreq: str | None
    changefreq_name: str | None
    changefreq_index: int | None
    priority: float | None
    priority_name: str | None
    priority_index: int | None
    version: VersionSpec
    lastmod_parser: Parser | None
    """A lastmod the database keeps as text (SQLite) is read as text and parsed here."""
    lastmod_in_utc: bool
    """A timestamptz keeps no offset: psycopg gives it in the session's TimeZone, asyncpg
    in UTC. Written in UTC, the bytes depend on the data alone, not on the connection."""
    nullable_key: bool
    fixed_ranges: bool
    """A single integer key pages by fixed key ranges; any other unique key is cut at
    every page_size-th key (window functions: SQLite 3.25+, PostgreSQL)."""
    fingerprint: str

    @property
    def used(self) -> set[int | None]:
        """The positions of the columns the mapping reads (None among them when one is unset)."""
        used = {*self.key_index, self.lastmod_index, self.changefreq_index, self.priority_index}
        if isinstance(self.loc, LocTemplate):
            used |= self.loc.fields
        return used


def sql_options(
    stmt: AnySelect,
    *,
    name: str,
    loc: LocSpec,
    lastmod: str | None,
    changefreq: str | None,
    changefreq_column: str | None,
    priority: float | None,
    priority_column: str | None,
    key: str | Sequence[str] | None,
    version: VersionSpec,
    dialect: Dialect,
    query_id: str | None = None,
) -> SQLOptions:
    """The options checked, in the order their errors are reported."""
    name = check_name(name)
    if not isinstance(stmt, Select):
        raise ConfigurationTypeError(
            f"stmt: source {name!r} needs a sqlalchemy select(), got {type(stmt).__name__}"
        )
    columns = [str(c.key) for c in stmt.selected_columns]
    selected = stmt.selected_columns
    row_loc, loc_fingerprint = _loc(name, loc, columns)
    key_names = _key_names(name, key, stmt)
    key_index = [_column_index(name, columns, "key", k) for k in key_names]
    key_columns: list[ColumnElement[Any]] = [selected[k] for k in key_names]
    _check_constants(name, changefreq, changefreq_column, priority, priority_column, version)
    lastmod_index = _column_index(name, columns, "lastmod", lastmod)
    lastmod_type = selected[lastmod_index].type if lastmod_index is not None else None
    ordered = stmt.order_by(None).order_by(*key_columns)
    fingerprint = "|".join(
        [
            "sqlalchemy",
            _query_named(name, query_id, ordered),
            loc_fingerprint,
            repr((lastmod, changefreq, changefreq_column, priority, priority_column)),
            repr(key_names),
        ]
    )
    return SQLOptions(
        name=name,
        stmt=ordered,
        dialect=dialect,
        columns=tuple(columns),
        loc=row_loc,
        key_names=tuple(key_names),
        key_index=tuple(key_index),
        key_columns=tuple(key_columns),
        lastmod_name=lastmod,
        lastmod_index=lastmod_index,
        changefreq=changefreq,
        changefreq_name=changefreq_column,
        changefreq_index=_column_index(name, columns, "changefreq_column", changefreq_column),
        priority=priority,
        priority_name=priority_column,
        priority_index=_column_index(name, columns, "priority_column", priority_column),
        version=version,
        lastmod_parser=(
            text_parser(selected[lastmod_index], dialect) if lastmod_index is not None else None
        ),
        lastmod_in_utc=isinstance(lastmod_type, DateTime) and bool(lastmod_type.timezone),
        nullable_key=any(getattr(c, "nullable", True) for c in key_columns),
        fixed_ranges=len(key_columns) == 1 and isinstance(key_columns[0].type, Integer),
        fingerprint=fingerprint,
    )


def _query_named(name: str, query_id: str | None, ordered: AnySelect) -> str:
    """What names the query in validators: its SQL text, or the name the application gives
    it (the same for one query written for SQLAlchemy and as a Django QuerySet, and across
    versions that compile it to other text)."""
    if query_id is None:
        return str(ordered.compile(compile_kwargs={"literal_binds": False}))
    if not isinstance(query_id, str) or not query_id:
        raise ConfigurationTypeError(
            f"query_id: source {name!r}: must be a non-empty string naming the query, "
            f"got {query_id!r}"
        )
    return f"query_id={query_id}"


def _column_index(name: str, columns: list[str], setting: str, column: str | None) -> int | None:
    if column is None:
        return None
    if column not in columns:
        raise ConfigurationError(
            f"{setting}: source {name!r}: {column!r} is not a selected column; "
            f"select it, or use one of: {', '.join(columns)}"
        )
    return columns.index(column)


def _loc(name: str, loc: LocSpec, columns: list[str]) -> tuple[Callable[[Any], Any], str]:
    """The loc of a row, and what names it in the fingerprint."""
    if isinstance(loc, str):
        return LocTemplate(loc, columns), loc
    if callable(loc):
        return loc, f"{loc.__module__}.{getattr(loc, '__qualname__', repr(loc))}"
    raise ConfigurationTypeError(
        f"loc: source {name!r}: must be a template string such as '/articles/{{slug}}' "
        f"or a callable taking the row, got {type(loc).__name__}"
    )


def _key_names(name: str, key: str | Sequence[str] | None, stmt: AnySelect) -> list[str]:
    if key is not None:
        return [key] if isinstance(key, str) else list(key)
    selected = stmt.selected_columns
    key_names = [str(c.key) for c in selected if getattr(c, "primary_key", False)]
    if not key_names:
        raise ConfigurationError(
            f"key: source {name!r}: cannot tell the row key; select the primary key or "
            "pass key='column' (a unique, indexed column)"
        )
    return key_names


def _check_constants(
    name: str,
    changefreq: str | None,
    changefreq_column: str | None,
    priority: float | None,
    priority_column: str | None,
    version: VersionSpec,
) -> None:
    if changefreq is not None and changefreq not in CHANGEFREQS:
        raise ConfigurationError(
            f"changefreq: source {name!r}: {changefreq!r} is not one of "
            f"{', '.join(sorted(CHANGEFREQS))}"
        )
    if changefreq is not None and changefreq_column is not None:
        raise ConfigurationError(
            f"changefreq: source {name!r}: give changefreq or changefreq_column, not both"
        )
    if priority is not None:
        try:
            format_priority(priority)
        except (ValueError, TypeError) as exc:
            raise ConfigurationError(
                f"priority: source {name!r}: {exc}; give a number from 0.0 to 1.0"
            ) from None
    if priority is not None and priority_column is not None:
        raise ConfigurationError(
            f"priority: source {name!r}: give priority or priority_column, not both"
        )
    if version is not None and not (
        isinstance(version, ChangeCounter | Select) or callable(version)
    ):
        raise ConfigurationTypeError(
            f"version: source {name!r}: must be a ChangeCounter, a scalar select() or a "
            f"callable, got {type(version).__name__}"
        )
