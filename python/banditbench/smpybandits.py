"""SMPyBandits' policies on banditbench's recorded traces, through the policy protocol.

Run as ``python -m banditbench.smpybandits``; the experiment file names the SMPyBandits class and
its arguments in ``params``::

    [[policies]]
    family = "external"
    name = "smpy-klucb"
    command = ["python3", "-m", "banditbench.smpybandits"]
    params = { policy = "klUCB", lower = 0.0, amplitude = 1.0 }

Mapping (Besson 2018, "SMPyBandits: an Open-Source Research Framework for Single and Multi-Players
Multi-Arms Bandits (MAB) Algorithms in Python", https://github.com/SMPyBandits/SMPyBandits):

- a cell builds ``Policies.<policy>(n_arms, lower=lower, amplitude=amplitude, **rest)`` and calls
  ``startGame()``; every other key of ``params`` is passed to the constructor (``alpha`` for
  UCBalpha, ``horizon`` for MOSSH, ...). SMPyBandits expects rewards in [lower, lower + amplitude]
  and scales them to [0, 1] itself; ``lower = 0, amplitude = 1`` fits accuracy-like scores.
  Rewards outside the range are clipped to it (``clip = false`` passes them unchanged; KL-UCB and
  Thompson sampling need [0, 1]).
- ``decide`` is ``choice()``; ``observe`` is ``getReward(arm, reward)``.
- A pull without a reward (a failed evaluation, an exhausted arm) is given ``missing_reward``
  (default: ``lower``, the worst reward), so that SMPyBandits counts the pull.
- SMPyBandits draws from numpy's global generator and Python's ``random`` module: both are seeded
  with the cell's seed (numpy's mod 2^32) at the start of every cell, so results are
  deterministic.

SMPyBandits 0.9.7 imports only with SciPy < 1.14: ``pip install -r
python/requirements-smpybandits.txt`` pins a set that works.
"""

from __future__ import annotations

import random

from .protocol import Policy, serve

_ADAPTER_KEYS = ("policy", "lower", "amplitude", "missing_reward", "clip")


class SMPyBanditsPolicy(Policy):
    """One SMPyBandits policy object per cell."""

    def __init__(self, cell, policy, lower=0.0, amplitude=1.0, missing_reward=None, clip=True, **kwargs):
        super().__init__(cell)
        import numpy as np
        from SMPyBandits import Policies

        if cell.world == "pool":
            raise ValueError("SMPyBandits' policies pick among a fixed set of arms; the pool world draws configurations")
        cls = getattr(Policies, policy, None)
        if cls is None:
            known = ", ".join(n for n in dir(Policies) if not n.startswith("_"))
            raise ValueError(f"SMPyBandits has no policy {policy!r}; its policies: {known}")
        # SMPyBandits draws from numpy's global generator and from Python's `random` module
        # (e.g. Beta posteriors binarise rewards with random.random()): both are seeded per cell.
        np.random.seed(cell.seed % 2**32)
        random.seed(cell.seed)
        self.lower, self.upper = float(lower), float(lower) + float(amplitude)
        self.missing = self.lower if missing_reward is None else float(missing_reward)
        self.clip = bool(clip)
        self.inner = cls(cell.n_arms, lower=float(lower), amplitude=float(amplitude), **kwargs)
        self.inner.startGame()

    def decide(self, view):
        return int(self.inner.choice())

    def observe(self, obs):
        r = self.missing if obs.reward is None else obs.reward
        if self.clip:
            r = min(max(r, self.lower), self.upper)
        self.inner.getReward(obs.arm, r)


def main() -> None:
    serve(SMPyBanditsPolicy)


if __name__ == "__main__":
    main()
