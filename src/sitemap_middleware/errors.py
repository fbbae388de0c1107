"""Optional dependencies: the error that names the extra to install.

The core needs only anyio: lists, generators and custom sources are served without
anything else. SQLAlchemy, Django, httpx and lxml come with the extras and are imported
by the modules that use them, never by the core (``tests/test_imports.py`` reads the
imports to hold it so). A module that needs one imports it in ``try`` and turns a missing
one into :class:`MissingExtra`, so that the error says what to install.
"""

from __future__ import annotations

from .settings import ConfigurationError


class MissingExtra(ConfigurationError, ModuleNotFoundError):
    """A feature's optional dependency is not installed; the message names the extra that
    installs it (``pip install 'sitemap_middleware[sqlalchemy]'``).

    A :class:`ModuleNotFoundError` (``name`` is the missing module), so ``except
    ImportError`` sees it, and a :class:`~sitemap_middleware.ConfigurationError`, as any
    other mistake of the setup.
    """

    @classmethod
    def of(cls, error: ImportError, feature: str, extra: str) -> MissingExtra:
        """``error`` (the failed import) said in terms of the feature and its extra."""
        missing = (error.name or "a dependency").partition(".")[0]
        exc = cls(
            f"{feature} needs {missing}, which is not installed: "
            f"pip install 'sitemap_middleware[{extra}]'"
        )
        exc.name = missing  # ValueError's constructor comes first and takes no name=
        return exc
