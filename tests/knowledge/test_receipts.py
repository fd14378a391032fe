"""Signed receipts: every answer is signed; any change to what a reader relies on, a signed
field deleted or an unsigned one added, or a change to the signature, fails verification and
names the part, whatever fields the answer record has; keys rotate and are revoked; old
`citadel-receipt-1` receipts still verify; a receipt is checkable by an independent verifier
and offline when the knowledge base is gone."""

from __future__ import annotations

import base64
import json
import os
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from citadel.cli import main
from citadel.config import Settings
from citadel.engine import Engine
from citadel.ingest.pipeline import ingest
from citadel.knowledge.receipts import FORMAT, FORMAT_1, Signer, check_receipt
from citadel.knowledge.signing import KeyStore
from citadel.records import Answer, Trace
from citadel.retrieval.embedders.hashing import HashingEmbedder
from tests.doors import ANSWERED, build_doors_kb
from tests.helpers_receipts import format_1_answer, format_1_door_answer

# The doors' knowledge base answers ANSWERED from the policy and flags the forum: a conflict
# with stated values and sources to tamper with; SPAN_QUESTION's answer has a span.
SPAN_QUESTION = "When are refunds issued to the original payment method?"


@pytest.fixture(scope="module")
def signed(tmp_path_factory):
    settings = build_doors_kb(tmp_path_factory.mktemp("receipts"))
    engine = Engine.open(settings, embedder=HashingEmbedder())
    answer = engine.answer(ANSWERED)
    yield settings, engine, json.loads(answer.model_dump_json())
    engine.close()


@pytest.fixture(scope="module")
def with_span(signed):
    """An answer with an answer span (the conflict answer has none)."""
    settings, engine, _ = signed
    answer = json.loads(engine.answer(SPAN_QUESTION).model_dump_json())
    assert answer["span"] is not None
    return answer


def keys_of(settings: Settings):
    return KeyStore(settings.home).public_keys()


def test_every_answer_and_every_stream_carries_a_valid_receipt(signed):
    settings, engine, answer = signed
    assert answer["receipt"]["algorithm"] == "Ed25519"
    check = check_receipt(answer, keys_of(settings))
    assert check.ok and check.signature == "valid"
    done = list(engine.stream(ANSWERED))[-1]
    assert check_receipt(json.loads(done.answer.model_dump_json()), keys_of(settings)).ok


def test_the_signed_fields_are_everything_a_reader_relies_on(signed):
    _, _, answer = signed
    payload = json.loads(answer["receipt"]["payload"])
    assert payload["answer"] == answer["answer"]
    assert payload["citations"] == answer["citations"]
    assert payload["conflict"] == answer["conflict"] and answer["conflict"]["values"]
    assert payload["span"] == answer["span"]
    assert payload["sources_consulted"] == answer["sources_consulted"]
    assert payload["request_id"] == answer["trace"]["request_id"]
    assert payload["question_sha256"] == answer["trace"]["question_sha256"]
    assert {"abstained", "grounded", "next_step", "generator", "prompt_version", "snapshot_id",
            "signed_at", "key_id"} <= set(payload)


def _edit(answer: dict, path: str, change) -> dict:
    edited = json.loads(json.dumps(answer))
    *parents, last = path.split(".")
    node = edited
    for p in parents:
        node = node[int(p)] if p.isdigit() else node[p]
    key = int(last) if last.isdigit() else last
    node[key] = change(node[key])
    return edited


def _one_char(value):
    if isinstance(value, int):
        return value + 1
    return ("X" + value[1:]) if value[:1] != "X" else ("Y" + value[1:])


@pytest.mark.parametrize(("path", "named"), [
    ("answer", "answer"),
    ("citations.0.quote", "citations[0].quote"),
    ("citations.0.start", "citations[0].start"),
    ("citations.0.end", "citations[0].end"),
    ("citations.0.snapshot_id", "citations[0].snapshot_id"),
    ("trace.snapshot_id", "snapshot_id"),
    ("trace.request_id", "request_id"),
    ("receipt.signed_at", "signed_at"),
    ("conflict.values.1", "conflict"),
    ("sources_consulted.0.title", "sources_consulted"),
    ("next_step", "next_step"),
])
def test_changing_any_part_fails_and_names_it(signed, path, named):
    settings, _, answer = signed
    if path == "receipt.signed_at":
        change = lambda v: v.replace(v[:4], str(int(v[:4]) - 1))  # noqa: E731
    elif path == "next_step":
        change = lambda v: "Call us."  # noqa: E731
    else:
        change = _one_char
    check = check_receipt(_edit(answer, path, change), keys_of(settings))
    assert check.signature == "valid" and not check.ok
    assert named in check.mismatches


