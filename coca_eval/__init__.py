"""coca-eval: long-context evaluation (sliding-window perplexity, passkey, OpenCompass) for CoCA
and RoPE-scaled models.

Importing this package is cheap: it pulls in neither vLLM nor OpenCompass, and torch/transformers only
when a backend or model is actually used.
"""

__version__ = "0.1.0"
