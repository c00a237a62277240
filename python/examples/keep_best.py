"""A pool-world policy: draw K configurations, then always train the one whose last unit scored
best; draw again when all of them are fully trained, stop when nothing is left.

A README example (section "A pool-world policy in Python"), tested in tests/external.rs.
"""
from banditbench import Draw, Policy, Stop, serve


class KeepBest(Policy):
    def __init__(self, cell, k=8):
        super().__init__(cell)
        self.k = k

    def decide(self, view):
        pool = view.pool  # units, undrawn, and per arm: last score, done, config
        if view.n_arms < self.k and pool["undrawn"] > 0:
            return Draw()
        open_arms = [a for a in range(view.n_arms) if not pool["done"][a]]
        if not open_arms:
            return Draw() if pool["undrawn"] > 0 else Stop()
        last = pool["last"]
        return max(open_arms, key=lambda a: float("-inf") if last[a] is None else last[a])


if __name__ == "__main__":
    serve(KeepBest)
