"""A policy that checks what a learner-level world of several objectives shows it (the test of
python/tests/test_objectives_learner.py): the cell names the objectives with their directions,
and every observation holds one value per objective for each evaluation it revealed, the first
(accuracy, the score) equal to that evaluation's reward. ``stats()`` counts what it saw and
digests every value, so the protocol and the in-process route must agree on it. It pulls the
free arm with the fewest pulls. Run as a protocol command, it serves itself."""
import hashlib
import json
import math

from banditbench.protocol import Policy, Stop, Wait, serve


class ObjectivesProbe(Policy):
    def __init__(self, cell, **params):
        super().__init__(cell, **params)
        self.names = [[o["name"], o["direction"]] for o in (cell.objectives or [])]
        self.d = len(self.names)
        self.digest = hashlib.sha256()
        self.evals = self.ok = self.mismatch = 0

    def decide(self, view):
        running = {p[0] for p in view.pending}
        free = [a for a in range(view.n_arms) if a not in running]
        if free:
            return min(free, key=lambda a: (view.pulls[a], a))
        return Wait() if view.pending else Stop()

    def observe(self, obs):
        values = obs.objectives or []
        if self.d == 0 or len(values) != self.d * len(obs.revealed):
            self.mismatch += 1
            return
        self.digest.update(json.dumps(values).encode())
        for k, (_, reward) in enumerate(obs.revealed):
            self.evals += 1
            first = values[k * self.d]
            if reward is None:
                continue
            self.ok += 1
            if first is None or math.isnan(first) or abs(first - reward) > 1e-12:
                self.mismatch += 1

    def stats(self):
        return {"names": self.names, "evals": self.evals, "ok": self.ok,
                "mismatch": self.mismatch, "digest": self.digest.hexdigest()}


if __name__ == "__main__":
    serve(ObjectivesProbe)
