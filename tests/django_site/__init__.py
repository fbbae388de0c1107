"""The one Django project of the in-process Django tests (Django is configured once per process)."""
