"""The KV cache a LLaMA decoder layer hands its attention, whichever keyword transformers uses for it.

transformers up to 5.23 passes it as ``past_key_values``; from 5.24 the decoder layer passes ``cache``
(the old name is still accepted, with a deprecation warning, at the model's own ``forward``). An
attention module that takes only one of the two names silently receives ``None`` under the other
release and recomputes nothing from the cache, so cached generation goes wrong without an error.
Our attention modules accept both and ask :func:`layer_cache` which one was given; callers that pass
a cache to a model use :func:`cache_keyword` and :func:`returned_cache`, so no release warns or breaks.
"""

from __future__ import annotations

import inspect
from typing import Any


def layer_cache(cache: Any, past_key_values: Any) -> Any:
    """The cache object passed under either name, or ``None`` when the layer runs without one."""
    if cache is not None and past_key_values is not None and cache is not past_key_values:
        raise ValueError("attention got two different KV caches (`cache` and `past_key_values`)")
    return cache if cache is not None else past_key_values


def cache_keyword(model: Any) -> str:
    """The keyword ``model.forward`` takes its cache under: ``cache`` from 5.24, else ``past_key_values``."""
    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


def returned_cache(output: Any) -> Any:
    """The KV cache a forward returned, read under the field name of the installed release."""
    cache = getattr(output, "cache", None)
    return cache if cache is not None else output.past_key_values
