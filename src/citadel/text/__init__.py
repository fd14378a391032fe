"""Text primitives every stage shares: sentence spans, content terms, quote matching.

Pure functions over strings; this package imports nothing else from Citadel.
"""
