"""The example's Django application (its model)."""

from __future__ import annotations

from django.apps import AppConfig


class ExampleConfig(AppConfig):  # type: ignore[misc]  # Django ships no types
    name = "example_app.django_app"
    label = "example"
