"""Backend for any OpenAI-compatible ``/v1/completions`` server (``vllm serve``, with or without CoCA).

Prompts go out as token ids, built with the model's tokenizer loaded locally (``--model`` names the
same weights the server serves), so the server sees exactly the prompts the hf backend scores.

* Generation: greedy (temperature 0), the full ``max_tokens`` budget, then the task's stop rule cuts
  the tokens (:meth:`~coca_eval.backends.stopping.StopRule.cut`). Token ids come back through vLLM's
  ``return_token_ids`` (or ``return_tokens_as_token_ids``); a server with neither returns only text,
  which is re-encoded.
* Perplexity: ``echo`` + ``logprobs`` give the log-prob of every prompt token; a server that does not
  return them cannot score, and says so in one line.
* Chat: a task that frames its prompts with a chat template may send them to ``/chat/completions``
  as messages instead (:meth:`OpenAIBackend.generate_chat`, :mod:`coca_eval.backends.openai_chat`),
  each checked against the server's rendering of it.
* Several ``--base-url`` servers share the work (:mod:`coca_eval.backends.server_pool`), at most
  ``--max-concurrent`` requests in flight on each; the numbers are a single server's.
* The wire (credentials, retries, reply shapes) is :mod:`coca_eval.backends.openai_client`'s.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from coca_eval.backends.echo import echo_prompts
from coca_eval.backends.greedy import GreedyBackend, GreedyOptions, OnDone
from coca_eval.backends.local import LocalModelSide, TokenizerMixin, load_local_side
from coca_eval.backends.openai_chat import ChatThinking
from coca_eval.backends.openai_client import CompletionsClient, clients_for
from coca_eval.backends.openai_replies import ChatCompletion, Choice
from coca_eval.backends.server_pool import ServerPool
from coca_eval.backends.stopping import StopRule, stop_rule
from coca_eval.chat import ChatPrompt
from coca_eval.errors import CocaEvalError, NonFiniteOutput
from coca_eval.progress import work_done

__all__ = ["CompletionsClient", "OpenAIBackend", "Server", "load_openai_backend"]

_TOKEN_ID = re.compile(r"^token_id:(\d+)$")
BATCH = 32  # prompts per request at most: the server batches them, the request stays small


@dataclass(frozen=True)
class Server:
    """One ``--base-url``: its client and its name for the model."""

    client: CompletionsClient
    model: str

    def __str__(self) -> str:  # how a waiting line names it
        return self.client.base_url


def _served_name(client: CompletionsClient, side: LocalModelSide, model: str) -> str:
    """The server's name for the model: the only one served, or the one named like ``--model``."""
    served = client.served_models()
    if len(served) == 1:
        return served[0]
    for name in served:
        if name in (model, side.path):
            return name
    raise CocaEvalError(f"server {client.base_url} serves {served or 'nothing'}; none matches {model!r}")


