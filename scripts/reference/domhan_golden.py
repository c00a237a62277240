#!/usr/bin/env python3
"""Golden values for banditbench's learning-curve combination (src/curve/domhan.rs), from numpy
and scipy's MINPACK `leastsq` (pinned in requirements-torch.txt next to this file, with
`emcee==3.1.6` for the sampler check).

    /path/to/venv/bin/python scripts/reference/domhan_golden.py   # writes tests/golden/domhan.json

The 11 families, their starting values, the recency weights, `cut_beginning`, the per-family
least-squares fit and the combination's log posterior are written here from
automl/pylearningcurvepredictor at 4434802 (`curvefunctions.py`, `curvemodels.py`,
`terminationcriterion.py`; Python 2 code that does not import under Python 3; read, not
copied). The fits are scipy.optimize.leastsq from the code's defaults on recency-weighted
residuals, as `MLCurveModel.fit_leastsq` calls it. The sampler check runs emcee 3's
EnsembleSampler (stretch move, a = 2) on that log posterior and records P(y(xlim) > y_best) as
the code's `posterior_prob_x_greater_than` computes it, for a statistical comparison (the random
streams differ).
"""

import json
from pathlib import Path

import emcee
import numpy as np
import scipy
from scipy.optimize import leastsq
from scipy.stats import norm

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "domhan.json"


def vap(x, a, b, c):
    return np.exp(a + b / x + c * np.log(x))


def ilog2(x, c, a):
    return c - a / np.log(1 + x)


def weibull(x, alpha, beta, kappa, delta):
    return alpha - (alpha - beta) * np.exp(-((kappa * x) ** delta))


def pow3(x, c, a, alpha):
    return c - a * x ** (-alpha)


def pow4(x, c, a, b, alpha):
    return c - (a * x + b) ** -alpha


def loglog_linear(x, a, b):
    return np.log(a * np.log(x) + b)


def mmf(x, alpha, beta, kappa, delta):
    return alpha - (alpha - beta) / (1.0 + (kappa * x) ** delta)


def janoschek(x, a, beta, k, delta):
    return a - (a - beta) * np.exp(-k * x ** delta)


def dr_hill_zero_background(x, theta, eta, kappa):
    return (theta * x ** eta) / (kappa ** eta + x ** eta)


def log_power(x, a, b, c):
    return a / (1.0 + (x / np.exp(b)) ** c)


def exp4(x, c, a, b, alpha):
    return c - np.exp(-a * (x ** alpha) + b)


FAMILIES = [
    ("vap", vap, [-0.622028, -0.470050, 0.042322]),
    ("ilog2", ilog2, [0.78, 0.43]),
    ("weibull", weibull, [0.7, 0.1, 0.01, 1.0]),
    ("pow3", pow3, [0.84, 0.52, 0.01]),
    ("pow4", pow4, [0.8, 200.0, 0.0, 0.1]),
    ("loglog_linear", loglog_linear, [1.0, 1.0]),
    ("mmf", mmf, [0.7, 0.1, 0.01, 5.0]),
    ("janoschek", janoschek, [0.73, 0.07, 0.355, 0.46]),
    ("dr_hill_zero_background", dr_hill_zero_background, [0.772320, 0.586449, 2.460843]),
    ("log_power", log_power, [0.77, 2.98, -0.51]),
    ("exp4", exp4, [0.7, 0.8, -0.8, 0.3]),
]


def recency_weights(n):
    if n == 1:
        return np.ones(1)
    return (10 ** (1.0 / n)) ** np.arange(0, n)


def cut_beginning(y, threshold=0.05, look_ahead=5):
    if len(y) < look_ahead:
        return y
    num_cut = 0
    for idx in range(len(y) - look_ahead):
        if all(y[j] - y[0] > threshold for j in range(idx, idx + look_ahead)):
            num_cut = idx
            break
    return y[num_cut:]


def fit(f, x, y, start):
    w = np.sqrt(recency_weights(len(y)))
    popt, _, info, _, status = leastsq(lambda p: w * (f(x, *p) - y), x0=start, full_output=True)
    ok = status in (1, 2, 3, 4) and not np.any(np.isnan(info["fjac"])) and not np.any(np.isnan(popt))
    return popt if ok else None


