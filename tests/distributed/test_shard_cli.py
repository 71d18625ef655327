"""``--shard K/N`` on the command line: malformed values, the shard's own journal, resume, -m."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from split_runs import run_task

from coca_eval.api import journal_path_for
from coca_eval.cli import main
from coca_eval.journal import Journal
from coca_eval.results import load_run

ROOT = Path(__file__).resolve().parents[2]


def cli_error(capsys, *args) -> str:
    capsys.readouterr()  # what the runs before printed
    with pytest.raises(SystemExit) as exit_info:
        main([*map(str, args)])
    err = capsys.readouterr().err.strip()
    assert exit_info.value.code == 2 and len(err.splitlines()) == 1, err
    return err


@pytest.mark.parametrize("shard", ["0/3", "4/3", "x/y", "1/0"])
@pytest.mark.parametrize("command", [["ppl"], ["passkey"], ["analyze", "angles"]])
def test_malformed_shard_is_one_line_and_exit_2(command, shard, tiny_llama_dir, tmp_path, capsys):
    out = tmp_path / "out.json"
    err = cli_error(capsys, *command, "--model", tiny_llama_dir, "--shard", shard, "--output", out)
    assert err.startswith("coca-eval: error: --shard") and not out.exists()


def test_a_shard_run_keeps_its_own_journal_and_reruns_without_a_model(
    tiny_llama_dir, corpus_file, tmp_path, capsys
):
    out = tmp_path / "s2.json"
    protocol = ["--num-docs", "4", "--doc-tokens", "128", "--lengths", "32", "--stride", "16"]
    args = ["ppl", "--model", str(tiny_llama_dir), "--dataset", str(corpus_file), *protocol,
            "--shard", "2/3", "--output", str(out)]  # fmt: skip
    capsys.readouterr()
    main(args)
    first = capsys.readouterr().err
    assert "shard 2/3: 1 of 4 units of 1 cell written to" in first and "coca-eval merge" in first
    assert (tmp_path / "s2.shard-2-of-3.journal.jsonl").exists()
    assert not (tmp_path / "s2.journal.jsonl").exists()
    main(args)
    assert "loading" not in capsys.readouterr().err  # the journaled partial cell is reused
    assert load_run(out).cells[0].detail["shard"] == "2/3"

    err = cli_error(capsys, *args[:-3], "1/3", "--output", out)  # another shard into this file
    assert "holds shard 2/3 of a run, not shard 1/3 of a run" in err


def test_shards_without_output_have_distinct_cache_journals(tmp_path):
    identity = {"params": {"lengths": [32]}}
    paths = {journal_path_for(None, "ppl", identity, tag) for tag in (None, "shard-1-of-2", "shard-2-of-2")}
    assert len(paths) == 3
    assert journal_path_for(Path("r.json"), "ppl", identity, "shard-1-of-2") == Path(
        "r.shard-1-of-2.journal.jsonl"
    )
    assert journal_path_for(Path("r.json.gz"), "ppl", identity) == Path("r.journal.jsonl")


def test_an_output_named_for_its_shard_names_the_journal_once(tmp_path):
    out = tmp_path / "table3_passkey.shard-1-of-6.json"
    once = tmp_path / "table3_passkey.shard-1-of-6.journal.jsonl"
    twice = tmp_path / "table3_passkey.shard-1-of-6.shard-1-of-6.journal.jsonl"
    assert journal_path_for(out, "passkey", {}, "shard-1-of-6") == once
    assert journal_path_for(out.with_name(out.name + ".gz"), "passkey", {}, "shard-1-of-6") == once
    assert journal_path_for(out, "passkey", {}, "shard-2-of-6") == tmp_path / (
        "table3_passkey.shard-1-of-6.shard-2-of-6.journal.jsonl"
    )
    twice.write_text("")  # a journal an earlier version named with the tag twice keeps resuming
    assert journal_path_for(out, "passkey", {}, "shard-1-of-6") == twice
    once.write_text("")  # unless the new name exists as well
    assert journal_path_for(out, "passkey", {}, "shard-1-of-6") == once


def test_a_shard_written_to_a_file_named_for_it_runs_and_resumes(
    tiny_llama_dir, corpus_file, tmp_path, capsys
):
    out = tmp_path / "s.shard-1-of-2.json"
    protocol = ["--num-docs", "2", "--doc-tokens", "64", "--lengths", "32", "--stride", "16"]
    args = ["ppl", "--model", str(tiny_llama_dir), "--dataset", str(corpus_file), *protocol,
            "--shard", "1/2", "--output", str(out)]  # fmt: skip
    main(args)
    assert sorted(p.name for p in tmp_path.glob("*.journal.jsonl")) == ["s.shard-1-of-2.journal.jsonl"]
    first = load_run(out).cells
    capsys.readouterr()
    main(args)
    assert "loading" not in capsys.readouterr().err  # resumed from the journal named once
    assert load_run(out).cells == first


def test_a_killed_shard_resumes_from_its_journal(
    task_runs, tiny_llama_dir, corpus_file, tmp_path, monkeypatch
):
    _, paths = task_runs("ppl")
    reference = load_run(paths[0])
    out = tmp_path / "again.json"
    record_part = Journal.record_part

    def killed_after_one_part(self, key, part, data):
        record_part(self, key, part, data)
        raise KeyboardInterrupt

    monkeypatch.setattr(Journal, "record_part", killed_after_one_part)
    with pytest.raises(KeyboardInterrupt):
        run_task("ppl", out, tiny_llama_dir, corpus_file, shard=(0, 3))
    monkeypatch.undo()
    journal = out.with_suffix(".shard-1-of-3.journal.jsonl")
    assert [json.loads(line)["kind"] for line in journal.read_text().splitlines()] == ["part"]

    run_task("ppl", out, tiny_llama_dir, corpus_file, shard=(0, 3))
    entries = [json.loads(line) for line in journal.read_text().splitlines()]
    parts = [(e["key"], e["part"]) for e in entries if e["kind"] == "part"]
    assert len(parts) == len(set(parts)) == 4  # units 0 and 3 of two cells, the first not redone
    assert [c.model_dump(exclude={"detail"}) for c in load_run(out).cells] == [
        c.model_dump(exclude={"detail"}) for c in reference.cells
    ]
    assert [c.detail for c in load_run(out).cells] == [c.detail for c in reference.cells]


def test_python_dash_m_runs_the_command_without_heavy_imports():
    probe = (  # the process ends inside the command, so the check is an exit handler
        "import atexit, runpy, sys\n"
        "heavy = lambda: ','.join(m for m in ('torch', 'vllm', 'opencompass') if m in sys.modules)\n"
        "atexit.register(lambda: print('HEAVY:' + heavy()))\n"
        "sys.argv = ['coca_eval', 'merge', '--help']\n"
        "runpy.run_module('coca_eval', run_name='__main__')\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert "--output" in result.stdout and "HEAVY:\n" in result.stdout
    version = subprocess.run([sys.executable, "-m", "coca_eval", "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout.startswith("coca-eval, version")
