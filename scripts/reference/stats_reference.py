#!/usr/bin/env python3
"""Golden values for banditbench's statistics, computed with SciPy, scikit-posthocs, statsmodels
and mpmath (versions pinned in requirements.txt next to this file).

    python3 scripts/reference/stats_reference.py      # writes tests/golden/*.csv and stats.json

Score tables (long format unit,policy,score; higher is better):
  small      5 units x 3 policies, no ties            (exact Wilcoxon)
  tied       8 x 4, scores rounded so units hold ties  (permutation Wilcoxon, n <= 13 with ties)
  identical  10 x 3, two policies identical            (zero differences: Pratt vs wilcox)
  k2         12 x 2                                     (Friedman with k = 2, by formula)
  zeros      30 x 5, rounded: ties and zeros, n > 13    (normal approximation)
  large      200 x 8                                    (n > 50: normal approximation)
  minimize   9 x 3, lower is better                     (direction)
The tables are drawn from a seeded generator: test data, not recorded results.
"""

import json
from itertools import combinations
from pathlib import Path

import mpmath as mp
import numpy as np
import pandas as pd
import scikit_posthocs as sp
import scipy
import scipy.stats as ss
import statsmodels
from statsmodels.stats.multitest import multipletests

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden"


def tables():
    rng = np.random.default_rng(20261122)

    def make(n, k, spread=0.05, decimals=None, shift=None):
        base = rng.uniform(0.6, 0.9, size=(n, 1))
        eff = np.linspace(0, 0.03, k) if shift is None else np.asarray(shift)
        s = base + eff + rng.normal(0, spread, size=(n, k))
        return np.round(s, decimals) if decimals is not None else s

    t = {}
    t["small"] = (make(5, 3), True)
    t["tied"] = (make(8, 4, decimals=1), True)
    ident = make(10, 3)
    ident[:, 2] = ident[:, 1]
    t["identical"] = (ident, True)
    t["k2"] = (make(12, 2), True)
    t["zeros"] = (make(30, 5, spread=0.02, decimals=2), True)
    t["large"] = (make(200, 8), True)
    t["minimize"] = (1 - make(9, 3), False)
    return t


def rank_matrix(s, higher):
    return np.vstack([ss.rankdata(-row if higher else row, method="average") for row in s])


