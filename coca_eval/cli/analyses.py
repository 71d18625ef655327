"""``coca-eval analyze ...``: the analyses' commands, one per registered analysis task.

The group lists the tasks whose spec says ``group="analyze"``, so an analysis added by a plug-in
appears here too. Each command parses its options, calls :func:`coca_eval.api.evaluate` and prints the
methods x lengths table of its headline metric; plots come from ``coca-eval report``.
"""

from __future__ import annotations

import click

from coca_eval.cli.options import method_options, with_options
from coca_eval.registry import resolve


class AnalysisGroup(click.Group):
    """Subcommands from the task registry, imported only when run or asked for help."""

    def _entries(self) -> dict:
        from coca_eval.taskspec import TASKS

        return {name: spec for name, spec in TASKS.items() if spec.group == "analyze" and spec.command}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self._entries())

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        spec = self._entries().get(name)
        return None if spec is None else resolve(spec.command)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Analyses"):
            formatter.write_dl([(name, spec.description) for name, spec in self._entries().items()])


@click.group(cls=AnalysisGroup)
def analyze() -> None:
    """Analyses of RoPE models (frequency usage, q-k angles, decay, attention outliers) as tasks:
    typed cells, resumable from the journal beside --output, plots through `coca-eval report`."""


def document_options(length_help: str):
    """Where the text comes from and how much of it; shared by every analysis."""
    from coca_eval.data.sources import known_sources

    options = [
        click.option("--dataset", help=f"{known_sources()}."),
        click.option("--num-docs", type=int, help="Documents to read (default 2)."),
        click.option("--lengths", "--tokens", "lengths", help=length_help),
        click.option("--seed", type=int, help="Document sampling seed (default 0)."),
        click.option("--text-field", help="Text field of .jsonl/.parquet/hub rows."),
    ]
    return lambda command: with_options(command, options)


def analysis_method_options(name: str):
    """The method options of analysis ``name``, whose results land in ``runs/analyze-<name>-*.json``."""
    return method_options(
        splits=True,
        output_help=f"Write the results JSON here (journal beside it). Default: runs/analyze-{name}-*.json.",
    )


def analysis_command(name: str, summary: str, length_help: str, *own):
    """The command of analysis ``name`` (``summary`` its help): the documents' options (``length_help``
    for their lengths), its ``own`` options and the method options; it runs :func:`run_analysis`."""

    def command(**kwargs) -> None:
        run_analysis(name, **kwargs)

    options = [document_options(length_help), *own, analysis_method_options(name)]
    return analyze.command(name=name, help=summary)(with_options(command, options))


def run_analysis(name: str, models, ropes, methods_file, dtype, device, device_map, output, force, backend,
                 engine, shard, **values) -> None:  # fmt: skip
    """The body every analysis command shares: params, methods, evaluate, the summary table."""
    from coca_eval.analyses.params import make_params
    from coca_eval.api import evaluate
    from coca_eval.cli.options import build_cli_methods, make_runtime
    from coca_eval.cli.output import print_length_table, save_default
    from coca_eval.taskspec import TASKS

    params = make_params(name, values)
    methods = build_cli_methods(models, ropes, methods_file, dtype, backend)
    runtime = make_runtime(device, device_map, engine, force, shard=shard)
    run = evaluate(name, methods, params, output, runtime)
    if not runtime.share.leads:  # a torchrun rank other than 0: rank 0 writes and prints
        return
    written = save_default(run, output, f"analyze-{name}")
    spec = TASKS.get(name)
    heading = (
        f"[bold]{spec.report.table_title}[/bold] ({spec.metric}), {params.dataset}, {params.num_docs} docs"
    )
    print_length_table(run, heading, 3, written, "Plots: coca-eval report " + str(written))


