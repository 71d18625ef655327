"""``coca-eval zoo``: list the miniature zoo and train its models with the shared recipe."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from coca_eval.errors import CocaEvalError

stdout = Console()

DEFAULT_OUT = Path("runs/zoo")


@click.group()
def zoo() -> None:
    """Tiny decoders trained here that differ only in position handling (the papers in miniature)."""


@zoo.command("list")
def list_models() -> None:
    """The zoo's entries, their position scheme and whether trained weights ship with this install."""
    from coca_eval.zoo.catalog import ZOO
    from coca_eval.zoo.shipped import shipped_dir

    table = Table("name", "row label", "position", "shipped", "description")
    for name, spec in ZOO.items():
        table.add_row(
            name, spec.label, _position(spec), "yes" if shipped_dir(name) else "no", spec.description
        )
    stdout.print(table)


def _position(spec) -> str:
    if spec.position == "coca":
        return f"coca ({spec.coca_variant})"
    if spec.position == "prope":
        return f"p-RoPE p={spec.rope_fraction:g}"
    return spec.position


@zoo.command()
@click.argument("name")
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=DEFAULT_OUT,
    show_default=True,
    help="Parent folder; each model trains in OUT/NAME and resumes from its checkpoint there.",
)
def train(name: str, out: Path) -> None:
    """Train NAME (a zoo entry, `all`, or a YAML spec file of your own variant)."""
    from coca_eval.zoo.catalog import TRAIN_ORDER, zoo_spec
    from coca_eval.zoo.datasets import ZooData
    from coca_eval.zoo.recipe import load_spec_file
    from coca_eval.zoo.train import train as train_one

    if name == "all":
        specs = [zoo_spec(n) for n in TRAIN_ORDER]
    elif name.endswith((".yaml", ".yml")):
        specs = [load_spec_file(Path(name))]
    else:
        specs = [zoo_spec(name)]
    vocab = {s.architecture.vocab_size for s in specs}
    if len(vocab) != 1:
        raise CocaEvalError("models trained in one call must share a vocabulary size")
    data = ZooData.load(vocab.pop())
    for spec in specs:
        saved = train_one(spec, out / spec.name, data)
        stdout.print(f"{spec.name}: saved {saved}")
