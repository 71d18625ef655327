"""AA-LCR's answering prompt and its equality-checker judge prompts, as the dataset card publishes them
(``huggingface.co/datasets/ArtificialAnalysis/AA-LCR``, README). No copy of the card is kept offline;
the wording below is the card's as ports of the benchmark transcribe it (NVIDIA
NeMo Gym's, and another that checks its prompts' cl100k token counts against the dataset's
``input_tokens`` column; ModelScope evalscope's differs in white space: it joins the 1.0 prompt's
first two sentences on one line and opens the answering prompt with a blank line).
``scripts/aa_lcr_prompt_values.py`` runs NeMo Gym's code (commit 07d6b0d) that builds the answering
and 1.0 judge prompts outside this package, and the tests compare its committed output with these
builders. The 1.1 prompts are NeMo Gym's ``resources_servers/aalcr/versions.py`` at commit 3b7e5c9
(there said to be verbatim from the card's "Scoring Approach"), compared by reading, not run.

Two judge protocols were published:

* ``1.0`` (the card at release): one user message ending "Reply only with CORRECT or INCORRECT.";
* ``1.1`` (the card's later revision, dataset revision 9a77ef5): a system message of grading notes
  and a user message whose question, official and candidate answers are delimited, the verdict asked
  as JSON.

A judge's reply that names no verdict is no verdict: :func:`verdict` raises, and the sample's cell is an
error cell, never a 0.
"""

from __future__ import annotations

import json
import re

from coca_eval.errors import CocaEvalError

ANSWER_TEMPLATE = """BEGIN INPUT DOCUMENTS

{documents_text}

END INPUT DOCUMENTS

Answer the following question using the input documents provided above.

START QUESTION

{question}

END QUESTION
"""

JUDGE_1_0 = """Assess whether the following CANDIDATE ANSWER is CORRECT or INCORRECT.
For the CANDIDATE ANSWER to be correct, it must be consistent with the OFFICIAL ANSWER.

The question, for reference only: {question}
The OFFICIAL ANSWER: {official_answer}
CANDIDATE ANSWER TO ASSESS: {candidate_answer}

Reply only with CORRECT or INCORRECT."""

JUDGE_1_1_SYSTEM = """Decide whether the CANDIDATE ANSWER is correct or incorrect against the OFFICIAL ANSWER.
Note the following points when assessing correctness:

- Numbers should still match when they are the same value written differently, e.g., a
  percentage, a count of percentage points, and the equivalent decimal fraction are the same
  value: 0.675, "67.5%" and "67.5 percentage points" all match. So do different scales
  (thousand, million, bn) and different notations (thousands separators, currency symbols,
  LaTeX markup, and numbers written as words).
- Where the question asks for a particular format (e.g., a percentage, a number of decimal
  places, a unit, a rounding, or an ordering) the CANDIDATE ANSWER must meet it. If the
  question asks for no particular format, accept any equivalent form.
- In cases where the question asks for an ordered list, a title, honorific or article added
  to an entry in the CANDIDATE ANSWER can change where that entry sorts. Accept the ordering
  if it is correct either with those additions or without them.
- Grade the value the CANDIDATE ANSWER finally commits to, and it must commit to one. Values
  reached while working, and alternatives it considers and sets aside, do not count. If it
  offers several values without selecting one, it is incorrect even if one of them is right.
  Hedging is fine as long as one clearly definitive answer is given."""

JUDGE_1_1_USER = """Assess whether the following CANDIDATE ANSWER is CORRECT or INCORRECT.
For the CANDIDATE ANSWER to be correct, it must be consistent with the OFFICIAL ANSWER.

The question, for reference only: START QUESTION {question}

END QUESTION

The OFFICIAL ANSWER: {official_answer}

END OFFICIAL ANSWER

BEGIN CANDIDATE ANSWER TO ASSESS

{candidate_answer}

END CANDIDATE ANSWER TO ASSESS

Reply as JSON, with a verdict of CORRECT or INCORRECT."""

JUDGE_PROTOCOLS = ("1.0", "1.1")
VERDICTS = ("CORRECT", "INCORRECT")


def documents_text(documents: list[str]) -> str:
    """The documents as the card joins them: each between numbered BEGIN and END lines."""
    return "\n\n".join(
        f"BEGIN DOCUMENT {n}:\n{text}\nEND DOCUMENT {n}" for n, text in enumerate(documents, start=1)
    )


def answer_prompt(documents: list[str], question: str) -> str:
    """The question's prompt over its documents, in the card's order (``data_source_filenames``)."""
    return ANSWER_TEMPLATE.format(documents_text=documents_text(documents), question=question)


def judge_messages(protocol: str, question: str, official: str, candidate: str) -> list[dict]:
    """The judge's chat messages under ``protocol`` (1.0: one user turn; 1.1: system and user)."""
    fields = {"question": question, "official_answer": official, "candidate_answer": candidate}
    if protocol == "1.0":
        return [{"role": "user", "content": JUDGE_1_0.format(**fields)}]
    if protocol == "1.1":
        return [
            {"role": "system", "content": JUDGE_1_1_SYSTEM},
            {"role": "user", "content": JUDGE_1_1_USER.format(**fields)},
        ]
    raise CocaEvalError(f"--judge-protocol must be one of {', '.join(JUDGE_PROTOCOLS)} (got {protocol!r})")


_DECORATION = " \t*_.`'\"!"  # what a judge wraps a bare verdict in: bold, a full stop, quotes
_JSON = re.compile(r"\{[^{}]*\}")


def verdict(protocol: str, reply: str) -> str:
    """CORRECT or INCORRECT from the judge's ``reply``: under 1.0 the reply itself, or its last line,
    when that is the bare word (case, white space, bold, quotes and a full stop aside: "The answer is
    not CORRECT" is no verdict); under 1.1 the ``verdict`` of its JSON object. Anything else raises
    :class:`~coca_eval.errors.CocaEvalError`."""
    text = reply.strip()
    if protocol == "1.1":
        for found in _JSON.findall(text):
            try:
                value = json.loads(found).get("verdict")
            except (ValueError, AttributeError):
                continue
            if isinstance(value, str) and value.strip().upper() in VERDICTS:
                return value.strip().upper()
        raise CocaEvalError(f"the judge's reply holds no JSON verdict: {text[:80]!r}")
    lines = [line for line in text.splitlines() if line.strip()]
    for candidate in (text, *lines[-1:]):
        word = candidate.strip(_DECORATION).upper()
        if word in VERDICTS:
            return word
    raise CocaEvalError(f"the judge's reply is no bare verdict: {text[:80]!r}")