def studentized_range_sf_mp(q, k):
    q = mp.mpf(q)
    f = lambda z: k * mp.npdf(z) * (mp.ncdf(z) ** (k - 1) - (mp.ncdf(z) - mp.ncdf(z - q)) ** (k - 1))
    return mp.quad(f, [-mp.inf, -5, 0, 5, q, q + 5, mp.inf])


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    mp.mp.dps = 30
    golden = {"versions": {"scipy": scipy.__version__, "numpy": np.__version__,
                           "scikit-posthocs": getattr(sp, "__version__", "0.17.1"),
                           "statsmodels": statsmodels.__version__, "mpmath": mp.__version__},
              "tables": {}}
    for name, (s, higher) in tables().items():
        n, k = s.shape
        policies = [f"p{j}" for j in range(k)]
        units = [f"u{i:03d}" for i in range(n)]
        long = pd.DataFrame([(units[i], policies[j], s[i, j]) for i in range(n) for j in range(k)],
                            columns=["unit", "policy", "score"])
        long.to_csv(OUT / f"{name}.csv", index=False, float_format="%.17g")
        r = rank_matrix(s, higher)
        mean_rank = r.mean(axis=0)
        sd_rank = r.std(axis=0, ddof=1)
        tq = ss.t.ppf(0.975, n - 1)
        g = {"n": n, "k": k, "higher_is_better": higher, "policies": policies,
             "mean_rank": mean_rank.tolist(), "sd_rank": sd_rank.tolist(),
             "ci_t95": [[m - tq * sd / np.sqrt(n), m + tq * sd / np.sqrt(n)] for m, sd in zip(mean_rank, sd_rank)],
             "ci_z95": [[m - ss.norm.ppf(0.975) * sd / np.sqrt(n), m + ss.norm.ppf(0.975) * sd / np.sqrt(n)]
                        for m, sd in zip(mean_rank, sd_rank)],
             "ranks": r.tolist()}
        # Friedman: SciPy needs k >= 3; for k = 2 the same formula is evaluated here by hand.
        if k >= 3:
            fr = ss.friedmanchisquare(*[s[:, j] for j in range(k)])
            chi2, p = float(fr.statistic), float(fr.pvalue)
            g["friedman_source"] = "scipy.stats.friedmanchisquare"
        else:
            ties = sum(sum(c ** 3 - c for c in np.unique(row, return_counts=True)[1]) for row in r)
            c = 1 - ties / (n * k * (k * k - 1))
            chi2 = (12 * n / (k * (k + 1)) * (np.sum(mean_rank ** 2) - k * (k + 1) ** 2 / 4)) / c
            p = float(ss.chi2.sf(chi2, k - 1))
            g["friedman_source"] = "formula (scipy.stats.friedmanchisquare requires k >= 3)"
        g["friedman"] = {"statistic": float(chi2), "p_value": p, "df": k - 1}
        df1, df2 = k - 1, (k - 1) * (n - 1)
        denom = n * (k - 1) - chi2
        ff = (n - 1) * chi2 / denom if denom > 0 else float("inf")
        g["iman_davenport"] = {"statistic": ff, "p_value": float(ss.f.sf(ff, df1, df2)) if denom > 0 else 0.0,
                               "df1": df1, "df2": df2}
        # Nemenyi (scikit-posthocs ranks ascending within blocks; the p-values depend on |differences|).
        nem = sp.posthoc_nemenyi_friedman(pd.DataFrame(s if higher else -s, columns=policies))
        q05 = ss.studentized_range.ppf(0.95, k, np.inf) / np.sqrt(2)
        g["nemenyi"] = {"q_alpha": float(q05), "cd": float(q05 * np.sqrt(k * (k + 1) / (6 * n))),
                        "pairwise_p": {a: {b: float(nem.loc[a, b]) for b in policies} for a in policies}}
        # Wilcoxon signed-rank (SciPy default method='auto', correction=False) + Holm (statsmodels).
        for zm in ["pratt", "wilcox"]:
            pairs = []
            for a, b in combinations(range(k), 2):
                d = s[:, a] - s[:, b]
                if not higher:
                    d = -d
                if zm == "wilcox" and np.all(d == 0):
                    pairs.append({"a": policies[a], "b": policies[b], "statistic": None, "p_value": 1.0})
                    continue
                w = ss.wilcoxon(s[:, a], s[:, b], zero_method=zm)
                pairs.append({"a": policies[a], "b": policies[b], "statistic": float(w.statistic),
                              "p_value": float(w.pvalue)})
            ps = [pp["p_value"] for pp in pairs]
            rej, holm, _, _ = multipletests(ps, alpha=0.05, method="holm")
            for pp, h, rj in zip(pairs, holm, rej):
                pp["p_holm"] = float(h)
                pp["reject"] = bool(rj)
            g[f"wilcoxon_{zm}"] = pairs
        golden["tables"][name] = g

    # Studentized range, infinite df: quantiles (SciPy) against Demsar's table, and tail values (mpmath).
    golden["studentized_range"] = {
        "quantile_0.95_over_sqrt2": {str(k): float(ss.studentized_range.ppf(0.95, k, np.inf) / np.sqrt(2)) for k in range(2, 21)},
        "quantile_0.90_over_sqrt2": {str(k): float(ss.studentized_range.ppf(0.90, k, np.inf) / np.sqrt(2)) for k in range(2, 11)},
        "sf_mpmath": [{"q": q, "k": k, "sf": float(studentized_range_sf_mp(q, k))}
                      for k in (2, 3, 5, 10, 20) for q in (0.5, 1.0, 2.0, 3.0, 4.5, 6.0, 8.0)],
        "sf_scipy": [{"q": q, "k": k, "sf": float(ss.studentized_range.sf(q, k, np.inf))}
                     for k in (2, 3, 5, 10, 20) for q in (0.5, 1.0, 2.0, 3.0, 4.5, 6.0, 8.0)],
        "demsar_table_5a_0.05": {"2": 1.960, "3": 2.343, "4": 2.569, "5": 2.728, "6": 2.850, "7": 2.949,
                                  "8": 3.031, "9": 3.102, "10": 3.164},
    }
    (OUT / "stats.json").write_text(json.dumps(golden, indent=1, allow_nan=False))
    print(f"wrote {len(golden['tables'])} tables and stats.json to {OUT}")


if __name__ == "__main__":
    main()
