"""What ``coca-eval ppl`` says about the documents it drew, with ``--metric ppl`` and ``longppl`` alike:
too few qualify (an error) or fewer than the preset's count (a note under the table). Both commands'
runs draw their documents the same way, so they say it in the same words.
"""

from __future__ import annotations


def _in_force(origins: dict[str, str], key: str, value) -> str:
    """``--num-docs 2 from preset embedded``: a value and where it came from."""
    return f"--{key.replace('_', '-')} {value} from {origins.get(key, 'the ppl default')}"


def too_few_documents(exc, params, origins: dict[str, str]) -> str:
    """The sampler's counts with the values in force and where each came from, since a preset may have
    set them without the user knowing (the default preset draws 2 documents of 8192 tokens)."""
    count = "all" if params.num_docs is None else params.num_docs
    ceiling = "up to " if params.up_to_num_docs else ""
    in_force = (
        f"{_in_force(origins, 'num_docs', f'{ceiling}{count}')}, "
        f"{_in_force(origins, 'doc_tokens', params.doc_tokens)}"
    )
    advice = "lower --doc-tokens" if exc.found == 0 else "lower --num-docs or --doc-tokens"
    return (
        f"only {exc.found} of {exc.total} documents in {params.dataset} have >= {exc.doc_tokens} tokens "
        f"(in force: {in_force}); {advice}"
    )


def fewer_documents_note(run, params, origins: dict[str, str]) -> str | None:
    """The line under the table when the preset's count was a ceiling and fewer documents qualified:
    not an error (every qualifying one was used), but the table is not the preset's protocol."""
    if not params.up_to_num_docs:
        return None
    used = [len(c.detail["docs"]) for c in run.cells if "docs" in c.detail]
    wanted = min(params.num_docs, params.limit or params.num_docs)
    if not used or min(used) >= wanted:
        return None
    return (
        f"Note: {min(used)} document(s) of {params.dataset} have >= {params.doc_tokens} tokens, fewer than "
        f"{_in_force(origins, 'num_docs', params.num_docs)}; all were used (give --num-docs to require "
        "a count)."
    )
