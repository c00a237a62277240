#!/usr/bin/env python3
"""Golden values for banditbench's DyHPO model (src/policy/freeze_thaw/dkgp.rs), computed by
PyTorch and GPyTorch (pinned in requirements-torch.txt next to this file).

    /path/to/venv/bin/python scripts/reference/dyhpo_golden.py   # writes tests/golden/dyhpo.json

The model is DyHPO's deep-kernel GP (Wistuba, Kadra & Grabocka 2022; releaunifreiburg/DyHPO
`surrogate_models/dyhpo.py`, read, not copied), built here from torch and gpytorch modules:

- the feature extractor of its default two layers: Linear(d + 1, u1) on the configuration and the
  scaled budget, BatchNorm1d(u1), LeakyReLU; Conv1d(1, channels, kernel) and AdaptiveMaxPool1d(1)
  on the partial learning curve; the two concatenated, Linear(u1 + channels, u2), LeakyReLU;
- an exact GP on those features: ConstantMean, ScaleKernel(RBFKernel()), GaussianLikelihood;
- the loss −ExactMarginalLogLikelihood (divided by n, as gpytorch divides it), trained by one
  torch.optim.Adam over the GP's and the extractor's parameters (lr 1e-3, DyHPO's);
- the prediction in eval mode (BatchNorm's running statistics): likelihood(model(x_test)), its
  mean and standard deviation (observation noise included, as DyHPO predicts).

Each case fixes a shape, draws the modules by PyTorch's default initialisation from a seed, sets
the GP's raw parameters to stated values, and draws a batch (configurations in [0, 1), budgets in
(0, 1], curves, labels) by numpy's PCG64. In float64 it records the parameters in banditbench's
order (fc1 weight out × in row-major, fc1 bias, BatchNorm weight and bias, conv weight channels ×
kernel, conv bias, fc2 weight, fc2 bias, then the GP's constant mean, raw outputscale, raw
lengthscale and raw noise), the train-mode features, the loss, its gradient, BatchNorm's running
mean and variance after that forward pass, the parameters after 1 and after 3 Adam steps, and the
prediction on test points after the 3 steps.
"""

import json
from pathlib import Path

import gpytorch
import numpy as np
import torch

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "dyhpo.json"

CASES = [
    # TaskSet's 8 hyper-parameters, 12 observations, curves padded to 6; widths 16 and 24 instead
    # of DyHPO's 64 and 128 keep the file small (the same code runs at any width).
    {"inputs": 8, "u1": 16, "u2": 24, "channels": 4, "kernel": 3, "n": 12, "length": 6,
     "tests": 5, "test_length": 4, "seed": 1, "raw": [0.2, 0.3, 1.2, -2.0]},
    # Two observations (the smallest batch BatchNorm trains on), curves of exactly the kernel.
    {"inputs": 3, "u1": 5, "u2": 7, "channels": 4, "kernel": 3, "n": 2, "length": 3,
     "tests": 3, "test_length": 3, "seed": 2, "raw": [0.0, 0.0, 0.0, 0.0]},
    # A wider kernel, repeated configurations (one configuration at several budgets, as DyHPO's
    # training set holds), a long curve.
    {"inputs": 5, "u1": 8, "u2": 6, "channels": 3, "kernel": 4, "n": 9, "length": 10,
     "tests": 4, "test_length": 7, "seed": 3, "raw": [-0.5, 1.0, 2.0, -4.0], "repeat": True},
]


class Extractor(torch.nn.Module):
    def __init__(self, inputs, u1, u2, channels, kernel):
        super().__init__()
        self.fc1 = torch.nn.Linear(inputs + 1, u1)
        self.bn1 = torch.nn.BatchNorm1d(u1)
        self.conv = torch.nn.Conv1d(1, channels, kernel)
        self.pool = torch.nn.AdaptiveMaxPool1d(1)
        self.fc2 = torch.nn.Linear(u1 + channels, u2)
        self.act = torch.nn.LeakyReLU()

    def forward(self, x, b, curves):
        h = self.act(self.bn1(self.fc1(torch.cat((x, b.unsqueeze(1)), dim=1))))
        c = self.pool(self.conv(curves.unsqueeze(1))).squeeze(2)
        return self.act(self.fc2(torch.cat((h, c), dim=1)))


class GP(gpytorch.models.ExactGP):
    def __init__(self, x, y, likelihood):
        super().__init__(x, y, likelihood)
        self.mean_module = gpytorch.means.ConstantMean()
        self.covar_module = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel())

    def forward(self, x):
        return gpytorch.distributions.MultivariateNormal(self.mean_module(x), self.covar_module(x))


