"""Websites as sources: a help centre's pages, fetched politely and safely, become documents.

`urls` (what a URL is and when two name one page), `guard` (private, loopback and link-local
addresses refused after DNS resolution, on every connection), `fetch` (one GET with limits:
size, time, content type, redirects within the allowed hosts, conditional requests),
`fetch_cache` (ETag / Last-Modified and the body, for conditional re-fetching), `robots`
(robots.txt), `sitemap` (sitemaps and sitemap indexes), `links` (a page's links, canonical URL
and robots meta), `site` (a website's scope: hosts, include / exclude, bounds), `crawl` (from
the start URL or sitemap to pages), `pages` (pages to `Document`s, navigation chrome and
blocks repeated across the site dropped) and `loading` (a website's documents and what was
skipped, for the ingest pipeline).
"""
