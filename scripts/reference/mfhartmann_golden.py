#!/usr/bin/env python3
"""Golden values of the multi-fidelity Hartmann functions for banditbench's generated pools
(src/trace/pool/synthetic.rs), computed by mf-prior-bench 1.10.0's own generators.

    PY scripts/reference/mfhartmann_golden.py --generators PATH/generators.py
    # PATH: mf_prior_bench-1.10.0/src/mfpbench/synthetic/hartmann/ from the sdist
    # (pip download --no-deps mf-prior-bench==1.10.0); it needs only numpy.
    # writes tests/golden/mfhartmann.json

Each case: a point x drawn by numpy's PCG64 (seed 2017) in [0, 1]^d, a fidelity z of 1 … 100,
a bias (the presets' and 0), and MFHartmann{3,6}(n_fidelities=100, fidelity_bias=bias,
fidelity_noise=0)(z, x): the noiseless value (the noise's draws come from numpy's generator
seeded by Python's hash of x; banditbench draws its own, so only the noiseless part is compared).
Plus the functions' optima: the Hartmann minima at z = 100, bias 0.
"""

import argparse
import importlib.util
import json
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "mfhartmann.json"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--generators", required=True)
    a = ap.parse_args()
    spec = importlib.util.spec_from_file_location("generators", a.generators)
    g = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(g)
    rng = np.random.Generator(np.random.PCG64(2017))
    cases = []
    for cls, d in ((g.MFHartmann3, 3), (g.MFHartmann6, 6)):
        for bias in (0.0, 0.5, 2.5, 3.0, 3.5, 4.0):
            f = cls(n_fidelities=100, fidelity_bias=bias, fidelity_noise=0.0, seed=1)
            for z in (1, 2, 3, 10, 50, 99, 100):
                for _ in range(4):
                    x = tuple(float(v) for v in rng.random(d))
                    cases.append({"dims": d, "bias": bias, "z": z, "x": list(x), "value": f(z, x)})
        f = cls(n_fidelities=100, fidelity_bias=0.0, fidelity_noise=0.0, seed=1)
        cases.append(
            {"dims": d, "bias": 0.0, "z": 100, "x": list(cls.optimum), "value": f(100, tuple(cls.optimum))}
        )
    OUT.write_text(
        json.dumps(
            {
                "made_by": "scripts/reference/mfhartmann_golden.py",
                "mf_prior_bench": "1.10.0",
                "numpy": np.__version__,
                "cases": cases,
            }
        )
        + "\n"
    )
    print(f"wrote {OUT} ({len(cases)} cases)")


if __name__ == "__main__":
    main()