def test_changing_the_answer_span_fails_and_names_it(signed, with_span):
    settings, _, _ = signed
    check = check_receipt(_edit(with_span, "span.text", _one_char), keys_of(settings))
    assert check.signature == "valid" and check.mismatches == ["span"]


@pytest.mark.parametrize("path", ["receipt.signature", "receipt.payload"])
def test_changing_the_signature_or_the_signed_payload_fails_the_signature(signed, path):
    settings, _, answer = signed

    def change(value: str) -> str:
        if path.endswith("signature"):
            raw = bytearray(base64.b64decode(value))
            raw[0] ^= 1
            return base64.b64encode(bytes(raw)).decode()
        return value.replace("30 days", "90 days")

    check = check_receipt(_edit(answer, path, change), keys_of(settings))
    assert check.signature == "invalid" and not check.ok


def test_a_receipt_signed_by_another_key_fails(signed, tmp_path):
    settings, engine, answer = signed
    intruder = Signer(KeyStore(tmp_path))  # a key of someone else, claiming the server's id
    forged = json.loads(intruder(engine.answer(ANSWERED)).model_dump_json())
    forged["receipt"]["key_id"] = answer["receipt"]["key_id"]
    assert check_receipt(forged, keys_of(settings)).signature == "invalid"
    unknown = json.loads(intruder(engine.answer(ANSWERED)).model_dump_json())
    assert check_receipt(unknown, keys_of(settings)).signature == "unknown key"


def test_rotation_keeps_old_receipts_valid_and_revocation_fails_them(tmp_path):
    settings = build_doors_kb(tmp_path)
    engine = Engine.open(settings, embedder=HashingEmbedder())
    try:
        first = json.loads(engine.answer(ANSWERED).model_dump_json())
        new = KeyStore(settings.home).rotate()
        second = json.loads(engine.answer(ANSWERED).model_dump_json())
    finally:
        engine.close()
    assert second["receipt"]["key_id"] == new.key_id != first["receipt"]["key_id"]
    published = keys_of(settings)
    assert published.get(first["receipt"]["key_id"]).status == "retired"
    assert check_receipt(first, published).ok and check_receipt(second, published).ok
    KeyStore(settings.home).revoke(first["receipt"]["key_id"])
    revoked = check_receipt(first, keys_of(settings))
    assert revoked.signature == "revoked key" and not revoked.ok
    assert check_receipt(second, keys_of(settings)).ok


def independent_verify(answer: dict, keys_json: str) -> bool:
    """The documented form, checked with `cryptography` alone: no Citadel code."""
    receipt = answer["receipt"]
    key = next(k for k in json.loads(keys_json)["keys"] if k["key_id"] == receipt["key_id"])
    if key["status"] == "revoked":
        return False
    public = Ed25519PublicKey.from_public_bytes(base64.b64decode(key["public_key"]))
    public.verify(base64.b64decode(receipt["signature"]), receipt["payload"].encode("utf-8"))
    signed = json.loads(receipt["payload"])
    canonical = json.dumps(signed, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return (canonical == receipt["payload"] and signed["answer"] == answer["answer"]
            and signed["citations"] == answer["citations"])


def test_an_independent_verifier_checks_the_documented_form(signed):
    settings, _, answer = signed
    keys_json = keys_of(settings).model_dump_json()
    assert independent_verify(answer, keys_json)
    from cryptography.exceptions import InvalidSignature

    with pytest.raises(InvalidSignature):
        independent_verify(_edit(answer, "receipt.payload", lambda v: v.replace("30", "31")),
                           keys_json)


def test_a_receipt_verifies_offline_by_signature_alone_when_the_knowledge_base_is_gone(
        signed, tmp_path):
    settings, _, answer = signed
    keys_file = tmp_path / "keys.json"
    answer_file = tmp_path / "answer.json"
    answer_file.write_text(json.dumps(answer))
    runner = CliRunner()
    env = {"CITADEL_HOME": str(settings.home), "CITADEL_EMBEDDER": "hashing"}
    assert runner.invoke(main, ["keys", "export", "--out", str(keys_file)], env=env).exit_code == 0
    elsewhere = {"CITADEL_HOME": str(tmp_path / "empty-home"), "CITADEL_EMBEDDER": "hashing"}
    result = runner.invoke(main, ["verify", "--key", str(keys_file), str(answer_file)],
                           env=elsewhere)
    assert result.exit_code == 0, result.output
    assert "PASS signature: valid" in result.output and "GONE snapshot" in result.output
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(_edit(answer, "citations.0.start", _one_char)))
    result = runner.invoke(main, ["verify", "--key", str(keys_file), str(tampered)],
                           env=elsewhere)
    assert result.exit_code == 1
    assert "FAIL answer: citations[0].start differs from the signed receipt" in result.output


