"""``python -m sitemap_middleware.cli``: the same as the ``sitemap-middleware`` command."""

import sys

from .main import main

sys.exit(main())
