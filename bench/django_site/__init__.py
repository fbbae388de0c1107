"""The Django project of bench_django.py: one table of articles and its Sitemap class."""
