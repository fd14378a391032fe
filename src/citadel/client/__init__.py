"""A Python client for a Citadel server: `Client` (blocking) and `AsyncClient`.

    from citadel.client import Client

    with Client("http://127.0.0.1:8000", api_key="...") as citadel:
        answer = citadel.answer("How long do I have to return an item?")
        for c in answer.citations:
            print(c.label, c.quote, c.start, c.end, c.snapshot_id)

They return the records the engine itself uses (`Answer`, `Citation`, the stream events,
`ChunkView`, `SearchResults`, `VerifyReport`) and raise one exception class per kind of error
(`citadel.client.errors`). Only httpx is needed, no server extra.
"""

from citadel.client.client import AsyncClient, Client
from citadel.client.errors import (
    AuthenticationError,
    CitadelError,
    ConnectionFailed,
    InvalidRequest,
    NotFound,
    RateLimited,
    ServerError,
    StreamError,
    Timeout,
    Unavailable,
)

__all__ = [
    "AsyncClient", "AuthenticationError", "CitadelError", "Client", "ConnectionFailed",
    "InvalidRequest", "NotFound", "RateLimited", "ServerError", "StreamError", "Timeout",
    "Unavailable",
]
