"""The fenced code blocks of the README and the documentation pages, and what each block's first line
says about running it.

A ``bash`` or ``python`` block is an example. Its first line decides what the tests do with it:

- ``# needs: gpu, hub (why)``: it cannot run here; each named need must show in the block (see
  :data:`NEEDS`), so a marker cannot hide a runnable example;
- ``# slow: why``: it runs, under the ``slow`` marker;
- ``# file: PATH``: a file that the page's later examples use; it is written, not run (any language);
- ``# run by: tests/...``: a dedicated test runs it (the test file must name the page);
- anything else: it runs in the default suite, in a temporary directory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_LANGUAGES = ("bash", "python")
# Pages another part of the project curates; their examples are not run here.
NOT_CHECKED: set[str] = set()

# What a block marked ``# needs: NAME`` must contain: the thing that cannot be had on a CPU machine
# without a hub, a cluster, a server or an extra.
NEEDS = {
    "gpu": r"--device cuda|--gres=gpu|gpu_suite\.sh|\bcuda\b",
    "hub": r"--preset pg19|--dataset (?:pg19|hf:)|--model (?![.~/])[\w.-]+/[\w.-]+|export hub(?!.*--dry-run)",
    "vllm": r"--backend vllm|\bvllm serve\b|install_vllm|test_vllm",
    "opencompass": r"opencompass",
    "server": r"--base-url",
    "cluster": r"\bsbatch\b|#SBATCH|--nnodes|\bray start\b",
    "pypi": r"scripts/install\w*\.sh|\bpip install\b",
    "files": r"\b(?:[A-Z][A-Z0-9]*_)*(?:DIR|CKPT|CSV)\b|\bcheckpoints/",
    # Training a model: hours per model on a CPU, and its books from Debian packages (apt-get).
    "training": r"\bzoo train\b",
}

_FENCE = re.compile(r"^```(?P<lang>[\w+-]*)[^\n]*\n(?P<body>.*?)^```[ \t]*$", re.M | re.S)
_MARK = re.compile(r"#\s*(needs|slow|file|run by):\s*(.*)")


@dataclass(frozen=True)
class Block:
    page: str  # relative to the repository root
    line: int  # of the opening fence
    language: str
    text: str

    @property
    def name(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def mark(self) -> tuple[str, str] | None:
        """``("needs", "gpu, hub (why)")`` from the first line, or None for a plain example."""
        first = self.text.split("\n", 1)[0].strip()
        found = _MARK.fullmatch(first)
        return (found.group(1), found.group(2).strip()) if found else None

    @property
    def needs(self) -> list[str]:
        kind, value = self.mark or ("", "")
        return [need.strip() for need in value.split("(")[0].split(",")] if kind == "needs" else []

    @property
    def body(self) -> str:
        """The block without its marker line."""
        return self.text.split("\n", 1)[1] if self.mark else self.text


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks(page: Path) -> list[Block]:
    text = page.read_text()
    name = str(page.relative_to(ROOT))
    return [
        Block(name, text.count("\n", 0, match.start()) + 1, match.group("lang"), match.group("body"))
        for match in _FENCE.finditer(text)
    ]


def examples() -> list[Block]:
    """Every bash and python block of the checked pages."""
    return [
        block
        for page in pages()
        if str(page.relative_to(ROOT)) not in NOT_CHECKED
        for block in blocks(page)
        if block.language in EXAMPLE_LANGUAGES
    ]


def files_of(page: str, before_line: int | None = None) -> dict[str, str]:
    """The ``# file: PATH`` blocks of ``page`` (up to ``before_line``): path -> content."""
    found = {}
    for block in blocks(ROOT / page):
        if before_line is not None and block.line >= before_line:
            break
        if block.mark and block.mark[0] == "file":
            found[block.mark[1].split()[0]] = block.body
    return found


def install_page_distribution(page: str, name: str, tmp_path: Path) -> tuple[dict[str, str], Path]:
    """The ``# file: NAME/...`` blocks of ``page`` written under ``tmp_path`` (each package's empty
    ``__init__.py`` beside them) and installed with pip into ``tmp_path/site``, without network:
    the page's files and the site folder."""
    import subprocess
    import sys

    files = {k: v for k, v in files_of(page).items() if k.startswith(f"{name}/")}
    packages = {str(Path(k).parent) for k in files if k.endswith(".py")}
    for relative, content in {**files, **{f"{p}/__init__.py": "" for p in packages}}.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(content)
    site = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index"]
    subprocess.run([*pip, "--target", str(site), str(tmp_path / name)], check=True, timeout=300)
    return files, site
