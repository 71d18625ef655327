#!/usr/bin/env bash
# Loss by position to 16k and LongPPL for the Table 1 rows (reports/zoo/README.md, "Loss by position
# and LongPPL"), on Table 1's documents: the Austen parts, 8 x 16384 tokens.
#
# - runs/table1_positions_ppl.json: one 16k window per document (--mode truncated), so each document
#   gives a loss at every position 0..16k; the window is Table 1's 16k one, so its perplexity is
#   Table 1's 16k column.
# - runs/table1_longppl.json.gz: LongPPL at 16k on those 8 documents (the same seeded draw), every row
#   scored on one key-token set judged by zoo-coca-slack (Table 1's "RoFormer + CoCA").
#   The zoo is trained at 512 tokens, so the paper's rule (short context 4096 and step 1024, for models
#   that read 32k) is scaled to 1/8 of the trained context: short 64, step 16; the loss bound and margin
#   (2 nats) are the paper's. LONGPPL_NUM_DOCS=3 reads the first three only (each document costs about
#   five minutes on two CPU cores: the evaluator's 1020 short windows, ALiBi's 16k forward).
# - measurements/ (the report: the figure and both tables), longppl.md (LongPPL against PPL), and the
#   figure again under docs/figures/ for the documentation.
#
# Steps: positions, longppl, report (default: all three). Every run resumes from its journal after a
# kill. DEVICE=cuda runs on a GPU. On two CPU cores: about 20 minutes for the positions (ALiBi's 16k
# forward is 90 s a document) and 40 for LongPPL (eight documents; measured on a 2-core AVX-512 CPU
# with another job beside it).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=reports/zoo/runs
METHODS=reports/zoo/methods/table1.yaml
DOCS=(--dataset zoo:outside:parts --num-docs 8 --doc-tokens 16384)
LONGPPL_DOCS=(--dataset zoo:outside:parts --num-docs "${LONGPPL_NUM_DOCS:-8}" --doc-tokens 16384)
DEV=(--device "${DEVICE:-cpu}")
KEYS=(--evaluator-model zoo-coca-slack --longppl-short 64 --longppl-step 16)

step_positions() {
  coca-eval ppl --methods "$METHODS" "${DOCS[@]}" --lengths 16k --mode truncated "${DEV[@]}" \
    --output "$OUT/table1_positions_ppl.json"
}
step_longppl() {
  coca-eval ppl --metric longppl --methods "$METHODS" "${LONGPPL_DOCS[@]}" --lengths 16k "${KEYS[@]}" "${DEV[@]}" \
    --output "$OUT/table1_longppl.json.gz"
}
step_report() {
  coca-eval report "$OUT/table1_positions_ppl.json" "$OUT/table1_longppl.json.gz" --intervals --format md \
    --out reports/zoo/measurements
  python -m coca_eval.ppl.longppl.compare "$OUT/table1_longppl.json.gz" \
    --regenerate "bash reports/zoo/measurements.sh report" > reports/zoo/longppl.md
  mkdir -p docs/figures
  cp reports/zoo/measurements/plots/loss_vs_position_16384.png docs/figures/zoo_loss_by_position_16k.png
}

steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(positions longppl report)
for step in "${steps[@]}"; do "step_$step"; done
