#!/usr/bin/env bash
# The gate's paired statistics behind the perplexity claims in reports/zoo/README.md: one row per
# (comparison, length), the candidate's PPL change against the baseline's, its 95 % interval over the
# eight Austen documents and the Holm-adjusted p of a paired test in the direction of the change
# (a rise: the gate as run; a fall: the gate with the two rows swapped). Writes reports/zoo/claims_ppl.md.
set -uo pipefail
cd "$(dirname "$0")/runs"
pairs=(
  "table1_ppl.json|RoFormer|RoFormer + CoCA"
  "table1_ppl.json|RoFormer + dynamic NTK|RoFormer + dynamic NTK & CoCA"
  "table1_ppl.json|RoFormer|ALiBi"
  "table3_ppl.json|CoCA-Slack ntk-2|CoCA-Strict ntk-2"
  "table3_ppl.json|CoCA-Slack ntk-4|CoCA-Strict ntk-4"
  "table3_ppl.json|CoCA-Slack ntk-8|CoCA-Strict ntk-8"
  "finetune_ppl.json|zoo-rope|zoo-rope + CoCA"
  "finetune_ppl.json|zoo-rope + dynamic NTK|zoo-rope + dynamic NTK & CoCA"
  "table4_ppl.json|zoo-rope + PI|zoo-rope + CoCA & PI"
)
source ../gate_pairs.sh
gate_table "${pairs[@]}" > ../claims_ppl.md
