"""The example's pages, as the other variants render them."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse

from ..site import article_body, list_body, page_html, static_body
from .models import Article


def _root(request: HttpRequest) -> str:
    return str(request.META.get("SCRIPT_NAME", "")).rstrip("/")


def page(request: HttpRequest, path: str) -> HttpResponse:
    return HttpResponse(page_html(*static_body(path), _root(request)))


def article_list(request: HttpRequest) -> HttpResponse:
    first = Article.objects.filter(published=True).order_by("id").values_list("slug", "title")
    return HttpResponse(
        page_html("Articles", list_body(first[:50], _root(request)), _root(request))
    )


def article(request: HttpRequest, slug: str) -> HttpResponse:
    found = Article.objects.filter(slug=slug, published=True).values_list("title", "updated_at")
    row = found.first()
    if row is None:
        raise Http404(slug)
    title, updated_at = row
    return HttpResponse(page_html(title, article_body(updated_at), _root(request)))
