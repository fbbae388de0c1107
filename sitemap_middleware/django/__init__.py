"""Django integration: QuerySets as sources, ``django.contrib.sitemaps`` classes adopted."""
