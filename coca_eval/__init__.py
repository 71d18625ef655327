"""coca-eval: long-context evaluation (sliding-window perplexity, passkey, OpenCompass) for CoCA
and RoPE-scaled models.

Importing this package registers the CoCA decoders with transformers' Auto classes, so it loads torch
and transformers; it never pulls in vLLM or OpenCompass.
"""

__version__ = "0.1.0"

from coca_eval.models.alibi import register as _register_alibi  # noqa: E402
from coca_eval.models.coca import register as _register_coca  # noqa: E402
from coca_eval.models.prope import register as _register_prope  # noqa: E402

_register_coca()
_register_prope()
_register_alibi()
