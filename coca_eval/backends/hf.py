"""Hugging Face transformers backend: AutoModelForCausalLM with SDPA attention.

Scoring never builds [L x vocab] logits: the decoder runs once, then the LM head is applied only to
the scored positions, a chunk of rows at a time, and each chunk is reduced to NLLs at once. At load a
short probe checks that this path equals the model's own ``forward`` logits; models whose head does
something unusual fall back to ``forward(logits_to_keep=...)``. Two more probed paths do less work for
the same numbers: the last layer only on scored rows (:mod:`~coca_eval.backends.tail`) and banded
sliding-window attention (:mod:`~coca_eval.backends.banded`).
"""

from __future__ import annotations

import os
from typing import Any

import torch

from coca_eval.backends import dynamic_rope, probes
from coca_eval.backends.banded import banded_sdpa
from coca_eval.backends.greedy import GreedyBackend, GreedyOptions, OnDone
from coca_eval.backends.special_tokens import encode_plain, tokenizer_adds_bos
from coca_eval.backends.stopping import StopRule
from coca_eval.backends.tail import tail_rows
from coca_eval.errors import CocaEvalError
from coca_eval.methods import MethodSpec

HEAD_CHUNK_BYTES = 512 * 2**20  # float32 logits held at once: ~512 rows of a 262k vocabulary
CACHE_BLOCK_BYTES = 8 * 2**20  # logits reduced at a time: small enough to stay in the CPU's cache
_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def position_limit(config: Any) -> int | None:
    """Hard position limit of models with learned absolute positions; rotary and ALiBi models have none
    (running them past their trained length is what long-context evaluation measures)."""
    config = config.get_text_config()
    if getattr(config, "rope_parameters", None) or getattr(config, "alibi", False):
        return None
    if config.model_type in ("bloom", "mpt", "falcon") or not hasattr(config, "max_position_embeddings"):
        return None
    return config.max_position_embeddings


