"""Observability: `request_log` (one SQLite record per answered request) and `monitoring`
(daily quality figures and alerts computed from that log)."""
