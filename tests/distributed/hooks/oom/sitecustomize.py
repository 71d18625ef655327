"""Test hook (on PYTHONPATH only in the torchrun out-of-memory test): on the rank named by
``COCA_EVAL_TEST_OOM_RANK``, scoring a perplexity window longer than 32 tokens runs out of memory."""

import os

if "RANK" in os.environ and os.environ["RANK"] == os.environ.get("COCA_EVAL_TEST_OOM_RANK"):
    import torch

    from coca_eval.ppl import task

    _score_tokens = task.score_tokens

    def _out_of_memory_past_32(backend, ids, plan, *args):
        if max(window.length for window in plan) > 32:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 64.00 GiB")
        return _score_tokens(backend, ids, plan, *args)

    task.score_tokens = _out_of_memory_past_32