def _token_nll(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Per-token NLL = logsumexp(logits) - logit of the target, in float32, consuming ``logits``.

    Max-shifted and exponentiated in place: as exact as ``torch.logsumexp`` (~1e-7 nats from a float64
    reference) at half its time, which matters with 262k-word vocabularies. (float32 ``cross_entropy``
    on CPU is biased by 4e-6 to 2e-5 nats per token, and by ~1e-4 on a transposed view.)
    """
    target_logits = logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1)  # (b, s)
    shift = logits.amax(dim=-1, keepdim=True)  # (b, s, 1)
    total = logits.sub_(shift).exp_().sum(dim=-1)  # (b, s)
    return total.log() + shift.squeeze(-1) - target_logits  # (b, s)


class HFBackend(GreedyBackend):
    """A loaded transformers model and tokenizer, scoring windows as :class:`ScoringBackend` says.

    Beside that interface, the load probes (:mod:`.probes`) and the greedy decoder (:mod:`.hf_generation`)
    use ``model``, ``device``, ``softcap``, ``fast_paths``, ``has_dynamic_rope``, ``reset_dynamic_rope``,
    ``pads_exactly`` and ``final_hidden``; the rest is private.
    """

    def __init__(self, model: Any, tokenizer: Any, fingerprint: str, trained_context: int | None) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.fingerprint = fingerprint
        self.trained_context = trained_context
        self.device = next(model.parameters()).device
        self.softcap: float | None = getattr(model.config.get_text_config(), "final_logit_softcapping", None)
        self._dynamic = dynamic_rope.dynamic_rope_modules(model)
        self._pads_exactly: bool | None = None
        self.fast_paths: frozenset[str] = frozenset()  # the plain path while the probes run
        self.fast_paths = probes.choose_fast_paths(self)

    @property
    def has_dynamic_rope(self) -> bool:
        """Whether some rotary table rescales with the sequence length (dynamic NTK, dynamic YaRN)."""
        return bool(self._dynamic)

    @property
    def pads_exactly(self) -> bool:
        """Whether prompts of unequal lengths may decode in one left-padded batch (probed once, on first
        use: see :func:`.padding.padding_matches_batch_one`)."""
        if self._pads_exactly is None:
            from coca_eval.backends.padding import padding_matches_batch_one

            self._pads_exactly = padding_matches_batch_one(self)
        return self._pads_exactly

    @property
    def bos_token_id(self) -> int | None:
        return self.tokenizer.bos_token_id

    @property
    def adds_bos(self) -> bool:
        return tokenizer_adds_bos(self.tokenizer)

    @property
    def position_limit(self) -> int | None:
        return position_limit(self.model.config)

    def encode(self, text: str) -> list[int]:
        return encode_plain(self.tokenizer, text)

    def reset_dynamic_rope(self) -> None:
        """Make each forward scale dynamic rope for its own length (see :mod:`.dynamic_rope`)."""
        dynamic_rope.reset(self._dynamic)

    def dynamic_rope_held_at(self, length: int, through_answer: bool = False):
        """Context: dynamic rope scaled for a ``length``-token prompt while it is prefilled in pieces
        (and, ``through_answer``, while its answer is generated)."""
        return dynamic_rope.held_at(self._dynamic, length, self.device, through_answer)

    def _head_nll(self, hidden: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """The head runs on up to HEAD_CHUNK_BYTES of logits at once (its weight is read once per chunk);
        each chunk is then reduced a cache-sized block of rows at a time, so the reduction's several
        passes over the logits hit the cache instead of memory (it matters for 262k vocabularies)."""
        head = self.model.get_output_embeddings()
        row_bytes = 4 * head.weight.shape[0] * hidden.shape[0]
        rows, block = max(16, HEAD_CHUNK_BYTES // row_bytes), max(1, CACHE_BLOCK_BYTES // row_bytes)
        out = []
        for lo in range(0, hidden.shape[1], rows):
            logits = head(hidden[:, lo : lo + rows]).float()  # (b, r, vocab)
            chunk_targets = targets[:, lo : lo + rows]  # (b, r)
            for b in range(0, logits.shape[1], block):
                part = logits[:, b : b + block]  # (b, r, vocab), a view reduced in place
                if self.softcap:
                    part.div_(self.softcap).tanh_().mul_(self.softcap)
                out.append(_token_nll(part, chunk_targets[:, b : b + block]))  # (b, r)
        return torch.cat(out, dim=1)  # (b, s)

    @torch.inference_mode()
    def score(self, input_ids: torch.Tensor, first_logit: int, targets: torch.Tensor) -> torch.Tensor:
        self.reset_dynamic_rope()
        input_ids, targets = input_ids.to(self.device), targets.to(self.device)
        n = targets.shape[1]
        if probes.SPLIT_HEAD in self.fast_paths:
            hidden = self._scored_hidden(input_ids, first_logit)  # (b, n - first_logit, hidden)
            nll = self._head_nll(hidden[:, :n], targets)  # (b, s)
        else:
            keep = input_ids.shape[1] - first_logit
            logits = (
                self.model(input_ids=input_ids, logits_to_keep=keep, use_cache=False).logits[:, :n].float()
            )  # (b, s, vocab)
            nll = _token_nll(logits, targets)  # (b, s)
        return nll.double().cpu()

    def _decode_greedy(
        self, prompts, prefix_lengths, stop: StopRule, on_done: OnDone, options: GreedyOptions
    ) -> bool:
        """Step-by-step greedy decoding, ``options.batch_size`` rows at a time (None: as many rows of
        the longest prompt as fit, :func:`.batch_size.auto_batch_size`; rows of unequal lengths
        left-padded, :mod:`.padding`), with the shared-prefix KV cache (see :mod:`.hf_generation`);
        ``hold_dynamic_rope`` keeps the prompt's dynamic rope scaling for the answer."""
        from coca_eval.backends.batch_size import auto_batch_size
        from coca_eval.backends.hf_generation import GreedyDecoder, decode_prompts

        batch_size = options.batch_size
        if batch_size is None and prompts:
            longest = max(len(p) for p in prompts)
            batch_size = auto_batch_size(self.model, longest, stop.max_new_tokens)
        decoder = GreedyDecoder(self, stop, options.hold_dynamic_rope, batch_size or 1)
        reuse, groups = options.prefix_reuse, options.prefix_groups
        return decode_prompts(decoder, prompts, prefix_lengths, on_done, reuse, groups)

    def _scored_hidden(self, input_ids: torch.Tensor, first_logit: int) -> torch.Tensor:
        """Final hidden states from ``first_logit`` on; the last layer runs on those rows alone where the
        model allows it (see :mod:`coca_eval.backends.tail`)."""
        if probes.TAIL_ROWS not in self.fast_paths:
            return self.final_hidden(input_ids)[:, first_logit:]  # (b, s, hidden)
        with tail_rows(self.model, input_ids.shape[1] - first_logit):
            return self.final_hidden(input_ids)  # (b, s, hidden)

    def final_hidden(self, input_ids: torch.Tensor) -> torch.Tensor:
        """The decoder's last hidden states (b, n, hidden), built without a KV cache (nothing reuses one
        here, and a cache would make the tail layer fall back to running every row), with banded
        sliding-window attention where the load probe allowed it."""
        with banded_sdpa(probes.BANDED in self.fast_paths):
            return self.model.get_decoder()(input_ids=input_ids, use_cache=False).last_hidden_state


def _damaged_weights_errors() -> tuple[type[BaseException], ...]:
    """What reading a truncated or foreign weights file raises (safetensors' header check, a pickle
    cut short): a damaged download or a link to another file, the user's to fix, not a traceback."""
    import pickle

    from safetensors import SafetensorError

    return (SafetensorError, pickle.UnpicklingError, EOFError)


def load_hf_backend(method: MethodSpec, device: str = "cpu", device_map: str | None = None) -> HFBackend:
    """Load the method's model with its rope patch applied to the config before the weights."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    from coca_eval.models.presets import resolve_model
    from coca_eval.models.registration import register_model_types
    from coca_eval.models.rope import apply_rope_patch

    register_model_types()
    hf_logging.disable_progress_bar()
    path, fingerprint = resolve_model(method.model)
    try:
        config = AutoConfig.from_pretrained(path, trust_remote_code=False)  # never custom code
        trained = getattr(config.get_text_config(), "max_position_embeddings", None)
        config = apply_rope_patch(config, method.rope)
        model = AutoModelForCausalLM.from_pretrained(
            path,
            config=config,
            dtype=_DTYPES[method.dtype],
            attn_implementation="sdpa",
            device_map=device_map,
            trust_remote_code=False,
        )
        tokenizer = AutoTokenizer.from_pretrained(path, trust_remote_code=False)
    except (OSError, ValueError, KeyError, *_damaged_weights_errors()) as exc:
        raise CocaEvalError(f"cannot load model {method.model!r}: {str(exc).splitlines()[0]}") from None
    except RuntimeError as exc:  # torch.load on a cut-off pickle .bin; anything else is a bug
        if "PytorchStreamReader" not in str(exc):
            raise
        raise CocaEvalError(f"cannot load model {method.model!r}: {str(exc).splitlines()[0]}") from None
    if device_map is None:
        model.to(device)
    model.eval()
    return HFBackend(model, tokenizer, fingerprint, trained)


def load_for_request(method, request) -> object:
    """The backend registry's loader (:mod:`coca_eval.backends.registry`)."""
    return load_hf_backend(method, request.device, request.device_map)
