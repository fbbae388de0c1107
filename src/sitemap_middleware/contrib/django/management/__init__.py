"""Management commands of sitemap_middleware."""
