"""Sliding-window perplexity (the paper's Table 1)."""
