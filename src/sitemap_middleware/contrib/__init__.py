"""Integrations: Django and IndexNow."""
