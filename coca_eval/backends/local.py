"""What the serving backends (vllm, openai) still load locally: tokenizer and config.

Prompts are built in the model's own tokens on our side, so every backend encodes, decodes and places
BOS exactly like the hf backend does; only the forward passes run elsewhere.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from coca_eval.errors import CocaEvalError


@dataclass
class LocalModelSide:
    """Path, fingerprint, tokenizer and (unpatched) config of a method's model."""

    path: str
    fingerprint: str
    tokenizer: Any
    config: Any

    @property
    def trained_context(self) -> int | None:
        return getattr(self.config.get_text_config(), "max_position_embeddings", None)


def load_local_side(model: str) -> LocalModelSide:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from transformers import AutoTokenizer

    path, fingerprint, config = _resolved_config(model)
    try:
        tokenizer = AutoTokenizer.from_pretrained(path, trust_remote_code=False)
    except (OSError, ValueError, KeyError) as exc:
        raise CocaEvalError(f"cannot load model {model!r}: {str(exc).splitlines()[0]}") from None
    return LocalModelSide(path, fingerprint, tokenizer, config)


def model_config(model: str) -> Any:
    """The (unpatched) config of ``model``, read without its weights or tokenizer: what a check
    before any model loads may look at."""
    return _resolved_config(model)[2]


def _resolved_config(model: str) -> tuple[str, str, Any]:
    from transformers import AutoConfig

    from coca_eval.models.presets import resolve_model
    from coca_eval.models.registration import register_model_types

    register_model_types()
    path, fingerprint = resolve_model(model)
    try:
        config = AutoConfig.from_pretrained(path, trust_remote_code=False)
    except (OSError, ValueError, KeyError) as exc:
        raise CocaEvalError(f"cannot load model {model!r}: {str(exc).splitlines()[0]}") from None
    return path, fingerprint, config


class TokenizerMixin:
    """The tokenizer half of the backend interface, shared by the backends that score elsewhere."""

    side: LocalModelSide

    @property
    def tokenizer(self) -> Any:
        return self.side.tokenizer

    @property
    def fingerprint(self) -> str:
        return self.side.fingerprint

    @property
    def trained_context(self) -> int | None:
        return self.side.trained_context

    @property
    def bos_token_id(self) -> int | None:
        return self.side.tokenizer.bos_token_id

    @property
    def adds_bos(self) -> bool:
        from coca_eval.backends.special_tokens import tokenizer_adds_bos

        return tokenizer_adds_bos(self.side.tokenizer)

    @property
    def position_limit(self) -> int | None:
        from coca_eval.backends.hf import position_limit

        return position_limit(self.side.config)

    def encode(self, text: str) -> list[int]:
        from coca_eval.backends.special_tokens import encode_plain

        return encode_plain(self.side.tokenizer, text)

    def decode(self, tokens) -> str:
        return self.side.tokenizer.decode(list(tokens), skip_special_tokens=True)
