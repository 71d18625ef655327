"""coca-eval: long-context evaluation (sliding-window perplexity, passkey, OpenCompass) for CoCA
and RoPE-scaled models.

Importing this package imports neither torch nor transformers (nor vLLM or OpenCompass): the CLI's
``--help``, ``report`` and ``gate`` never run a model. Custom model types (CoCA) register with
transformers' Auto classes when a model is loaded (:mod:`coca_eval.models.registration`).
"""

__version__ = "0.1.0"
