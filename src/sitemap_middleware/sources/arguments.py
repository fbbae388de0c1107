"""The ``sources`` argument: what a user passes, turned into uniquely named sources."""

from __future__ import annotations

from collections.abc import Mapping

from ..settings import ConfigurationError, ConfigurationTypeError
from .base import AnySource, Source
from .iterable import as_source


def build_sources(value: object) -> list[AnySource]:
    """Sources from what a user passes: a source, a list of sources, a name -> source mapping,
    or one list of entries/URLs or (async) generator function (named ``urls``)."""
    if isinstance(value, Source):
        sources = [value]
    elif isinstance(value, Mapping):
        sources = []
        for name, item in value.items():
            if not isinstance(name, str):
                raise ConfigurationTypeError(
                    f"sources: the names of a mapping of sources must be strings, got {name!r}"
                )
            source = as_source(item, name)
            if source.name != name:
                raise ConfigurationError(
                    f"sources: the source under {name!r} is named {source.name!r}; use one name"
                )
            sources.append(source)
    elif isinstance(value, list | tuple) and value and all(isinstance(v, Source) for v in value):
        sources = list(value)
    else:
        try:
            sources = [as_source(value, "urls")]
        except ConfigurationError:
            raise
        except TypeError as exc:
            raise ConfigurationError(f"sources: {exc}") from None
    if not sources:
        raise ConfigurationError("sources: give at least one source")
    names = [source.name for source in sources]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ConfigurationError(f"sources: names must be unique; repeated: {duplicates}")
    return sources  # type: ignore[return-value]
