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
"""

from __future__ import annotations

from coca_eval.backends.openai_replies import ChatCompletion
from coca_eval.chat import ChatPrompt
from coca_eval.errors import CocaEvalError


def chat_payload(model: str, prompt: ChatPrompt, max_tokens: int) -> dict:
    """One greedy chat request for ``prompt``."""
    messages = [*prompt.history, {"role": "user", "content": prompt.user}]
    if prompt.prefill:
        messages.append({"role": "assistant", "content": prompt.prefill})
    return {
        "model": model,
        "messages": messages,
        "max_tokens": max_tokens,
        "temperature": 0,
        "logprobs": True,  # the answer tokens' log-probs: a non-finite one fails the sample
        "add_generation_prompt": not prompt.prefill,
        "continue_final_message": bool(prompt.prefill),
        "return_token_ids": True,
    }


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
