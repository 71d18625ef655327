"""What an ``opencompass`` preset file may set: the benchmark list ``--datasets table5`` stands for."""

from __future__ import annotations

from pydantic import StrictStr

from coca_eval.params import PresetParams


class OpenCompassPresetParams(PresetParams):
    """Dataset names as ``--datasets`` takes them (``MMLU:anatomy`` for one subject)."""

    datasets: list[StrictStr] = None
