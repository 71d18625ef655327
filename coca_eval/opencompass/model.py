"""Our model wrapper for OpenCompass: a ``BaseModel`` that loads through coca-eval's HF backend.

OpenCompass runs each task in a new process and builds this class from the dotted name in the config,
so importing this module must be enough: it imports ``coca_eval`` (registering the CoCA decoders)
and loads the method exactly as ``ppl`` and ``passkey`` do, rope patch and dtype included. Only
OpenCompass's task processes import this module.
"""

from __future__ import annotations

import numpy as np
import torch
from opencompass.models.base import BaseModel

from coca_eval.backends.hf import load_hf_backend
from coca_eval.methods import make_method
from coca_eval.opencompass.scoring import continuation_nll, mean_nll, padded_batch


class CocaEvalModel(BaseModel):
    """A coca-eval method (model + rope patch + dtype) as an OpenCompass model.

    Token sequences longer than ``max_seq_len`` keep their last tokens: the answer a PPL task scores
    sits at the end of the prompt.
    """

    def __init__(
        self,
        path: str,
        rope: str = "none",
        dtype: str = "float32",
        device: str = "cpu",
        max_seq_len: int = 2048,
        tokenizer_only: bool = False,
        meta_template: dict | None = None,
        **kwargs,
    ) -> None:
        super().__init__(
            path=path, max_seq_len=max_seq_len, tokenizer_only=tokenizer_only, meta_template=meta_template
        )
        self.method = make_method(path, rope, None, dtype, "hf")
        if tokenizer_only:
            from transformers import AutoTokenizer

            from coca_eval.models.presets import resolve_model
            from coca_eval.models.registration import register_model_types

            register_model_types()
            self.backend = None
            self.tokenizer = AutoTokenizer.from_pretrained(resolve_model(path)[0], trust_remote_code=False)
        else:
            self.backend = load_hf_backend(self.method, device)
            self.tokenizer = self.backend.tokenizer
        self.eos_token_id = self.eos_token_id or self.tokenizer.eos_token_id

    def _ids(self, text: str) -> list[int]:
        """Tokens as the model sees the text (BOS where the tokenizer adds one), last ``max_seq_len``."""
        return self.tokenizer(text).input_ids[-self.max_seq_len :]

    def get_token_len(self, prompt: str) -> int:
        return len(self.tokenizer(prompt).input_ids)

    def encode(self, prompt: str) -> torch.Tensor:
        return torch.tensor([self._ids(prompt)])

    def decode(self, tokens: torch.Tensor) -> str:
        return self.tokenizer.decode(tokens.reshape(-1).tolist(), skip_special_tokens=True)

    def get_ppl(self, inputs: list[str], mask_length: list[int] | None = None) -> np.ndarray:
        """Mean NLL of each input as OpenCompass defines it (see :func:`mean_nll`); with ``mask_length``
        the first tokens are context."""
        sequences = [self.tokenizer(text).input_ids for text in inputs]
        skip = [0] * len(sequences) if mask_length is None else list(mask_length)
        for i, ids in enumerate(sequences):  # keep the tail; the masked context shrinks accordingly
            cut = max(0, len(ids) - self.max_seq_len)
            sequences[i], skip[i] = ids[cut:], max(0, skip[i] - cut)
        return mean_nll(self.backend, sequences, skip).numpy()

    def get_loglikelihood(self, inputs: list[str], conts: list[str], mask_length=None) -> np.ndarray:
        """Sum log-probability of each continuation given the rest of its input."""
        pairs = []
        for text, cont in zip(inputs, conts, strict=True):
            context = text[: len(text) - len(cont)] if text.endswith(cont) else text.replace(cont, "", 1)
            full, head = self._ids(text), self.tokenizer(context).input_ids
            pairs.append((full, max(1, len(full) - len(head))))
        return -continuation_nll(self.backend, pairs).numpy()

    @torch.inference_mode()
    def generate(self, inputs: list[str], max_out_len: int, **kwargs) -> list[str]:
        """Greedy continuations, left-padded with an attention mask so every prompt ends at the edge."""
        ids, mask = padded_batch([self._ids(t) for t in inputs], left=True)
        model = self.backend.model
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.eos_token_id
        out = model.generate(
            input_ids=ids.to(self.backend.device),
            attention_mask=mask.to(self.backend.device),
            max_new_tokens=max_out_len,
            do_sample=False,
            pad_token_id=pad,
            eos_token_id=self.eos_token_id,
        )
        return [self.tokenizer.decode(row[ids.shape[1] :], skip_special_tokens=True) for row in out.cpu()]
