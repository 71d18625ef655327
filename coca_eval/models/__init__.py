"""Model presets, rope patches, the position-scheme decoders (CoCA, p-RoPE, ALiBi) and the vLLM plug-in.

Importing this package registers the model types ``coca_llama``, ``coca_gpt_neox``, ``prope_llama`` and
``alibi_llama`` with transformers' Auto classes, without importing transformers or torch itself: at once
when transformers is already imported, else the moment it is (:mod:`coca_eval.models.registration`).

Shape legend. Every tensor line in ``models/`` and ``backends/`` carries a shape comment such as
``# (b, h, n, d)``, written with these names (parentheses, one name per axis):

========  ==================================================================================
b         batch: sequences in one forward pass
n         positions in the forward pass (a window's tokens); the key axis of attention scores
m         query positions, where they differ from the key positions (scores are (b, h, m, n))
n_past    positions already held in a KV cache
s         scored positions: the rows at the end of a window whose predictions are kept
r         rows of one block, where attention or the LM head runs a block of rows at a time
k         keys one block of rows can see
h         attention (query) heads
kv        key/value heads (grouped-query attention: h = kv x groups)
d         head dimension
rot       rotary dimensions (partial rotary: rot < d)
hidden    model width (``hidden_size``); ``inter`` is the MLP's inner width
vocab     vocabulary size
T         tokens of one vLLM step, every sequence end to end (vLLM has no batch axis)
max_pos   positions a rotary cos/sin cache covers
========  ==================================================================================

``h*d`` is two axes flattened into one, ``3d`` three head-dimension slices side by side, ``x | y`` either
axis depending on the tensor or the case, ``...`` any leading axes, and a number is an exact size.
"""

from coca_eval.models.registration import register_when_transformers_loads

register_when_transformers_loads()
