"""The documented transformers promise, tried as a new user would: in a fresh virtual environment,
``import coca_eval.models`` and then ``AutoModelForCausalLM.from_pretrained(dir)`` loads every model type
coca-eval adds (CoCA LLaMA and NeoX, p-RoPE, ALiBi), whichever of the two packages is imported first.

The environment is a new venv whose only additions are this checkout and the running environment's
installed packages (a ``.pth`` file), so nothing the test process imported or registered can help.
"""

from __future__ import annotations

import re
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest
from tiny_models import make_tiny_coca, make_tiny_llama

from coca_eval.models.alibi import AlibiLlamaConfig, AlibiLlamaForCausalLM
from coca_eval.models.prope import PRopeLlamaConfig, PRopeLlamaForCausalLM

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "models.md"


@pytest.fixture(scope="module")
def fresh_python(tmp_path_factory) -> Path:
    """A new venv's interpreter that sees this checkout first, then the installed packages."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    installed = sysconfig.get_paths()["purelib"]
    (Path(site) / "00_checkout.pth").write_text(f"{ROOT}\nimport site; site.addsitedir({installed!r})\n")
    return python


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("checkpoints")
    return {
        "CocaLlamaForCausalLM": make_tiny_coca(base / "coca-llama", kind="llama"),
        "CocaNeoXForCausalLM": make_tiny_coca(base / "coca-neox", kind="neox"),
        "PRopeLlamaForCausalLM": make_tiny_llama(
            base / "prope", add_bos=False, config_class=PRopeLlamaConfig, model_class=PRopeLlamaForCausalLM
        ),
        "AlibiLlamaForCausalLM": make_tiny_llama(
            base / "alibi", add_bos=False, config_class=AlibiLlamaConfig, model_class=AlibiLlamaForCausalLM
        ),
    }


def documented_snippet() -> str:
    """The Python block of docs/models.md that loads a CoCA checkpoint with transformers."""
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    (snippet,) = [block for block in blocks if "AutoModelForCausalLM.from_pretrained(coca_dir)" in block]
    return snippet


def run(python: Path, code: str, cwd: Path) -> str:
    env = {"HF_HUB_OFFLINE": "1", "HOME": str(Path.home()), "PATH": "/usr/bin:/bin"}  # no PYTHONPATH
    result = subprocess.run(
        [python, "-c", code], capture_output=True, text=True, cwd=cwd, env=env, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def test_the_documented_snippet_runs_in_a_fresh_venv(fresh_python, checkpoints, tmp_path):
    snippet = documented_snippet()
    assert snippet.index("import coca_eval.models") < snippet.index("from transformers import")
    directory = checkpoints["CocaLlamaForCausalLM"]
    code, count = re.subn(r"^coca_dir = .*$", f"coca_dir = {str(directory)!r}", snippet, flags=re.M)
    assert count == 1
    assert run(fresh_python, code, tmp_path).strip().splitlines()[-1] == "CocaLlamaForCausalLM"


@pytest.mark.parametrize("transformers_first", [False, True], ids=["coca-eval-first", "transformers-first"])
def test_importing_coca_eval_models_registers_every_model_type(
    fresh_python, checkpoints, tmp_path, transformers_first
):
    imports = ["import coca_eval.models", "from transformers import AutoModelForCausalLM"]
    code = "\n".join(reversed(imports) if transformers_first else imports) + textwrap.dedent(f"""
        for directory in {[str(path) for path in checkpoints.values()]!r}:
            print(type(AutoModelForCausalLM.from_pretrained(directory)).__name__)
    """)
    assert run(fresh_python, code, tmp_path).split() == list(checkpoints)


def test_import_coca_eval_models_alone_imports_neither_torch_nor_transformers(fresh_python, tmp_path):
    code = "import sys, coca_eval.models; print(sorted({'torch', 'transformers'} & set(sys.modules)))"
    assert run(fresh_python, code, tmp_path).strip() == "[]"