class OpenAIBackend(TokenizerMixin, GreedyBackend):
    """Scores windows and generates greedily through one or more completions servers."""

    def __init__(self, servers: Sequence[Server], side: LocalModelSide, max_concurrent: int = 4) -> None:
        self.servers, self.side = list(servers), side
        self.pool = ServerPool(self.servers, max_concurrent)
        names = list(dict.fromkeys(server.model for server in self.servers))
        self.metadata = {  # the public URLs
            "base_urls": [server.client.base_url for server in self.servers],
            "served_model": names[0] if len(names) == 1 else names,
        }

    def close(self) -> None:
        self.pool.close()

    def _ids_of(self, choice: Choice, server: str) -> list[int]:
        if choice.token_ids is not None:  # vLLM's return_token_ids
            return _in_vocabulary(list(choice.token_ids), len(self.tokenizer), server)
        tokens = choice.logprobs.tokens if choice.logprobs else None
        if tokens and all(_TOKEN_ID.match(t) for t in tokens):
            return _in_vocabulary(
                [int(_TOKEN_ID.match(t).group(1)) for t in tokens], len(self.tokenizer), server
            )
        return self.encode(choice.text or "")

    def _decode_greedy(
        self, prompts, prefix_lengths, stop: StopRule, on_done: OnDone, options: GreedyOptions
    ) -> bool:
        """Greedy completions spread over the servers, cut by the task's ``stop`` rule; each server's
        own prefix cache (if on) does any reuse. The tokenizer (cutting, re-encoding text) runs here,
        never in a request thread. No rope patch reaches a server (see :func:`load_openai_backend`), so
        ``hold_dynamic_rope`` has nothing to hold. ``batch_size`` is the hf backend's: up to
        ``--max-concurrent`` requests are in flight per server, each server batching them as it likes;
        ``prefix_groups`` likewise (a server's own prefix cache finds shared prefixes by their content)."""
        from coca_eval.backends.special_tokens import eos_ids

        eos = eos_ids(None, self.tokenizer)

        def send(server: Server, rows: range) -> list[tuple[Choice, str]]:
            payload = {
                "model": server.model,
                "prompt": [list(map(int, prompts[i])) for i in rows],
                "max_tokens": stop.max_new_tokens,
                "temperature": 0,
                "logprobs": 1,
                "return_tokens_as_token_ids": True,
                "return_token_ids": True,
            }
            return [(choice, server.client.base_url) for choice in server.client.complete(payload)]

        for rows, choices in self.pool.map(send, len(prompts), BATCH):
            for i, (choice, url) in zip(rows, choices, strict=True):
                generated = self._ids_of(choice, url)
                work_done(len(prompts[i]) + len(generated))  # a cell's progress counts tokens
                answer = stop.cut(generated, eos, self.decode)
                _check_answer_logprobs((choice.logprobs.token_logprobs if choice.logprobs else None) or [],
                                       len(answer), url)  # fmt: skip
                on_done(i, answer)
        return False

    def generate_chat(
        self,
        prompts: Sequence[ChatPrompt],
        stop: StopRule | int,
        on_done: Callable,
        thinking: ChatThinking | None = None,
    ) -> None:
        """Greedy chat completions of framed prompts, one conversation per request, spread over the
        servers; each reply is checked to answer the prompt's own tokens before its answer is cut by
        the ``stop`` rule and passed on: ``on_done(i, answer)``, or with ``thinking`` (a reasoning
        model's thought, see :mod:`coca_eval.backends.openai_chat`) ``on_done(i, answer, thought)``."""
        from coca_eval.backends.openai_chat import chat_payload, check_rendered, split_reply
        from coca_eval.backends.special_tokens import eos_ids

        stop = stop_rule(stop)
        eos = eos_ids(None, self.tokenizer)

        def send(server: Server, rows: range) -> list[tuple[ChatCompletion, str]]:
            payloads = [chat_payload(server.model, prompts[i], stop.max_new_tokens, thinking) for i in rows]
            return [(server.client.chat(payload), server.client.base_url) for payload in payloads]

        for rows, replies in self.pool.map(send, len(prompts), 1):
            for i, (reply, url) in zip(rows, replies, strict=True):
                check_rendered(reply, prompts[i], url)
                choice = reply.choices[0]
                ids = choice.token_ids
                if ids is not None:
                    _in_vocabulary(list(ids), len(self.tokenizer), url)
                if thinking is None:
                    tokens = list(ids) if ids is not None else self.encode(choice.message.content or "")
                    work_done(len(prompts[i].ids) + len(tokens))  # a cell's progress counts tokens
                    answer = stop.cut(tokens, eos, self.decode)
                    _check_answer_logprobs(choice.answer_logprobs(), len(answer), url)  # as completions do
                    on_done(i, answer)
                    continue
                tokens, thought = split_reply(choice, reply, thinking, self.encode, self.decode)
                generated = len(ids) if ids is not None else len(tokens) + (thought.tokens or 0)
                work_done(len(prompts[i].ids) + generated)
                answer = stop.cut(tokens, eos, self.decode)
                logprobs = choice.answer_logprobs()
                _check_answer_logprobs(logprobs, len(logprobs), url)  # the thought's tokens too
                on_done(i, answer, thought)

    def score(self, input_ids: torch.Tensor, first_logit: int, targets: torch.Tensor) -> torch.Tensor:
        """NLL of ``targets`` (b, s) from the echoed log-probs of prompts that hold every target (see
        :mod:`coca_eval.backends.echo`: a disjoint window ends before its last target); the b windows
        are spread over the servers."""
        prompts, scored = echo_prompts(input_ids, first_logit, targets)

        def send(server: Server, rows: range) -> list[list[float]]:
            payload = {"model": server.model, "prompt": [prompts[i] for i in rows], "max_tokens": 1}
            choices = server.client.complete({**payload, "temperature": 0, "echo": True, "logprobs": 1})
            return [
                _prompt_nll(choice, scored, len(prompts[i]), server.client.base_url)
                for choice, i in zip(choices, rows, strict=True)
            ]

        nll = [row for _, answers in self.pool.map(send, len(prompts), BATCH) for row in answers]
        return torch.tensor(nll, dtype=torch.float64)  # (b, s)


