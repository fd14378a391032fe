"""A knowledge base for the door tests (MCP, chat completions, the Python client): a public
policy, a low-authority forum post that disagrees with it, and two tenants' private documents,
each with a marker only it contains. Tenants and authority come from the operator's
`citadel-sources.toml`, as in production."""

from __future__ import annotations

import json
from pathlib import Path

from citadel.config import Settings
from citadel.ingest.pipeline import ingest
from citadel.retrieval.embedders.hashing import HashingEmbedder

DOCS = {
    "refunds-policy.md": "# Refunds and Returns Policy\n\n## Eligibility\n\nYou can return "
                         "items within 30 days of delivery. Refunds are issued to the original "
                         "payment method within 5 business days.\n",
    "forum.md": "# Community forum\n\n## Returns\n\nYou can return items within 90 days of "
                "delivery, nobody checks.\n",
    "acme.md": "# Acme returns\n\nAcme premium members have 90 days to return an item for a "
               "refund. Premium members quote the private code ORCHID-7731 to return an item.\n",
    "globex.md": "# Globex returns\n\nGlobex premium members have 60 days to return an item "
                 "for a refund. Premium members quote the private code LOTUS-5512 to return an "
                 "item.\n",
}
SOURCES = """
[sources."refunds-policy.md"]
authority = 1.0
[sources."forum.md"]
authority = 0.2
[sources."acme.md"]
tenant = "acme"
[sources."globex.md"]
tenant = "globex"
"""
MARKERS = {"acme": "ORCHID-7731", "globex": "LOTUS-5512"}
ACME_KEY = "acme-door-key-0123456789"
GLOBEX_KEY = "globex-door-key-0123456789"
KEYS = {ACME_KEY: "acme", GLOBEX_KEY: "globex"}

ANSWERED = "How long do I have to return an item?"  # the policy, with the forum flagged
PRIVATE = "What private code do premium members quote to return an item?"
UNANSWERABLE = "What is the capital of Mongolia?"


def doors_settings(home: Path) -> Settings:
    return Settings(home=home, embedder="hashing", api_keys=KEYS)


def build_doors_kb(root: Path) -> Settings:
    """Write the documents under `root/kb` and ingest them into `root/home`."""
    kb = root / "kb"
    kb.mkdir(parents=True)
    for name, text in DOCS.items():
        (kb / name).write_text(text)
    (kb / "citadel-sources.toml").write_text(SOURCES)
    settings = doors_settings(root / "home")
    ingest([kb], settings, embedder=HashingEmbedder(), progress=False)
    return settings


def doors_env(home: Path) -> dict[str, str]:
    """The environment a `citadel` subprocess needs to serve this knowledge base."""
    return {"CITADEL_HOME": str(home), "CITADEL_EMBEDDER": "hashing",
            "CITADEL_API_KEYS": json.dumps(KEYS)}


def leaked(text: str, *tenants: str) -> list[str]:
    """The tenants whose private marker appears in `text`."""
    return [t for t in tenants if MARKERS[t] in text]
