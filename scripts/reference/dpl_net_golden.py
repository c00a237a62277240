#!/usr/bin/env python3
"""Golden values for banditbench's DPL network (src/policy/freeze_thaw/net.rs), computed by
PyTorch (pinned in requirements-torch.txt next to this file).

    /path/to/venv/bin/python scripts/reference/dpl_net_golden.py   # writes tests/golden/dpl_net.json

The network is DPL's conditioned power law (Kadra et al. 2023; releaunifreiburg/DPL
`models/conditioned_power_law.py`, read, not copied) without the learning-curve CNN, which DPL's
surrogate leaves off (`use_learning_curve: False`): Linear(d, h), LeakyReLU, (Linear(h, h),
LeakyReLU) × (layers − 1), Linear(h, 3); outputs α, β, γ; ŷ(b) = α + GLU(β) · b^(−GLU(γ)), GLU
applied to the output concatenated with itself. Loss: nn.L1Loss; optimiser: torch.optim.Adam at
its defaults with lr 1e-3 (DPL's).

Each case fixes a shape, draws the network by PyTorch's default initialisation from a seed, and a
batch (x uniform in [0, 1), budgets in (0, 1], labels) by numpy's PCG64; it records, in float64 and
float32: the parameters (each Linear's weight, out × in row-major, then its bias), the
predictions, the loss, its gradient, and the parameters after 1 and after 3 Adam steps on the
batch.
"""

import json
from pathlib import Path

import numpy as np
import torch

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "dpl_net.json"

CASES = [
    # DPL's surrogate's depth (2 layers) on 8 TaskSet hyper-parameters and a batch of 64; 32 units
    # instead of its 128 keep the file small (the same code runs at any width).
    {"inputs": 8, "units": 32, "layers": 2, "n": 64, "seed": 1},
    # Deeper and narrower, an odd batch.
    {"inputs": 5, "units": 16, "layers": 3, "n": 7, "seed": 2},
    # One layer, budgets at exactly 1 (log b = 0: γ gets no gradient).
    {"inputs": 3, "units": 4, "layers": 1, "n": 5, "seed": 3, "budget_one": True},
]


class PowerLawNet(torch.nn.Module):
    def __init__(self, inputs, units, layers):
        super().__init__()
        mods = [torch.nn.Linear(inputs, units), torch.nn.LeakyReLU()]
        for _ in range(layers - 1):
            mods += [torch.nn.Linear(units, units), torch.nn.LeakyReLU()]
        mods.append(torch.nn.Linear(units, 3))
        self.mlp = torch.nn.Sequential(*mods)
        self.glu = torch.nn.GLU()

    def forward(self, x, b):
        o = self.mlp(x)
        alpha, beta, gamma = o[:, 0], o[:, 1], o[:, 2]
        return alpha + self.glu(torch.cat((beta, beta))) * torch.pow(
            b, -self.glu(torch.cat((gamma, gamma)))
        )


def flat(model, grad=False):
    out = []
    for m in model.mlp:
        if isinstance(m, torch.nn.Linear):
            for t in (m.weight, m.bias):
                t = t.grad if grad else t
                out.extend(t.detach().reshape(-1).tolist())
    return out


def run(case, dtype):
    torch.manual_seed(case["seed"])
    model = PowerLawNet(case["inputs"], case["units"], case["layers"]).to(dtype)
    rng = np.random.Generator(np.random.PCG64(case["seed"]))
    n = case["n"]
    x = rng.random((n, case["inputs"]))
    b = np.ones(n) if case.get("budget_one") else rng.integers(1, 52, n) / 51.0
    y = 0.5 + rng.random(n)
    tx, tb, ty = (torch.tensor(v, dtype=dtype) for v in (x, b, y))
    params = flat(model)
    pred = model(tx, tb)
    loss = torch.nn.L1Loss()(pred, ty)
    loss.backward()
    grad = flat(model, grad=True)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    opt.step()
    after1 = flat(model)
    for _ in range(2):
        opt.zero_grad()
        torch.nn.L1Loss()(model(tx, tb), ty).backward()
        opt.step()
    after3 = flat(model)
    return {
        "x": x.reshape(-1).tolist(),
        "b": b.tolist(),
        "y": y.tolist(),
        "params": params,
        "pred": pred.detach().tolist(),
        "loss": loss.item(),
        "grad": grad,
        "after1": after1,
        "after3": after3,
    }


def main():
    torch.use_deterministic_algorithms(True)
    cases = []
    for case in CASES:
        entry = dict(case)
        entry["f64"] = run(case, torch.float64)
        entry["f32"] = run(case, torch.float32)
        cases.append(entry)
    OUT.write_text(
        json.dumps(
            {
                "made_by": "scripts/reference/dpl_net_golden.py",
                "torch": torch.__version__,
                "numpy": np.__version__,
                "cases": cases,
            }
        )
    )
    print(f"wrote {OUT} ({len(cases)} cases)")


if __name__ == "__main__":
    main()
