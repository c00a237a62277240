#!/usr/bin/env python3
"""Golden values for banditbench's freeze-thaw GP (src/policy/freeze_thaw/gp.rs), computed by
PyTorch's autograd and torch.optim.Adam (pinned in requirements-torch.txt next to this file).

    /path/to/venv/bin/python scripts/reference/ftgp_golden.py   # writes tests/golden/ftgp.json

The model is the GP that NePS's `ComprehensiveGP` fits for ifBO's `mf_ei_bo` baseline (automl/ifBO
branch icml-2024, `neps_lcpfn_hpo/src/neps/optimizers/bayesian_optimization/models/gp.py` and
`kernels/{vectorial_kernels,combine_kernels}.py`; read, not copied), written here from its
formulas in torch operations:

- a Matérn-5/2 kernel with one lengthscale per numeric column, r = sqrt(sum((x - x')/l)^2 + 1e-8),
  and, when there are categorical columns, a Hamming kernel exp(-mismatches / 2) whose
  lengthscales do not train; their weighted sum divided by the square roots of its diagonal;
- y standardised by its mean and torch.std (unbiased);
- the loss: the negative log marginal likelihood over n with the noise on the diagonal;
- torch.optim.Adam (lr 0.1) over the lengthscales (when more than one), the weights (when two
  kernels) and the noise, each step followed by NePS's clamps (lengthscales to
  [e^-6.754111155189306, e^0.0858637988771976], weights to [0, 1], noise to [1e-5, max_lik]);
- the posterior as NePS's `predict`: the inverse of the kernel matrix of the last step's
  parameters (before that step) with the final noise, the cross kernel with the final
  parameters, the variance with the noise, clamped below at the noise, both moments scaled back.

Each case draws its inputs by numpy's PCG64 and records the gradient at the starting values, the
parameters after 1 step and after `iters` steps, and the posterior at test points.
"""

import json
import math
from pathlib import Path

import numpy as np
import torch

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "ftgp.json"
LS_LO, LS_HI = math.exp(-6.754111155189306), math.exp(0.0858637988771976)

CASES = [
    # TaskSet's 8 numeric hyper-parameters and the budget, 15 points, no categorical column.
    {"numeric": 8, "categorical": 0, "levels": 0, "n": 15, "tests": 6, "iters": 20,
     "noise": 1e-3, "noise_max": 0.01, "seed": 1},
    # 2 numeric and 2 categorical columns (two kernels, trained weights), configurations repeated
    # at several budgets as the training set holds them.
    {"numeric": 2, "categorical": 2, "levels": 3, "n": 12, "tests": 5, "iters": 20,
     "noise": 1e-3, "noise_max": 0.01, "seed": 2, "repeat": True},
    # Only the budget is numeric (its single lengthscale does not train), one categorical column,
    # a looser noise bound and more steps.
    {"numeric": 0, "categorical": 1, "levels": 4, "n": 8, "tests": 4, "iters": 40,
     "noise": 1e-2, "noise_max": 0.1, "seed": 3},
]


def draw(case):
    rng = np.random.Generator(np.random.PCG64(case["seed"]))
    n, dn, dk = case["n"], case["numeric"], case["categorical"]

    def points(m, repeat):
        if repeat:
            base = m // 3 + 1
            xc = rng.random((base, dn))
            xk = rng.integers(0, case["levels"], (base, dk)).astype(float)
            pick = np.arange(m) % base
            cont, cat = xc[pick], xk[pick]
        else:
            cont = rng.random((m, dn))
            cat = rng.integers(0, max(case["levels"], 1), (m, dk)).astype(float)
        budget = rng.integers(0, 51, (m, 1)) / 50.0
        return np.hstack([cont, budget]), cat

    x, k = points(n, case.get("repeat", False))
    y = np.sin(3 * x.sum(axis=1)) + 0.1 * rng.standard_normal(n) - 2.0
    xt, kt = points(case["tests"], False)
    return x, k, y, xt, kt


