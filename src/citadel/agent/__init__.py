"""A customer-scoped support agent: business facts from the order database, policy from the
knowledge base with gated citations, kept apart. See `agent.py` for how they combine."""
