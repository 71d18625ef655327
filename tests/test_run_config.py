"""What a run records about how it was made."""

from __future__ import annotations

from pathlib import Path

from coca_eval.run_config import environment, recordable


def test_recordable_keeps_plain_values_and_writes_paths_as_text():
    options = {"batch": 4, "wait": 1.5, "bos": "auto", "dump": Path("a/b.jsonl"), "no": None, "o": object()}
    assert recordable(options) == {"batch": 4, "wait": 1.5, "bos": "auto", "dump": "a/b.jsonl"}


def test_environment_names_the_software_and_keeps_the_options_beside_it():
    import torch

    env = environment("cpu", batch=4)
    assert env["device"] == "cpu" and env["torch"] == torch.__version__ and env["batch"] == 4
    assert {"transformers", "python"} <= env.keys()
