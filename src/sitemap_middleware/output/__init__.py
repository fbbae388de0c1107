"""The bytes written: entries and their rules, the fast path, XML, the sitemapindex, the
HTML view, gzip."""