def ln_prob(theta, fams, x, y, xlim):
    sizes = [len(s) for _, _, s in fams]
    np_ = sum(sizes)
    sigma, w = theta[np_], theta[np_ + 1:]
    if np.any(w < 0):
        return -np.inf
    at = 0
    for (_, f, _), s in zip(fams, sizes):
        p = theta[at:at + s]
        lo, hi = f(2.0, *p), f(xlim, *p)
        if lo > hi or not np.isfinite(hi) or hi < 0 or hi > 100:
            return -np.inf
        at += s
    with np.errstate(all="ignore"):
        pred = 0
        at = 0
        for (_, f, _), s, wk in zip(fams, sizes, w / w.sum()):
            pred = pred + wk * f(x, *theta[at:at + s])
            at += s
        ll = (recency_weights(len(y)) * norm.logpdf(y - pred, loc=0, scale=sigma)).sum()
    return -np.inf if np.isnan(ll) else ll


def curves():
    x = np.arange(1, 31, dtype=float)
    rng = np.random.Generator(np.random.PCG64(7))
    rising = 0.85 - 0.5 * x ** -0.8 + 0.005 * rng.standard_normal(30)
    slow = 0.3 + 0.4 * (1 - np.exp(-0.05 * x)) + 0.003 * rng.standard_normal(30)
    return {"rising": rising, "slow": slow}


def main():
    np.seterr(all="ignore")
    out = {"made_by": "scripts/reference/domhan_golden.py", "numpy": np.__version__,
           "scipy": scipy.__version__, "emcee": emcee.__version__}
    xs = [1.0, 2.0, 5.5, 30.0, 100.0]
    out["values"] = {name: [float(f(v, *start)) for v in xs] for name, f, start in FAMILIES}
    out["x"] = xs
    out["recency_5"] = recency_weights(5).tolist()
    out["cut"] = {"y": [0.1, 0.1, 0.12, 0.2, 0.3, 0.4, 0.5, 0.6, 0.6],
                  "cut": cut_beginning([0.1, 0.1, 0.12, 0.2, 0.3, 0.4, 0.5, 0.6, 0.6])}
    fits = {}
    for label, y in curves().items():
        x = np.arange(1, len(y) + 1, dtype=float)
        per = {}
        for name, f, start in FAMILIES:
            p = fit(f, x, y, start)
            per[name] = None if p is None else {"params": p.tolist(),
                                                "at_xlim": float(f(100.0, *p))}
        kept = [(n, f, s) for n, f, s in FAMILIES
                if per[n] is not None and np.isfinite(per[n]["at_xlim"])
                and 0 <= per[n]["at_xlim"] <= 100
                and not f(2.0, *per[n]["params"]) > per[n]["at_xlim"]]
        params = [per[n]["params"] for n, _, _ in kept]
        pred = sum(f(x, *p) for (_, f, _), p in zip(kept, params)) / len(kept)
        sigma = float(np.std(y - pred))
        theta = np.array([v for p in params for v in p] + [sigma] + [10.0] * len(kept))
        best = float(y.max()) + 0.02
        dim = len(theta)
        walkers = max(100, 2 * dim)
        rng = np.random.default_rng(3)
        p0 = theta + 1e-6 * rng.standard_normal((walkers, dim))
        sampler = emcee.EnsembleSampler(walkers, dim, ln_prob, args=(kept, x, y, 100.0))
        sampler.run_mcmc(p0, 1500)
        chain = sampler.get_chain()  # steps x walkers x dim
        samples = np.transpose(chain[500:], (1, 0, 2)).reshape(-1, dim)[::10]
        probs = []
        for th in samples:
            np_ = sum(len(p) for p in params)
            w = th[np_ + 1:] / th[np_ + 1:].sum()
            at, m = 0, 0.0
            for (_, f, _), p, wk in zip(kept, params, w):
                m += wk * f(100.0, *th[at:at + len(p)])
                at += len(p)
            probs.append(1 - norm.cdf(best, loc=m, scale=th[np_]))
        fits[label] = {"y": y.tolist(), "families": per, "kept": [n for n, _, _ in kept],
                       "theta": theta.tolist(), "ln_prob": float(ln_prob(theta, kept, x, y, 100.0)),
                       "best": best, "prob_greater": float(np.ma.masked_invalid(probs).mean())}
    out["fits"] = fits
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {OUT}")
    for label, f in fits.items():
        print(label, f["kept"], f["prob_greater"])


if __name__ == "__main__":
    main()
