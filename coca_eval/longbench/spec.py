"""The ``longbench`` (v1) and ``longbench_v2`` tasks' registrations, read as the generation base reads a
family, with LongBench's category averages (:mod:`coca_eval.longbench.reading`) and LongBench v2's
table (:mod:`coca_eval.longbench.v2_reading`). v1's samples score an F1, a ROUGE-L or a ratio, so the
gate pairs their mean; v2's are right or wrong, which the same test pairs by McNemar's. Imported by
``coca-eval --help``: every hook is lazy."""

from __future__ import annotations

from coca_eval.conventions import TaskPackage
from coca_eval.generation.family import family_spec
from coca_eval.longbench.reading import READING
from coca_eval.longbench.v2_reading import READING as V2_READING
from coca_eval.taskspec import register_task

LONGBENCH = TaskPackage("longbench")
VERSIONS = {  # params maker, runner, preset fields, the version's own cell key
    "v1": ("params:make_longbench_params", "task:LongBenchRunner", "params:LongBenchPresetParams", "subset"),
    "v2": (
        "params:make_longbench_v2_params",
        "v2_task:LongBenchV2Runner",
        "params:LongBenchV2PresetParams",
        "context",
    ),
}


def _register(reading, description: str, version: str) -> None:
    make_params, runner, preset_params, own_key = VERSIONS[version]
    register_task(
        family_spec(
            reading,
            version=1,
            description=description,
            graded=True,
            protocol_keys=("protocol", own_key, "chat_template", "answer_budget"),
            **LONGBENCH.spec(
                "command check shortest",
                make_params=make_params,
                make_runner=runner,
                preset_params=preset_params,
            ),
        )
    )


_register(
    READING,
    "LongBench v1: its 21 tasks on real documents (QA, summaries, few-shot, synthetic, code), by "
    "LongBench's own prompts and truncation or at exact token lengths: LongBench's metric per task and "
    "length.",
    "v1",
)
_register(
    V2_READING,
    "LongBench v2: its 503 multiple-choice questions on documents of 8k to 2M words, six domains, by its "
    "own prompts and truncation or at exact token lengths: accuracy per domain and length, and its table "
    "by difficulty and length class.",
    "v2",
)
