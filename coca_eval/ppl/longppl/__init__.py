"""LongPPL (Fang et al. 2025): perplexity on the key tokens, those whose loss falls when the long
context is there. ``keys`` finds and scores them (torch), ``params``, ``task`` and ``spec`` make it
``coca-eval ppl --metric longppl``, ``records``, ``report``, ``gate`` and ``compare`` read its cells.
Nothing is imported here, so registering the task (``coca-eval --help``) imports no torch."""
