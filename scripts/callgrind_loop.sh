#!/bin/bash
# Instructions the replay loop costs, counted by callgrind (deterministic, unlike timings), for
# refactors of src/replay/drive.rs that must keep its cost (#44 item 4: within 2 %).
#
#   scripts/callgrind_loop.sh BINARY OUTDIR
#
# Runs 9 small experiments under valgrind --tool=callgrind, collecting inside run_cell only:
# random search and ASHA on one learner's grid of sklearn-grid (4 000 units), ASHA and Hyperband
# in a budget of 20 simulated seconds, and UCB1 and round-robin in LCDB's time-sliced world,
# each at 1, 16 and 256 workers. Prints per experiment the instructions of run_cell (inclusive)
# and of drive_workers when the compiler kept it a function of its own. Compare two builds'
# results folders with scripts/compare_results.py OUTDIR_A/out-units-16 OUTDIR_B/out-units-16.
# Needs valgrind (apt-get install valgrind). About 3 minutes.
set -euo pipefail
BIN=$(realpath "$1")
OUT=$2
ROOT=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"
cd "$OUT"
# One learner's grid of sklearn-grid: pool NAME WORKERS REPETITIONS UNIT BUDGET POLICY POLICY
pool() {
  cat > "$1-k$2.toml" <<TOML
name = "cg-$1-k$2"
traces = "$ROOT/traces/sklearn-grid"
seed = 7
repetitions = $3
trajectories = "incumbent-changes"
[tasks]
learners = ["mlp"]
[world]
kind = "pool"
per_learner = true
workers = $2
budget_unit = "$4"
budgets = [$5]
incumbent = "best-seen"
recommendation = "best-seen"
[[policies]]
family = "$6"
[[policies]]
family = "$7"
TOML
}
for k in 1 16 256; do
  pool units $k 2 units 4000 random-search asha
  pool secs $k 1 seconds 20 asha hyperband
  cat > ts-k$k.toml <<TOML
name = "cg-ts-k$k"
traces = "$ROOT/traces/lcdb"
seed = 7
repetitions = 1
[tasks]
datasets = ["6-letter", "11-unknown", "12-mfeat-factors", "40975-car"]
[world]
kind = "time-sliced"
workers = $k
budget_unit = "task"
budgets = [0.25]
slice = 0.002
[[policies]]
family = "ucb1"
[[policies]]
family = "round-robin"
TOML
done
for e in units secs ts; do
  for k in 1 16 256; do
    rm -rf out-$e-$k
    valgrind --tool=callgrind --callgrind-out-file=cg-$e-$k.out \
      --toggle-collect='banditbench::experiment::cell::run_cell' \
      "$BIN" run $e-k$k.toml --out out-$e-$k --threads 1 --quiet > /dev/null 2> cg-$e-$k.log
    ir=$(grep -E '^(summary|totals):' cg-$e-$k.out | head -1 | awk '{print $2}')
    dw=$(callgrind_annotate --inclusive=yes cg-$e-$k.out | grep 'drive::drive_workers ' | awk '{print $1}' || true)
    echo "$e workers=$k run_cell=$ir drive_workers=${dw:--}"
  done
done