def test_the_private_key_is_0600_and_concurrent_first_use_makes_one_key(tmp_path):
    results: list[str] = []
    threads = [threading.Thread(target=lambda: results.append(KeyStore(tmp_path).active()[0]))
               for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(results)) == 1
    assert len(KeyStore(tmp_path).public_keys().keys) == 1
    pem = Path(tmp_path, "keys", f"{results[0]}.pem")
    assert os.stat(pem).st_mode & 0o777 == 0o600


def test_settings_can_turn_signing_off(tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.md").write_text("# A\n\nReturns are accepted within 30 days of delivery.\n")
    settings = Settings(home=tmp_path / "home", embedder="hashing", sign_answers=False)
    ingest([kb], settings, embedder=HashingEmbedder(), progress=False)
    engine = Engine.open(settings, embedder=HashingEmbedder())
    try:
        assert engine.answer("How long do I have to return an item?").receipt is None
    finally:
        engine.close()
    assert not (settings.home / "keys").exists()


# --- the whole payload against the whole answer --------------------------------------------


def test_deleting_signed_fields_fails_and_names_them(signed):
    # The attack: a conflict answer without its conflict, span and sources still "verified".
    settings, _, answer = signed
    stripped = {k: v for k, v in answer.items()
                if k not in ("conflict", "span", "sources_consulted")}
    check = check_receipt(stripped, keys_of(settings))
    assert check.signature == "valid" and not check.ok
    assert check.absent == ["conflict", "sources_consulted", "span"]
    assert "conflict was signed but is missing from the answer" in check.problems()
    first = {k: v for k, v in answer["citations"][0].items() if k != "section"}
    check = check_receipt({**answer, "citations": [first, *answer["citations"][1:]]},
                          keys_of(settings))
    assert check.absent == ["citations[0].section"] and not check.ok


def test_a_field_the_answer_shows_but_the_receipt_did_not_sign_is_reported(signed):
    settings, _, answer = signed
    added = {**answer, "verified_by": "Acme Legal",
             "citations": [{**answer["citations"][0], "note": "approved"},
                           *answer["citations"][1:]]}
    check = check_receipt(added, keys_of(settings))
    assert check.signature == "valid" and not check.ok
    assert check.unsigned == ["citations[0].note", "verified_by"]
    assert "verified_by is in the answer but was not signed" in check.problems()


def test_every_field_of_the_answer_is_signed_and_compared_without_a_list_of_them(
        signed, tmp_path):
    """Every field of `Answer` (its `verdict` too) is signed and compared, and so is a field
    added to it later, with no edit to the receipts: here an Answer with one more field."""
    settings, _, answer = signed
    assert json.loads(answer["receipt"]["payload"])["verdict"] == answer["verdict"]
    changed = _edit(answer, "verdict.reason", lambda v: "nothing_answers")
    assert check_receipt(changed, keys_of(settings)).mismatches == ["verdict"]

    class Later(Answer):
        assurance: str = "high"

    base = Answer(answer="Yes. [S1]", grounded=True, abstained=False,
                  trace=Trace(request_id="r-1", snapshot_id="kb-1"))
    store = KeyStore(tmp_path)
    later = json.loads(Signer(store)(Later(**base.model_dump())).model_dump_json())
    keys = store.public_keys()
    assert json.loads(later["receipt"]["payload"])["assurance"] == "high"
    assert check_receipt(later, keys).ok
    assert check_receipt({**later, "assurance": "low"}, keys).mismatches == ["assurance"]
    without = {k: v for k, v in later.items() if k != "assurance"}
    assert check_receipt(without, keys).absent == ["assurance"]


def test_the_receipts_format_is_signed(signed):
    settings, _, answer = signed
    assert answer["receipt"]["format"] == FORMAT
    assert json.loads(answer["receipt"]["payload"])["format"] == FORMAT
    check = check_receipt(_edit(answer, "receipt.format", lambda v: FORMAT_1),
                          keys_of(settings))
    assert check.mismatches == ["format"] and not check.ok


def test_citadel_receipt_1_receipts_still_verify_with_a_note_for_what_they_did_not_sign(
        signed):
    settings, engine, _ = signed
    store = KeyStore(settings.home)
    answer = engine.answer(SPAN_QUESTION)
    old = format_1_answer(answer, store)
    check = check_receipt(old, keys_of(settings))
    assert check.ok and check.format == FORMAT_1 and not check.notes
    # A door's record of the time: links added after signing, `missing` not shown.
    door = format_1_door_answer(answer, store, "http://127.0.0.1:8000")
    check = check_receipt(door, keys_of(settings))
    assert check.ok, check
    assert any("links were not signed" in note for note in check.notes)
    assert any("did not show `missing`" in note for note in check.notes)
    # Everything they did sign is held to it: deleting a signed field fails as for format 2.
    stripped = {k: v for k, v in door.items() if k != "span"}
    assert check_receipt(stripped, keys_of(settings)).absent == ["span"]
