#!/usr/bin/env bash
# The gate's paired statistics behind the passkey claims in reports/zoo/README.md: one row per
# (comparison, length), the candidate's accuracy minus the baseline's over the same samples (same keys,
# same depths), its 95 % interval and the Holm-adjusted p of the paired test in the direction of the
# change. Writes reports/zoo/claims_passkey.md.
set -uo pipefail
cd "$(dirname "$0")/runs"
pairs=(
  # Table 2 read as trained (100 samples, 512..16k, the document-start token in front)
  "table2_passkey.json.gz|RoFormer|RoFormer + CoCA"
  "table2_passkey.json.gz|RoFormer + dynamic NTK|RoFormer + dynamic NTK & CoCA"
  "table2_passkey.json.gz|RoFormer|ALiBi"
  # Table 3 read as trained (100 samples, 512..16k)
  "table3_passkey.json.gz|CoCA-Slack ntk-2|CoCA-Strict ntk-2"
  "table3_passkey.json.gz|CoCA-Slack ntk-4|CoCA-Strict ntk-4"
  "table3_passkey.json.gz|CoCA-Slack ntk-8|CoCA-Strict ntk-8"
  # the fine-tuning rows read as trained (100 samples, 512..16k): zoo-rope against its CoCA fine-tune
  "finetune_passkey.json.gz|zoo-rope|zoo-rope + CoCA"
  "finetune_passkey.json.gz|zoo-rope + dynamic NTK|zoo-rope + dynamic NTK & CoCA"
  # dynamic NTK with the prompt's scaling held through the answer (--dynamic-rope hold, 100 samples,
  # `bash scripts/zoo_reports.sh hold`)
  "dynamic-hold/passkey_hold_100.json.gz|CoCA-Slack ntk-2|CoCA-Strict ntk-2"
  "dynamic-hold/passkey_hold_100.json.gz|CoCA-Slack ntk-4|CoCA-Strict ntk-4"
  "dynamic-hold/passkey_hold_100.json.gz|CoCA-Slack ntk-8|CoCA-Strict ntk-8"
  "dynamic-hold/passkey_hold_100.json.gz|RoFormer + dynamic NTK|CoCA-Slack ntk-4"
)
source ../gate_pairs.sh
gate_table "${pairs[@]}" > ../claims_passkey.md