def _in_vocabulary(ids: list[int], vocabulary: int, server: str) -> list[int]:
    """Generated token ids, refused in one line when one is no token of the local tokenizer (a server
    serving other weights than ``--model``): decoded, it would be a wrong answer, not an error."""
    outside = [token for token in ids if not 0 <= token < vocabulary]
    if outside:
        raise CocaEvalError(
            f"server {server} answered token id {outside[0]}, outside the vocabulary of {vocabulary} "
            "tokens of --model: does it serve the same weights?"
        )
    return ids


def _check_answer_logprobs(logprobs: Sequence[float | None], kept: int, server: str) -> None:
    """Raise :class:`~coca_eval.errors.NonFiniteOutput` when one of the ``kept`` answer tokens came with
    a non-finite log-prob (completions' ``token_logprobs``, chat's ``logprobs.content``): the model
    answered from non-finite logits. Servers that send no per-token log-probs are taken as they answer."""
    for step, value in enumerate(logprobs[:kept]):
        if value is not None and not math.isfinite(value):
            raise NonFiniteOutput(f"server {server}: answer token {step + 1} has log-prob {value}")


def _prompt_nll(choice: Choice, scored: slice, prompt_tokens: int, server: str) -> list[float]:
    """Minus the echoed log-probs at ``scored``; a server that leaves any out cannot score. Values that
    are no log-prob (NaN, above 0) pass through as they are: the ppl task makes them an ``error`` cell
    with the reason before anything is journaled as a number (:func:`coca_eval.ppl.records.score_problem`)."""
    logprobs = choice.logprobs.token_logprobs if choice.logprobs else None
    if not logprobs:
        raise CocaEvalError(f"server {server} returns no prompt log-probs (echo+logprobs)")
    picked = logprobs[scored]
    if len(picked) < scored.stop - scored.start or any(value is None for value in picked):
        raise CocaEvalError(
            f"server {server} returned {len(logprobs)} prompt log-probs for a prompt of "
            f"{prompt_tokens} tokens, without the ones of tokens {scored.start}..{scored.stop - 1}"
        )
    return [-value for value in picked]


def load_openai_backend(method, options) -> OpenAIBackend:
    if not options.base_urls:
        raise CocaEvalError("--backend openai needs --base-url URL (e.g. http://127.0.0.1:8000/v1)")
    if method.rope.kind != "none":
        raise CocaEvalError("--backend openai cannot apply --rope patches; start the server with them")
    side = load_local_side(method.model)
    servers = [Server(client, _served_name(client, side, method.model)) for client in clients_for(options)]
    return OpenAIBackend(servers, side, options.max_concurrent)


def load_for_request(method, request) -> object:
    """The backend registry's loader (:mod:`coca_eval.backends.registry`)."""
    return load_openai_backend(method, request.engine)
