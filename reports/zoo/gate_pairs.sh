# Sourced by claims_*.sh (from reports/zoo/runs): `gate_table "file|baseline|candidate" ...` prints a
# markdown table with one row per (comparison, length), made by gate_rows.py from the gate run both
# ways (the gate tests one direction; a change the other way takes its p from the swapped run).
gate_table() {
  local forward swapped pair file base cand
  forward=$(mktemp) swapped=$(mktemp)
  echo "| file | baseline → candidate | length | baseline | candidate | change | 95 % interval | p (Holm) |"
  echo "|---|---|---|---|---|---|---|---|"
  for pair in "$@"; do
    IFS='|' read -r file base cand <<< "$pair"
    coca-eval gate --baseline "$file" --candidate "$file" --baseline-method "$base" \
      --candidate-method "$cand" --json > "$forward" 2>/dev/null
    coca-eval gate --baseline "$file" --candidate "$file" --baseline-method "$cand" \
      --candidate-method "$base" --json > "$swapped" 2>/dev/null
    python3 ../gate_rows.py "$file" "$forward" "$swapped"
  done
  rm -f "$forward" "$swapped"
}
