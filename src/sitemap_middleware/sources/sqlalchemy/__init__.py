"""SQLAlchemy sources: a ``Select`` as a source, with its pages, summaries and changes
read in SQL (the ``sqlalchemy`` extra)."""
