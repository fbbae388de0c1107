"""``manage.py sitemap_render`` and ``manage.py sitemap_check``."""