def ordered(ext, gp, lik):
    """The parameters in banditbench's order."""
    return [ext.fc1.weight, ext.fc1.bias, ext.bn1.weight, ext.bn1.bias, ext.conv.weight,
            ext.conv.bias, ext.fc2.weight, ext.fc2.bias, gp.mean_module.raw_constant,
            gp.covar_module.raw_outputscale, gp.covar_module.base_kernel.raw_lengthscale,
            lik.noise_covar.raw_noise]


def flat(ps, grad=False):
    return [float(v) for p in ps for v in (p.grad if grad else p).detach().reshape(-1).tolist()]


def case(c):
    torch.manual_seed(c["seed"])
    rng = np.random.Generator(np.random.PCG64(c["seed"]))
    ext = Extractor(c["inputs"], c["u1"], c["u2"], c["channels"], c["kernel"]).double()
    n = c["n"]
    x = rng.random((n, c["inputs"]))
    if c.get("repeat"):
        x[1::2] = x[0]
    b = rng.integers(1, 11, n) / 10.0
    curves = rng.random((n, c["length"])) * (rng.random((n, c["length"])) < 0.7)
    y = rng.normal(size=n)
    xt = rng.random((c["tests"], c["inputs"]))
    bt = rng.integers(1, 11, c["tests"]) / 10.0
    ct = rng.random((c["tests"], c["test_length"]))
    t = lambda a: torch.tensor(a, dtype=torch.float64)
    x, b, curves, y, xt, bt, ct = map(t, (x, b, curves, y, xt, bt, ct))

    lik = gpytorch.likelihoods.GaussianLikelihood().double()
    gp = GP(torch.ones(n, c["u2"], dtype=torch.float64), y, lik).double()
    with torch.no_grad():
        gp.mean_module.raw_constant.fill_(c["raw"][0])
        gp.covar_module.raw_outputscale.fill_(c["raw"][1])
        gp.covar_module.base_kernel.raw_lengthscale.fill_(c["raw"][2])
        lik.noise_covar.raw_noise.fill_(c["raw"][3])
    mll = gpytorch.mlls.ExactMarginalLogLikelihood(lik, gp)
    ps = ordered(ext, gp, lik)
    assert sum(p.numel() for p in ps) == sum(p.numel() for p in
                                             list(ext.parameters()) + list(gp.parameters()))
    opt = torch.optim.Adam(ps, lr=1e-3)
    out = {**{k: v for k, v in c.items() if k != "raw"}, "params": flat(ps),
           "x": x.reshape(-1).tolist(), "b": b.tolist(), "curves": curves.reshape(-1).tolist(),
           "y": y.tolist(), "x_test": xt.reshape(-1).tolist(), "b_test": bt.tolist(),
           "curves_test": ct.reshape(-1).tolist()}
    ext.train(), gp.train(), lik.train()
    for step in range(3):
        opt.zero_grad()
        z = ext(x, b, curves)
        gp.set_train_data(z, y, strict=False)
        loss = -mll(gp(z), gp.train_targets)
        loss.backward()
        if step == 0:
            out["features"] = z.detach().reshape(-1).tolist()
            out["loss"] = loss.item()
            out["grad"] = flat(ps, grad=True)
            out["running_mean"] = ext.bn1.running_mean.tolist()
            out["running_var"] = ext.bn1.running_var.tolist()
        opt.step()
        if step == 0:
            out["after1"] = flat(ps)
    out["after3"] = flat(ps)
    out["running_mean3"] = ext.bn1.running_mean.tolist()
    out["running_var3"] = ext.bn1.running_var.tolist()
    ext.eval(), gp.eval(), lik.eval()
    with torch.no_grad():
        gp.set_train_data(ext(x, b, curves), y, strict=False)
        pred = lik(gp(ext(xt, bt, ct)))
        out["mean"] = pred.mean.tolist()
        out["std"] = pred.stddev.tolist()
    return out


def main():
    cases = [case(c) for c in CASES]
    doc = {
        "made_by": "scripts/reference/dyhpo_golden.py",
        "torch": torch.__version__,
        "gpytorch": gpytorch.__version__,
        "cases": cases,
    }
    OUT.write_text(json.dumps(doc, indent=None) + "\n")
    print(f"wrote {OUT} ({len(cases)} cases)")


if __name__ == "__main__":
    main()
