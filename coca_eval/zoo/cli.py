"""``coca-eval zoo``: list the miniature zoo and train its models with the shared recipe."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from coca_eval.errors import CocaEvalError

stdout = Console()

DEFAULT_OUT = Path("runs/zoo")


@click.group()
def zoo() -> None:
    """Tiny decoders trained here that differ only in position handling (the papers in miniature)."""


@zoo.command("list")
def list_models() -> None:
    """The zoo's entries, their position scheme and whether trained weights ship with this install."""
    import pandas as pd

    from coca_eval.tables import rich_table
    from coca_eval.zoo.catalog import ZOO, shipped_dir
    from coca_eval.zoo.finetune_catalog import FINETUNES

    rows = [
        (name, spec.label, _position(spec), "yes" if shipped_dir(name) else "no", spec.description)
        for name, spec in ZOO.items()
    ]
    rows += [
        (name, ft.label, f"fine-tune of {ft.base}", "yes" if shipped_dir(name) else "no", ft.description)
        for name, ft in FINETUNES.items()
    ]
    frame = pd.DataFrame(rows, columns=["name", "row label", "position", "shipped", "description"])
    stdout.print(rich_table(frame.set_index("name"), "", whole_labels=True))


def _position(spec) -> str:
    if spec.position == "coca":
        return f"coca ({spec.coca_variant})"
    if spec.position == "prope":
        return f"p-RoPE p={spec.rope_fraction:g}"
    return spec.position


@zoo.command()
@click.argument("model")
@click.option("--dataset", default="zoo:heldout", show_default=True, help="Documents to probe on.")
@click.option("--passage", default=32, show_default=True, help="Tokens per passage read twice.")
@click.option("--window", default=512, show_default=True, help="Full-context window (the trained length).")
def probe(model: str, dataset: str, passage: int, window: int) -> None:
    """How much MODEL uses its context: copying (a passage read twice) and perplexity with no context,
    one token of context and the full window, per document. Cheap enough for every checkpoint."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from coca_eval.data.sources import load_documents
    from coca_eval.models.presets import resolve_model
    from coca_eval.models.registration import register_model_types
    from coca_eval.zoo.probe import check_probe_sizes, context_use, probe_fits

    check_probe_sizes(passage, window)
    register_model_types()
    path = resolve_model(model)[0]
    tokenizer = AutoTokenizer.from_pretrained(path, trust_remote_code=False)
    lm = AutoModelForCausalLM.from_pretrained(path, trust_remote_code=False)
    import pandas as pd

    from coca_eval.tables import rich_table

    rows = []
    for doc in load_documents(dataset):
        ids = tokenizer(doc.text)["input_ids"]
        if not probe_fits(len(ids), passage, window):
            continue
        use = context_use(lm, ids, passage, window)
        numbers = (use.first_loss, use.repeat_loss, use.ppl_alone, use.ppl_one_back, use.ppl_window)
        rows.append((doc.doc_id, *(f"{x:.2f}" for x in numbers)))
    if not rows:
        need = max(2 * passage, window + 1) + 1
        raise CocaEvalError(f"no document of {dataset} has the {need} tokens --passage/--window need")
    columns = ["document", "first reading loss", "repeat loss", "PPL alone", "PPL one back", "PPL window"]
    stdout.print(rich_table(pd.DataFrame(rows, columns=columns).set_index("document"), ""))


@zoo.command()
@click.argument("name")
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=DEFAULT_OUT,
    show_default=True,
    help="Parent folder; each model trains in OUT/NAME and resumes from its checkpoint there.",
)
@click.option(
    "--device",
    default="cpu",
    show_default=True,
    help="cpu, cuda or cuda:N. Same batches everywhere; weights agree across devices only to rounding.",
)
def train(name: str, out: Path, device: str) -> None:
    """Train NAME: a zoo entry, a fine-tune (its base is taken from OUT, else the shipped weights),
    `all` (every entry, then every fine-tune), or a YAML spec file of your own variant or fine-tune."""
    from coca_eval.zoo.catalog import TRAIN_ORDER, ZOO, zoo_spec
    from coca_eval.zoo.finetune import FineTuneSpec, finetune
    from coca_eval.zoo.finetune_catalog import FINETUNES, finetune_spec, root_entry
    from coca_eval.zoo.hardware import device_memory, resolve_device
    from coca_eval.zoo.memory import check_training_fits
    from coca_eval.zoo.names import run_dir_under
    from coca_eval.zoo.specfile import load_spec_file
    from coca_eval.zoo.train import train as train_one
    from coca_eval.zoo.training_data import ZooData

    if name == "all":
        specs, tunes = [zoo_spec(n) for n in TRAIN_ORDER], list(FINETUNES.values())
    elif name.endswith((".yaml", ".yml")):
        spec = load_spec_file(Path(name))
        specs, tunes = ([], [spec]) if isinstance(spec, FineTuneSpec) else ([spec], [])
    elif name in FINETUNES:
        specs, tunes = [], [finetune_spec(name)]
    else:
        specs, tunes = [zoo_spec(name)], []
    for chosen in [*specs, *tunes]:
        run_dir_under(out, chosen.name)  # every run folder is checked before any model trains
    roots = specs or [ZOO[root_entry(t.base)] for t in tunes]  # a fine-tune reads its base's books
    books = {(s.architecture.vocab_size, s.recipe.extra_books) for s in roots}
    if len(books) != 1:
        raise CocaEvalError("models trained in one call must share a vocabulary size and training books")
    # A missing GPU, and a model too large for the memory there, are refused before the books are read
    # and before any tensor is allocated.
    memory, where = device_memory(resolve_device(device))
    for chosen in [*specs, *tunes]:
        check_training_fits(chosen, memory, where)
    data = ZooData.load(*books.pop())
    for spec in specs:
        stdout.print(f"{spec.name}: saved {train_one(spec, run_dir_under(out, spec.name), data, device)}")
    for tune in tunes:
        saved = finetune(tune, run_dir_under(out, tune.name), base_weights(tune.base, out), data, device)
        stdout.print(f"{tune.name}: saved {saved}")


@zoo.command()
@click.argument("names", nargs=-1, required=True)
@click.option("--from", "source", type=click.Path(path_type=Path), default=DEFAULT_OUT, show_default=True)
def ship(names: tuple[str, ...], source: Path) -> None:
    """Store trained models NAMES (or `all`) from SOURCE/NAME/model inside the package, as fp16 weights,
    so that this install (and a wheel built from it) serves them as presets."""
    from coca_eval.zoo.catalog import CHECKPOINTS, ZOO
    from coca_eval.zoo.finetune_catalog import FINETUNES
    from coca_eval.zoo.ship import ship as ship_one

    chosen = [*ZOO, *FINETUNES] if names == ("all",) else list(names)
    unknown = [n for n in chosen if n not in ZOO and n not in FINETUNES]
    if unknown:
        raise CocaEvalError(f"unknown zoo model {unknown[0]!r} (see `coca-eval zoo list`)")
    for name in chosen:
        stdout.print(f"{name}: shipped {ship_one(source / name / 'model', CHECKPOINTS / name)}")


def base_weights(name: str, out: Path) -> Path:
    """Trained weights of ``name``: a run under ``out`` first, else the checkpoint shipped with coca-eval."""
    from coca_eval.zoo.catalog import shipped_dir

    trained = out / name / "model"
    if (trained / "config.json").is_file():
        return trained
    if (shipped := shipped_dir(name)) is not None:
        return shipped
    raise CocaEvalError(f"{name} has no trained weights in {out} or in this install; train it first")
