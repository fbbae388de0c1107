"""A small real site wrapped by the sitemap middleware: ``python -m example_app``."""
