"""Golden values for `report`'s leaderboard statistics (Elo and Bradley–Terry) from evalica.

Input: a table of final scores, one row per (unit, policy); here the real runs of
`cash-optuna-smac.csv` (Optuna 5.0.0's TPE, SMAC3 2.4.1 and banditbench's TPE, SMAC-style and
random search on three datasets, 30 seeds each), with unit = dataset/seed. The matches are the
ones banditbench builds: units in name order, and in each unit every pair of policies (a, b)
with a before b in name order; the higher score wins, equal scores tie. evalica gets these
matches in this order and computes
- Bradley–Terry scores (Zermelo's iteration as evalica codes it, ties as half a win,
  tolerance 1e-12, at most 100 000 iterations), normalised to geometric mean 1;
- Elo ratings (initial 1000, base 10, scale 400, k = 4, ties as half a win), in match order.

Environment (Python 3.11): python3 -m venv .venv-evalica && . .venv-evalica/bin/activate &&
pip install -r scripts/reference/requirements-evalica.txt; then
    python scripts/reference/leaderboard_reference.py > tests/fixtures/leaderboard/evalica.json
"""

import json
import sys
from pathlib import Path

import evalica
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]


def matches(df):
    xs, ys, winners = [], [], []
    policies = sorted(df.policy.unique())
    for unit in sorted(df.unit.unique()):
        s = df[df.unit == unit].set_index("policy").score
        for i, a in enumerate(policies):
            for b in policies[i + 1:]:
                if a not in s or b not in s:
                    continue
                xs.append(a)
                ys.append(b)
                winners.append(evalica.Winner.X if s[a] > s[b] else
                               evalica.Winner.Y if s[a] < s[b] else evalica.Winner.Draw)
    return policies, xs, ys, winners


def main():
    raw = pd.read_csv(ROOT / "scripts/reference/cash-optuna-smac.csv")
    df = pd.DataFrame({"unit": raw.dataset + "/" + raw.seed.astype(str).str.zfill(2),
                       "policy": raw["impl"], "score": raw.best_score})
    policies, xs, ys, winners = matches(df)
    index = pd.Index(policies)
    bt = evalica.bradley_terry(xs, ys, winners, index=index, tolerance=1e-12, limit=100000)
    elo = evalica.elo(xs, ys, winners, index=index, initial=1000.0, base=10.0, scale=400.0, k=4.0)
    out = {
        "source": "scripts/reference/leaderboard_reference.py on scripts/reference/cash-optuna-smac.csv",
        "evalica": evalica.__version__,
        "pandas": pd.__version__,
        "python": sys.version.split()[0],
        "matches": len(xs),
        "wins_x": sum(w == evalica.Winner.X for w in winners),
        "ties": sum(w == evalica.Winner.Draw for w in winners),
        "bradley_terry": {p: float(bt.scores[p]) for p in policies},
        "bradley_terry_iterations": int(bt.iterations),
        "elo": {p: float(elo.scores[p]) for p in policies},
    }
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
