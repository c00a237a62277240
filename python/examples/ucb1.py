"""UCB1 (Auer, Cesa-Bianchi & Fischer 2002, Fig. 1) as a banditbench policy in Python.

Pull each arm once, then the arm maximising mean + sqrt(c ln n / n_i), ties to the first arm.
With c = 2 it computes exactly what the built-in ``ucb1(tie_break=first)`` computes, in the same
floating-point order, so both give byte-identical trajectories (tests/external.rs checks this).
"""
import math

from banditbench import Policy, serve


class UCB1(Policy):
    def __init__(self, cell, c=2.0):
        super().__init__(cell)
        k = cell.n_arms
        self.c, self.t, self.untried = c, 0, k
        self.n, self.sum, self.known = [0] * k, [0.0] * k, [0] * k
        # Kept per arm as observations arrive, so that a decision is one ln, one sqrt and a
        # multiply-add per arm: the mean (0 before a reward) and 1 / sqrt(pulls).
        self.mean, self.inv_sqrt = [0.0] * k, [0.0] * k

    def decide(self, view):
        if self.untried:
            return self.n.index(0)
        w = math.sqrt(self.c * math.log(self.t))
        index = [m + w * r for m, r in zip(self.mean, self.inv_sqrt)]
        return index.index(max(index))

    def observe(self, obs):
        a = obs.arm
        self.t += 1
        n = self.n[a] = self.n[a] + 1
        if n == 1:
            self.untried -= 1
        self.inv_sqrt[a] = 1.0 / math.sqrt(n)
        if obs.reward is not None:
            self.sum[a] += obs.reward
            self.known[a] += 1
            self.mean[a] = self.sum[a] / self.known[a]


if __name__ == "__main__":
    serve(UCB1)
