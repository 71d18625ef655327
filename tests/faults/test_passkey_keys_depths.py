"""Passkey prompts built with different tokenizers state the same keys at the same depths.

The test this replaces compared keys drawn by a function that takes no tokenizer, and never compared
depths, so a key or a depth that depended on the tokenizer (its BOS, its filler sentences) passed. Here
each prompt's key is read back from its decoded key line and its depth from where the key line sits.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "passkey"))  # the tokenizers of tests/passkey
from test_prompts import TOKENIZERS, builder_for  # noqa: E402

from coca_eval.passkey.prompts import draw_samples  # noqa: E402


def carried_keys_and_depths(name, length=2000):
    """The key each prompt states (read back from its decoded key line) and where the key line sits,
    as a fraction of the filler, with the tolerance that one filler sentence of this tokenizer allows."""
    tokenizer, builder = builder_for(name)
    carried = []
    for sample in draw_samples(3, length, 10, "stratified"):
        prompt = builder.build(sample, length)
        key_line = tokenizer.decode(prompt.ids[prompt.key_start : prompt.key_end], skip_special_tokens=True)
        n_filler = length - len(builder.bos) - len(builder.intro) - len(builder.question)
        n_filler -= prompt.key_end - prompt.key_start
        depth = (prompt.key_start - len(builder.bos) - len(builder.intro)) / n_filler
        carried.append((int(re.search(r"\d+", key_line).group()), depth))
    return carried, max(len(s) for s in builder.sentences) / n_filler


def test_keys_and_depths_identical_across_tokenizers():
    """Prompts built with three tokenizers state the same keys and put them at the same relative depth
    (within one filler sentence of each tokenizer), so a comparison across models compares like with like."""
    (reference, ref_slack), *others = [carried_keys_and_depths(name) for name in TOKENIZERS]
    for carried, slack in others:
        assert [key for key, _ in carried] == [key for key, _ in reference]
        for (_, depth), (_, ref_depth) in zip(carried, reference, strict=True):
            assert abs(depth - ref_depth) <= slack + ref_slack
