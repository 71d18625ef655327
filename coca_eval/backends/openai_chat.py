"""Chat completions for the openai backend: a framed prompt sent as messages, checked token for token.

A chat API takes text and renders the chat template on the server, so the prompt's exact length can
no longer be guaranteed by sending token ids. What is sent instead:

* the user's message as one ``user`` turn, without a system turn: the local frame was rendered from a
  lone user message too, so a template that adds a default system prompt adds it on both sides (a
  family whose prompt is a whole conversation, MRCR, sends its turns before it, as rendered locally);
* the answer prefix (RULER's chat setting opens the assistant's turn with it) as a final ``assistant``
  message the server continues (``continue_final_message``, ``add_generation_prompt: false``: vLLM's
  chat parameters), so the answer follows the prefix as it does in the completions prompt.

The server's prompt is then compared with the local one: token for token when it returns its prompt's
ids (vLLM's ``return_token_ids``), else by the API's ``usage.prompt_tokens``. A server whose template,
BOS or tokenizer differ, or that ignored the prefill, renders another prompt: that is one line, never
a number at another length.

A reasoning model's thought (``--thinking``) comes back in the same reply: the server decodes thought
and answer in one request under ``max_completion_tokens`` (the think budget + the answer budget; the
chat API has no budget of the thought's own, so a thought that spends the whole of it is cut, not
closed and answered as the local backends do), the template's ``enable_thinking`` goes as
``chat_template_kwargs`` (so the server renders the prompt counted locally) and ``--reasoning-effort``
as ``reasoning_effort``. The answer is split from the thought by token ids where the reply holds the
thought's tokens (the close marker's ids), else it is the message's ``content`` and the thought its
``reasoning_content`` / ``reasoning``; a server that sends neither but counts reasoning tokens hid
its thought, which the sample records.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from coca_eval.backends.openai_replies import ChatChoice, ChatCompletion
from coca_eval.chat import ChatPrompt
from coca_eval.errors import CocaEvalError


@dataclass(frozen=True)
class ChatThinking:
    """How a thinking run's requests go to a chat API: the template's variables, the think budget,
    the close marker's ids (to split a reply holding the thought's tokens) and the reasoning effort."""

    budget: int
    close_ids: tuple[int, ...]
    template_variables: dict = field(default_factory=dict)
    effort: str | None = None


@dataclass(frozen=True)
class ServerThought:
    """A thought a server decoded: its text (None: the server hid it), its tokens (None: not counted)
    and whether it spent the whole budget, leaving no answer."""

    text: str | None
    tokens: int | None
    cut: bool

    def record(self, plan, tokenizer) -> dict:
        """What a sample records of its thought, beside its answer (as a locally decoded one does)."""
        hidden = {"thought_hidden": True} if self.text is None else {}
        return {
            "thought": self.text or "",
            "thought_tokens": self.tokens,
            "thought_closed_by_budget": self.cut,
            **hidden,
        }


def chat_payload(
    model: str, prompt: ChatPrompt, max_tokens: int, thinking: ChatThinking | None = None
) -> dict:
    """One greedy chat request for ``prompt`` (with ``thinking``: room for the thought, see above)."""
    messages = [*prompt.history, {"role": "user", "content": prompt.user}]
    if prompt.prefill:
        messages.append({"role": "assistant", "content": prompt.prefill})
    budget = {"max_tokens": max_tokens}
    if thinking is not None:
        budget = {"max_completion_tokens": thinking.budget + max_tokens}
        budget |= {"chat_template_kwargs": thinking.template_variables} if thinking.template_variables else {}
        budget |= {"reasoning_effort": thinking.effort} if thinking.effort else {}
    return {
        "model": model,
        "messages": messages,
        **budget,
        "temperature": 0,
        "logprobs": True,  # the answer tokens' log-probs: a non-finite one fails the sample
        "add_generation_prompt": not prompt.prefill,
        "continue_final_message": bool(prompt.prefill),
        "return_token_ids": True,
    }


def split_reply(
    choice: ChatChoice, reply: ChatCompletion, thinking: ChatThinking, encode: Callable, decode: Callable
) -> tuple[list[int], ServerThought]:
    """The answer's token ids and the thought of a thinking run's reply (see the module's docstring)."""
    message = choice.message
    text = message.reasoning_content if message.reasoning_content is not None else message.reasoning
    content = message.content or ""
    tokens = list(choice.token_ids) if choice.token_ids is not None else encode(content)
    at = _find(tokens, thinking.close_ids)
    if at is not None:  # the thought's own tokens came back: split at its close marker
        end = at + len(thinking.close_ids)
        return tokens[end:], ServerThought(text if text is not None else decode(tokens[:end]), end, False)
    counted = _reasoning_tokens(reply)
    cut = choice.finish_reason == "length" and not content.strip()
    if text is not None:  # separated by the server; the ids (if any) hold a thought never closed
        answer = [] if cut else encode(content)
        return answer, ServerThought(text, counted if counted is not None else len(encode(text)), cut)
    if counted:  # thought, but the server keeps it to itself
        return tokens, ServerThought(None, counted, cut)
    return tokens, ServerThought("", 0, False)


def _reasoning_tokens(reply: ChatCompletion) -> int | None:
    details = reply.usage.completion_tokens_details if reply.usage is not None else None
    return details.reasoning_tokens if details is not None else None


def _find(tokens: Sequence[int], marker: Sequence[int]) -> int | None:
    """Where ``marker`` first stands in ``tokens`` as a whole, or None."""
    width = len(marker)
    if not width:
        return None
    return next(
        (i for i in range(len(tokens) - width + 1) if tuple(tokens[i : i + width]) == tuple(marker)), None
    )


def check_rendered(reply: ChatCompletion, prompt: ChatPrompt, server: str) -> None:
    """Refuse a reply to another prompt than ``prompt``'s tokens (see the module's docstring)."""
    expected = list(prompt.ids)
    if reply.prompt_token_ids is not None:
        got = reply.prompt_token_ids
        if got != expected:
            at = _first_difference(got, expected)
            raise CocaEvalError(
                f"server {server} rendered the chat as {len(got)} tokens, differing from the "
                f"{len(expected)} of --model's chat template from token {at} on: serve the same "
                "template (vllm serve --chat-template) and tokenizer"
            )
        return
    if reply.usage is None:
        raise CocaEvalError(
            f"server {server} reports neither its prompt's tokens nor usage.prompt_tokens: the prompt's "
            "length cannot be checked; use --chat-template none (completions of token ids)"
        )
    if reply.usage.prompt_tokens != len(expected):
        raise CocaEvalError(
            f"server {server} rendered the chat as {reply.usage.prompt_tokens} tokens, not the "
            f"{len(expected)} of --model's chat template: serve the same template "
            "(vllm serve --chat-template) and tokenizer"
        )


def _first_difference(got: list[int], expected: list[int]) -> int:
    """The first position where the two token lists differ (the shorter's length if one extends the other)."""
    pairs = zip(got, expected, strict=False)
    return next((i for i, (a, b) in enumerate(pairs) if a != b), min(len(got), len(expected)))
