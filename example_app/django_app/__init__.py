"""The example site on Django: the same pages, data and sitemap as ``python -m example_app``,
with a Django model over its ``articles`` table, ``DjangoSource`` and the Django middleware.

``python -m example_app.django_app`` (see ``__main__``)."""
