"""A judge: a model a family asks whether an answer is right, greedily, every call journaled.

``--judge`` names any model this harness runs: an OpenAI-compatible server's URL (``http://host:8000/v1``,
its model chosen as ``URL#name`` where it serves several), or a model preset, local directory or hub id,
loaded through the hf backend. Before any model loads the judge is checked and named
(:func:`judge_identity`): a server must answer ``/models`` and serve the model asked for, a model must
resolve to weights; its identity (``server:<model name>`` or the weights' fingerprint) enters the
cells' keys, their records and the gate's strict keys, so runs judged by different judges never pair.

Each call is journaled under the judge's own journal key, by the digest of its messages: a resumed run
asks only what it has not asked (:attr:`Judge.reused` counts the rest). A call that fails (no answer in
time, an error) raises :class:`JudgeFailed`, which the runner turns into an error cell naming the
sample, never a 0.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from coca_eval.errors import CocaEvalError, NonFiniteOutput
from coca_eval.journal import cell_key

SERVER_PREFIXES = ("http://", "https://")
JUDGE_TIMEOUT_S = 120.0


class JudgeFailed(NonFiniteOutput):
    """A judge call that gave no verdict: the sample cannot be scored, so its cell is an error cell."""


@dataclass(frozen=True)
class JudgeSpec:
    """What ``--judge`` names: a server (``url`` and the served ``model``) or a model to load."""

    name: str
    url: str | None = None
    model: str | None = None

    @property
    def is_server(self) -> bool:
        return self.url is not None


def parse_judge(name: str) -> JudgeSpec:
    """``--judge``'s value as a :class:`JudgeSpec` (no network: :func:`judge_identity` checks it)."""
    name = (name or "").strip()
    if not name:
        raise CocaEvalError("--judge needs a model: a preset, a directory, a hub id or a server URL")
    if name.startswith(SERVER_PREFIXES):
        url, _, model = name.partition("#")
        return JudgeSpec(name, url.rstrip("/"), model or None)
    return JudgeSpec(name)


def _client(spec: JudgeSpec, timeout: float, retries: int):
    import os

    from coca_eval.backends.openai_client import DEFAULT_KEY_ENV, CompletionsClient

    return CompletionsClient(spec.url, os.environ.get(DEFAULT_KEY_ENV) or None, timeout, retries)


def judge_identity(spec: JudgeSpec, timeout: float = 10.0) -> tuple[JudgeSpec, str]:
    """The judge checked and named before any model loads: a server's model (the one it serves, or the
    one ``URL#name`` asks for), named ``server:<model>`` wherever it is served, or a model's weights
    fingerprint. A server that does not answer, or a name that is no model, is one line."""
    if not spec.is_server:
        from coca_eval.models.presets import model_fingerprint

        try:
            return spec, model_fingerprint(spec.name)
        except CocaEvalError as exc:
            raise CocaEvalError(f"--judge {spec.name}: {exc}") from None
    from coca_eval.backends.server_url import public_url

    shown = public_url(spec.url)  # never the credentials a URL may hold
    try:
        served = _client(spec, timeout, 0).served_models()
    except CocaEvalError as exc:
        raise CocaEvalError(f"--judge {shown} does not answer: {exc}") from None
    model = spec.model or (served[0] if len(served) == 1 else None)
    if model is None or model not in served:
        asked = f"serves no {spec.model!r}" if spec.model else f"serves {len(served)} models"
        raise CocaEvalError(f"--judge {shown} {asked} ({', '.join(served)}): name one as URL#model")
    return JudgeSpec(spec.name, spec.url, model), f"server:{model}"


def messages_digest(messages: list[dict]) -> str:
    return hashlib.sha256(json.dumps(messages, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class Judge:
    """A checked judge over a run's journal: :meth:`ask` returns its reply to ``messages``, from the
    journal when the run asked it already (counted in :attr:`reused`), else from the model (counted in
    :attr:`asked`) and journaled before it is used."""

    def __init__(self, spec: JudgeSpec, identity: str, journal, max_tokens: int, transport=None):
        self.spec, self.identity, self.journal, self.max_tokens = spec, identity, journal, max_tokens
        self.key = cell_key({"judge": identity, "max_tokens": max_tokens, "decoding": "greedy"})
        self._transport = transport
        self.asked = self.reused = 0
        self.device = "cpu"  # where a loaded judge runs: the evaluated model's device, once known

    def transport(self):
        if self._transport is None:
            self._transport = (
                ServerTransport(self.spec) if self.spec.is_server else LocalTransport(self.spec, self.device)
            )
        return self._transport

    def ask(self, messages: list[dict], sample: str) -> str:
        """The judge's reply to ``messages`` (``sample`` names the sample in a failure)."""
        digest = messages_digest(messages)
        journaled = self.journal.parts.get(self.key, {}).get(digest)
        if journaled is not None:
            self.reused += 1
            return journaled["reply"]
        try:
            reply = self.transport().reply(messages, self.max_tokens)
        except CocaEvalError as exc:
            raise JudgeFailed(f"{sample}: the judge gave no verdict: {exc}") from None
        self.asked += 1
        self.journal.record_part(self.key, digest, {"reply": reply})
        return reply


class ServerTransport:
    """Greedy chat completions from an OpenAI-compatible server (one try: a timeout is a failure)."""

    def __init__(self, spec: JudgeSpec, timeout: float | None = None) -> None:
        self.spec, self.client = spec, _client(spec, timeout or JUDGE_TIMEOUT_S, 0)

    def reply(self, messages: list[dict], max_tokens: int) -> str:
        payload = {"model": self.spec.model, "messages": messages, "max_tokens": max_tokens, "temperature": 0}
        content = self.client.chat(payload).choices[0].message.content
        if content is None:
            raise CocaEvalError(f"server {self.client.base_url} sent a reply without text")
        return content


class LocalTransport:
    """Greedy decoding of a model loaded through the hf backend, its chat template framing the messages
    (a model without one reads them as plain text, one after the other)."""

    def __init__(self, spec: JudgeSpec, device: str = "cpu") -> None:
        from coca_eval.backends.hf import load_hf_backend
        from coca_eval.methods import MethodSpec

        try:
            self.backend = load_hf_backend(MethodSpec(model=spec.name, label="judge"), device=device)
        except (OSError, ValueError) as exc:
            raise CocaEvalError(f"--judge {spec.name} does not load: {str(exc).splitlines()[0]}") from None

    def reply(self, messages: list[dict], max_tokens: int) -> str:
        from coca_eval.backends.stopping import StopRule

        tokenizer = self.backend.tokenizer
        if getattr(tokenizer, "chat_template", None):
            text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
            ids = tokenizer(text, add_special_tokens=False).input_ids
        else:
            ids = tokenizer("\n\n".join(m["content"] for m in messages)).input_ids
        answers: dict[int, list[int]] = {}
        self.backend.generate_greedy(
            [list(ids)], [0], StopRule(max_tokens), answers.__setitem__, prefix_reuse=False
        )
        return tokenizer.decode(answers[0], skip_special_tokens=True)
