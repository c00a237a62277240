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
        self.c, self.t = c, 0
        self.n, self.sum, self.known = [0] * k, [0.0] * k, [0] * k

    def decide(self, view):
        if self.t < len(self.n) and 0 in self.n:
            return self.n.index(0)
        w = math.sqrt(self.c * math.log(self.t))
        index = [(s / m if m else 0.0) + w * (1.0 / math.sqrt(n))
                 for s, m, n in zip(self.sum, self.known, self.n)]
        return index.index(max(index))

    def observe(self, obs):
        self.t += 1
        self.n[obs.arm] += 1
        if obs.reward is not None:
            self.sum[obs.arm] += obs.reward
            self.known[obs.arm] += 1


if __name__ == "__main__":
    serve(UCB1)
