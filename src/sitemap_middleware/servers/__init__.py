"""The server adapters: ASGI and WSGI middleware and apps, and the runners that perform
the core's effects for each."""
