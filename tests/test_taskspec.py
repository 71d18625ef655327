"""A task defined in this file, registered at run time, goes through api, report and gate untouched.

This is the promise of the task registry: adding a task is its own package plus a preset; nothing under
``coca_eval/`` names it. The toy task counts how many tokens a model's tokenizer needs for a text of
``length`` characters (lower is better) and keeps one record per text for the gate to pair.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

import pytest

from coca_eval.api import Runtime, evaluate
from coca_eval.gate import make_options, run_gate, verdict_json
from coca_eval.gate.stats import mcnemar_drop
from coca_eval.methods import make_method
from coca_eval.report import ReportDefinition, build_report
from coca_eval.results import Cell, load_run
from coca_eval.taskspec import TASKS, EffectKind, GateHooks, ReportHooks, TaskSpec, register_task

TEXTS = ("the grass is green", "the sky is blue", "there and back again", "here we go")


@dataclass(frozen=True)
class ToyParams:
    lengths: tuple[int, ...] = (8, 16)

    def identity(self) -> dict:
        return asdict(self)


class ToyRunner:
    name, metric, dataset = "toy", "tokens_per_char", None

    def __init__(self, params, journal, progress, **options):
        self.progress = progress

    def cell_key(self, method, weights, length):
        return f"toy-{method.label}-{weights}-{length}"

    def prepare(self, method, backend):
        return backend

    def evaluate(self, method, backend, state, length, key):
        records = []
        for index, text in enumerate(TEXTS):
            cut = (text * length)[:length]
            records.append({"index": index, "tokens": len(backend.encode(cut)), "short": len(cut) > 4})
        value = sum(r["tokens"] for r in records) / (length * len(records))
        return Cell(task="toy", method=method.label, metric=self.metric, length=length, value=value,
                    n=len(records), detail={"records": records})  # fmt: skip


def toy_test(pair, options, seed):
    short_b = [r["short"] for r in pair.base.detail["records"]]
    short_c = [r["short"] for r in pair.cand.detail["records"]]
    return len(short_b), mcnemar_drop(short_b, short_c)


TOY = TaskSpec(
    name="toy",
    version=1,
    metric="tokens_per_char",
    lower_is_better=True,
    description="Tokens per character of a few fixed texts.",
    make_params=lambda values: ToyParams(**values),
    make_runner=ToyRunner,
    report=ReportHooks(
        table_title="Toy tokens per character",
        protocol=lambda run: f"Toy: {len(TEXTS)} texts per length.",
        units=lambda cell: len(cell.detail["records"]),
    ),
    gate=GateHooks(
        test=toy_test,
        tolerance=lambda options: options.max_acc_drop / 100,  # points; the toy's drop is a fraction
        effect=EffectKind("short_text_drop", sign=-1),
        units=lambda cell: {r["index"]: r["tokens"] for r in cell.detail["records"]},
        units_name="texts",
        units_differ="toy texts",
    ),
)


@pytest.fixture
def toy_task():
    register_task(TOY)
    yield TOY
    TASKS.remove("toy")


def test_a_task_registered_in_a_test_runs_renders_and_gates(toy_task, tiny_llama_dir, tmp_path):
    methods = [make_method(str(tiny_llama_dir), "none", "tiny", "float32", "hf")]
    params = toy_task.make_params({"lengths": (8, 16)})
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    run = evaluate("toy", methods, params, first, Runtime())
    evaluate(toy_task, methods, params, second, Runtime())
    assert [(c.task, c.length, c.status) for c in run.cells] == [("toy", 8, "ok"), ("toy", 16, "ok")]
    assert load_run(first).config["task"] == "toy"

    definition = ReportDefinition(show_n=True)
    output = build_report([first], definition, ["md"], tmp_path / "report")
    (table,) = output.tables
    assert table.title == "Toy tokens per character" and table.columns == ["8", "16"]
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert "Toy: 4 texts per length." in markdown and "(n=4)" in markdown
    assert [name for name, _ in output.plots] == ["toy_tokens_per_char_vs_length"]
    assert (tmp_path / "report" / "plots" / "toy_tokens_per_char_vs_length.png").stat().st_size > 1000

    result = run_gate([(load_run(first), load_run(second))], make_options("2%", "5", 0.05, 0, 1000))
    verdict = verdict_json(result)
    # 4 texts per cell rule out no drop of the tolerance: nothing regressed, nothing shown either
    assert result.exit_code == 0 and [c["verdict"] for c in verdict["cells"]] == ["inconclusive"] * 2
    assert {c["effect_kind"] for c in verdict["cells"]} == {"short_text_drop"}
    assert json.dumps(verdict)  # serialisable for CI


def test_an_unknown_task_in_a_results_file_still_renders(tmp_path):
    from coca_eval.results import Run, save_run

    cells = [Cell(task="elsewhere", method="m", metric="score", length=n, value=0.5) for n in (4, 8)]
    save_run(Run(config={"task": "elsewhere"}, cells=cells), tmp_path / "r.json")
    output = build_report([tmp_path / "r.json"], ReportDefinition(), [], tmp_path / "out")
    assert [t.title for t in output.tables] == ["elsewhere score by length"]


def test_built_in_tasks_are_registered_with_their_direction():
    assert TASKS.names()[:3] == ["ppl", "passkey", "opencompass"]
    assert TASKS.get("ppl").lower_is_better and TASKS.get("passkey").higher_is_better


def test_no_module_outside_a_task_package_branches_on_its_name():
    import re
    from pathlib import Path

    package = Path(__file__).resolve().parent.parent / "coca_eval"
    pattern = re.compile(r"""(==|!=|\bin)\s*\(?["'](ppl|passkey|opencompass)["']""")
    offenders = []
    for path in package.rglob("*.py"):
        owner = path.relative_to(package).parts[0]
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            match = pattern.search(line)
            if match and match.group(2) != owner:
                offenders.append(f"{path.relative_to(package)}:{number}: {line.strip()}")
    assert offenders == []


def test_task_order_does_not_depend_on_which_spec_module_was_imported_first():
    from coca_eval.registry import Registry

    registry = Registry[str]("thing", first=("ppl", "passkey"))
    registry._loaded = True  # no built-in modules to import in this test
    for name in ("extra", "passkey", "ppl"):
        registry.add(name, name)
    assert registry.names() == ["ppl", "passkey", "extra"]
