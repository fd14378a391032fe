"""Release: a token-streaming generator's answer, sentence by sentence, with every check.

Each sentence the model completes is gated and reviewed at once (`review`), then checked
against the other sources' answering sentences (`conflicts.kept`, as `answer()` checks a
kept answer) and only then released (`SentenceRelease`). Until a sentence was released, a
refused attempt may be retried (`Attempts`, the loop `answer()` uses); released text is
never taken back, so afterwards a refused sentence is simply left out, and a disagreement
found later is stated after what was released, with its own verified quotes.
"""

from __future__ import annotations

from collections.abc import Iterator

from citadel.answering.decision import outcome
from citadel.answering.decision.attempts import Attempts
from citadel.answering.decision.composing import ConflictAnswer, compose
from citadel.answering.decision.conflicts import KEPT, kept
from citadel.answering.decision.request import DecisionRequest
from citadel.answering.decision.review import review
from citadel.answering.decision.sentence_release import SentenceRelease
from citadel.answering.decision.verdict import amended, verdict
from citadel.answering.streaming import StreamEvent
from citadel.gate import GateResult, gate
from citadel.records import Answer, Conflict, Draft


class Release:
    def __init__(self, req: DecisionRequest) -> None:
        self.req = req
        self.out = SentenceRelease()
        self.attempts = Attempts(req)
        self.conflict: tuple[Conflict, ConflictAnswer] | None = None

    def events(self) -> Iterator[StreamEvent]:
        """Citation and delta events; `answer()` afterwards is what they released."""
        try:
            with self.req.trace.stage("generate"):
                for _, feedback in self.attempts:
                    yield from self._attempt(feedback)
                    if self.conflict is not None:
                        break
        except Exception as exc:  # noqa: BLE001 - a model fault costs the rest of the answer
            self.attempts.failed(exc)
        yield from self.out.close()

    def _attempt(self, feedback) -> Iterator[StreamEvent]:
        req = self.req
        generator = req.generator
        draft = None
        stream = generator.stream_draft(req.question, req.context, feedback)
        try:
            for item in stream:
                if isinstance(item, Draft):  # the last item
                    draft = item
                    continue
                one = Draft(sentences=(item,), generator=generator.name,
                            prompt_version=generator.prompt_version)
                result = gate(one, req.context, req.snapshot_id)
                if result.sentences and review(req, one, result) is None:
                    yield from self._release(result)
                if self.conflict is not None:
                    return  # the disagreement is the answer's end: stop reading the model
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()
        if draft is None:
            raise RuntimeError("the generator's stream ended without its draft")
        whole = gate(draft, req.context, req.snapshot_id)
        refused = None if self.out.released else review(req, draft, whole)
        if not self.out.released and refused is None and not draft.abstain:
            yield from self._release(whole)  # e.g. a JSON reply, judged whole
        self.attempts.record(draft, whole, refused)

    def _release(self, result: GateResult) -> Iterator[StreamEvent]:
        found = kept(self.req, result)
        if found is not None:
            composed = compose(self.req.question, found, self.req.context,
                               self.req.snapshot_id)
            if composed is not None:
                self.conflict = (found, composed)
                yield from self.out.release_text(composed.text, composed.result)
                return
            if found not in self.req.not_composed:
                self.req.not_composed.append(found)
        yield from self.out.release(result)

    def answer(self) -> Answer:
        req, out = self.req, self.out
        if self.conflict is not None:
            conflict, composed = self.conflict
            answer = outcome.conflicted(req, conflict, composed, verdict(
                f"conflict:{KEPT}", stage="conflicts_after",
                outcome="conflict" if conflict.resolution == "flagged" else "answered"))
            return answer.model_copy(update={"answer": out.text,
                                             "citations": tuple(out.citations)})
        if not out.released:  # an accepted attempt is always released: this says why not
            return outcome.abstained(req, self.attempts.verdict())
        released = amended(self.attempts.verdict(), reason="answered", outcome="answered",
                           stage="release")
        answer = outcome.grounded(req, out.result(tuple(self.attempts.dropped)), released)
        return answer.model_copy(update={"answer": out.text})
