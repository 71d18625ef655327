"""One label per method: a row chosen by options (``--model zoo-coca-slack --rope dynamic:4``) is named
as the zoo's presets name it (the CoCA paper's ``RoFormer + dynamic NTK & CoCA``), so two runs of the
same method never carry two labels."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from coca_eval.methods import default_label, make_method
from coca_eval.models.rope import parse_rope

ZOO_TASKS = Path(__file__).resolve().parents[2] / "coca_eval" / "zoo" / "tasks"


@pytest.mark.parametrize("preset", ["zoo_ppl.yaml", "zoo_passkey.yaml"])
def test_every_labelled_row_of_the_zoo_presets_is_the_label_options_give(preset):
    rows = yaml.safe_load((ZOO_TASKS / preset).read_text())["methods"]
    labelled = [row for row in rows if "label" in row]
    assert len(labelled) >= 4
    for row in labelled:
        assert default_label(row["model"], parse_rope(row.get("rope"))) == row["label"], row


def test_a_patch_the_paper_does_not_name_reads_as_display_name_plus_patch():
    assert make_method("zoo-coca-slack", "dynamic:2", None, "float32", "hf").label == (
        "RoFormer + CoCA + dynamic NTK x2"
    )
    assert make_method("zoo-coca-slack", "dynamic:4", "mine", "float32", "hf").label == "mine"  # asked for
