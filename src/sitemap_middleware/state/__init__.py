"""What a sitemap remembers between requests: the pages kept current, the pages and
summaries remembered, shared reads, bad-row counters."""
