"""Stand-ins: the current document's section in place of a superseded one."""

from citadel.answering.supersession import add_successor_sections
from tests.helpers_kb import chunk, ranked

NEW_REFUNDS = chunk("policy#4", "Refunds within 5 business days.", authority=1.0,
                    date="2026-03-01", section="Refunds", supersedes="policy-2023")
NEW_EXCHANGES = chunk("policy#5", "We do not offer exchanges.", authority=1.0, date="2026-03-01",
                      section="Exchanges", supersedes="policy-2023")
OLD_REFUNDS = chunk("policy-2023#4", "Refunds within 10 business days.", authority=0.9,
                    date="2023-01-15", section="Refunds")


def chunks_of(document_id):
    return {"policy": [NEW_REFUNDS, NEW_EXCHANGES]}.get(document_id, [])


def test_successor_section_of_the_same_name_stands_in_for_a_superseded_chunk():
    out = add_successor_sections(ranked(NEW_EXCHANGES, OLD_REFUNDS), chunks_of)
    assert [r.chunk_id for r in out] == ["policy#5", "policy-2023#4", "policy#4"]
    stand_in, outdated = out[2], out[1]
    assert (stand_in.retrieval_score, stand_in.rank) == (outdated.retrieval_score, outdated.rank)
    assert stand_in.dense_score is None and stand_in.lexical_score is None


def test_no_successor_among_candidates_means_no_lookup():
    looked_up = []
    out = add_successor_sections(ranked(OLD_REFUNDS),
                                 lambda d: looked_up.append(d) or chunks_of(d))
    assert [r.chunk_id for r in out] == ["policy-2023#4"] and looked_up == []


def test_a_stand_in_is_never_a_duplicate():
    out = add_successor_sections(ranked(NEW_REFUNDS, NEW_EXCHANGES, OLD_REFUNDS), chunks_of)
    assert [r.chunk_id for r in out] == ["policy#4", "policy#5", "policy-2023#4"]