@analyze.command()
@document_options("Distances to analyse up to (tokens per document), e.g. 2048 or 512,2048 (default 2048).")
@click.option(
    "--samples", type=int, help="Gaussian (q, k) draws of the p-RoPE paper's Fig 2 (b) (default 256)."
)
@click.option("--random-bound", type=int, help="L of random positions, Fig 8 (default 4x the length).")
@click.option("--head-dim", type=int, help="No model: the closed forms for this head dimension alone.")
@click.option("--base", type=float, help="No model: RoPE base theta (default 10000).")
@click.option("--rope-fraction", type=float, help="No model: p-RoPE's share of rotating planes (default 1).")
@click.option(
    "--trained-length", type=int, help="No model: the length PI/YaRN/dynamic refer to (default 2048)."
)
@analysis_method_options("decay")
def decay(head_dim, base, rope_fraction, trained_length, **kwargs) -> None:
    """Long-term decay: closed forms for the model's frequencies against its measured mean logit, or,
    with --head-dim (and --base, --rope, --rope-fraction) and no model, the closed forms alone."""
    geometry = {"head_dim": head_dim, "base": base, "rope_fraction": rope_fraction,
                "trained_length": trained_length}  # fmt: skip
    if any(value is not None for value in geometry.values()):
        run_closed_forms({k: v for k, v in geometry.items() if v is not None}, **kwargs)
    else:
        run_analysis("decay", **kwargs)


def run_closed_forms(geometry: dict, models, ropes, methods_file, output, shard, **values) -> None:
    """``analyze decay --head-dim D``: one row per ``--rope``, no model, no documents."""
    from coca_eval.analyses.geometry import RotaryGeometry, closed_form_run
    from coca_eval.analyses.params import make_params
    from coca_eval.cli.output import print_length_table, save_default
    from coca_eval.errors import CocaEvalError
    from coca_eval.models.rope import parse_rope
    from coca_eval.results import save_run

    if models or methods_file:
        raise CocaEvalError("--head-dim/--base/--rope-fraction/--trained-length describe a rotary table "
                            "without a model: leave out --model and --methods")  # fmt: skip
    if "head_dim" not in geometry:
        raise CocaEvalError("the closed forms without a model need --head-dim")
    if shard is not None:
        raise CocaEvalError("--shard splits documents between jobs; the closed forms read none")
    keep = ("dataset", "num_docs", "lengths", "seed", "text_field", "samples", "random_bound")
    params = make_params("decay", {k: v for k, v in values.items() if k in keep})
    patches = [parse_rope(rope) for rope in ropes or ("none",)]
    run = closed_form_run(
        RotaryGeometry(**geometry), patches, params.lengths, params.samples, params.seed, params.random_bound
    )
    if output is not None:
        save_run(run, output)
    written = save_default(run, output, "analyze-decay")
    heading = "[bold]RoFormer's relative bound at the farthest distance / at distance 0[/bold] (closed form)"
    print_length_table(run, heading, 3, written, "Plots: coca-eval report " + str(written))


frequencies = analysis_command(
    "frequencies",
    "RoPE frequency usage: mean 2-norm of each rotary plane of q, k and v, per layer and head.",
    "Tokens per document (default 2048); several lengths give one cell each.",
    click.option("--layers", help="Layers with per-head maps, e.g. 0,5,17 (default: first, middle, last)."),
)
angles = analysis_command(
    "angles",
    "Initial q-k angles per rotary plane and CoCA's anomalous regime (angle > pi for causal models).",
    "Tokens per document (default 2048).",
    click.option(
        "--pairs", type=int, help="(query, key) position pairs sampled per document and layer (default 4096)."
    ),
)
attention = analysis_command(
    "attention",
    "Attention logit outliers and local attention mass per layer and head, past the trained length.",
    "Lengths to read, e.g. 512..4k or 8192,16384 (1x .. 8x the trained length).",
    click.option("--near", type=int, help="Nearest keys whose softmax mass is reported (default 500)."),
    click.option("--last-rows", type=int, help="Final query rows that mass is averaged over (default 32)."),
    click.option(
        "--outlier-ratio",
        type=float,
        help="Max logit over the median head's that marks an outlier (default 5).",
    ),
)
