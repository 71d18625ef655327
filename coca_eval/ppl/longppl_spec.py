"""The ``longppl`` task's registration: LongPPL cells, run by ``coca-eval ppl --metric longppl``.

Imported by ``coca-eval --help``, so every hook is a lazy reference to its implementation.
"""

from __future__ import annotations

from coca_eval.registry import lazy
from coca_eval.taskspec import ReportHooks, TaskSpec, register_task

register_task(
    TaskSpec(
        name="longppl",
        version=1,
        metric="longppl",
        lower_is_better=True,
        description="LongPPL: perplexity on the key tokens that need long context (ppl --metric longppl).",
        make_params=lazy("coca_eval.ppl.longppl_params:make_longppl_params"),
        make_runner=lazy("coca_eval.ppl.longppl_task:LongPplTask"),
        finish=lazy("coca_eval.ppl.task:record_documents"),
        check=lazy("coca_eval.ppl.longppl_task:check_longppl"),
        combine=lazy("coca_eval.ppl.longppl_task:combine_longppl_cell"),
        report=ReportHooks(
            table_title="LongPPL (key-token perplexity) by evaluation length",
            interval=lazy("coca_eval.ppl.longppl_compare:longppl_interval"),
            interval_note="Brackets: 95 % bootstrap interval of LongPPL, resampling documents.",
        ),
    )
)
