"""A Python client for a Citadel server: `Client` (blocking) and `AsyncClient`.

    from citadel.client import Client

    with Client("http://127.0.0.1:8000", api_key="...") as citadel:
        answer = citadel.answer("How long do I have to return an item?")
        for c in answer.citations:
            print(c.label, c.quote, c.start, c.end, c.snapshot_id)
        thread = citadel.conversation()          # follow-ups answered with the thread
        thread.ask("How much does UK express delivery cost?")
        thread.ask("And standard delivery?").standalone.question

They return the records the engine itself uses (`Answer`, `Citation`, the stream events,
`ChunkView`, `SearchResults`, `VerifyReport`) and raise one exception class per kind of error
(`citadel.client.errors`). Only httpx is needed, no server extra.
"""

from citadel.client.client import AsyncClient, AsyncConversation, Client, Conversation
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
    "AsyncClient", "AsyncConversation", "AuthenticationError", "CitadelError", "Client",
    "ConnectionFailed", "Conversation",
    "InvalidRequest", "NotFound", "RateLimited", "ServerError", "StreamError", "Timeout",
    "Unavailable",
]