def kernel(ls, w, a, ak, b, bk):
    r2 = (((a[:, None, :] - b[None, :, :]) / ls) ** 2).sum(-1)
    r = torch.sqrt(torch.clamp(r2 + 1e-8, min=0.0))
    s5 = math.sqrt(5.0)
    m = (1 + s5 * r + 5.0 / 3.0 * r ** 2) * torch.exp(-s5 * r)
    r0 = math.sqrt(1e-8)
    d = w[0] * (1 + s5 * r0 + 5.0 / 3.0 * r0 ** 2) * math.exp(-s5 * r0)
    k = w[0] * m
    if len(w) > 1:
        mism = (ak[:, None, :] != bk[None, :, :]).sum(-1).to(torch.float64)
        k = k + w[1] * torch.exp(-0.5 * mism)
        d = d + w[1]
    return k / d


def loss_of(ls, w, noise, x, k, y):
    n = x.shape[0]
    kk = kernel(ls, w, x, k, x, k) + noise * torch.eye(n, dtype=torch.float64)
    chol = torch.linalg.cholesky(kk)
    alpha = torch.cholesky_solve(y[:, None], chol)[:, 0]
    logdet = 2 * torch.log(torch.diagonal(chol)).sum()
    return (0.5 * y @ alpha + 0.5 * logdet + 0.5 * n * math.log(2 * math.pi)) / n


def run(case):
    x, k, y, xt, kt = draw(case)
    x, k, xt, kt = (torch.tensor(v, dtype=torch.float64) for v in (x, k, xt, kt))
    y_raw = torch.tensor(y, dtype=torch.float64)
    y_mean, y_sd = y_raw.mean(), y_raw.std()
    yn = (y_raw - y_mean) / y_sd
    dc, two = x.shape[1], case["categorical"] > 0
    ls = torch.ones(dc, dtype=torch.float64, requires_grad=dc > 1)
    w = torch.full((2 if two else 1,), 0.5 if two else 1.0, dtype=torch.float64,
                   requires_grad=two)
    noise = torch.tensor(case["noise"], dtype=torch.float64, requires_grad=True)
    leaves = [t for t in (ls, w, noise) if t.requires_grad]

    def flat():
        return [*ls.tolist(), *w.tolist(), noise.item()]

    loss = loss_of(ls, w, noise, x, k, yn)
    loss.backward()
    grad = [*(ls.grad.tolist() if ls.grad is not None else [0.0] * dc),
            *(w.grad.tolist() if w.grad is not None else [0.0] * len(w)), noise.grad.item()]
    for t in leaves:
        t.grad = None
    opt = torch.optim.Adam(leaves, lr=0.1)
    after1 = None
    last = None
    for step in range(case["iters"]):
        last = (ls.detach().clone(), w.detach().clone())
        opt.zero_grad()
        loss_of(ls, w, noise, x, k, yn).backward()
        opt.step()
        with torch.no_grad():
            ls.clamp_(LS_LO, LS_HI)
            w.clamp_(0.0, 1.0)
            noise.clamp_(1e-5, case["noise_max"])
        if step == 0:
            after1 = flat()
    with torch.no_grad():
        n = x.shape[0]
        kk = kernel(last[0], last[1], x, k, x, k) + noise * torch.eye(n, dtype=torch.float64)
        k_inv = torch.cholesky_inverse(torch.linalg.cholesky(kk))
        ks = kernel(ls, w, x, k, xt, kt)
        mu = ks.T @ k_inv @ yn
        var = torch.diagonal(1.0 + noise - ks.T @ k_inv @ ks).clamp(min=noise.item())
        mean = mu * y_sd + y_mean
        std = torch.sqrt(var) * y_sd
    return {
        **case,
        "x": x.flatten().tolist(), "k": k.flatten().tolist(), "y": y_raw.tolist(),
        "x_test": xt.flatten().tolist(), "k_test": kt.flatten().tolist(),
        "loss": loss.item(), "grad": grad, "after1": after1, "after": flat(),
        "mean": mean.tolist(), "std": std.tolist(),
    }


def main():
    torch.set_default_dtype(torch.float64)
    cases = [run(c) for c in CASES]
    OUT.write_text(json.dumps({
        "made_by": "scripts/reference/ftgp_golden.py",
        "torch": torch.__version__,
        "numpy": np.__version__,
        "cases": cases,
    }, indent=1) + "\n")
    print(f"wrote {OUT} ({len(cases)} cases)")


if __name__ == "__main__":
    main()
