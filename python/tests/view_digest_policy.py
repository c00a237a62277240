"""A policy that hashes every view it is shown (the test of in-process views against the
protocol's, python/tests/test_views.py): its decisions depend on the view's lists, and its
``stats()`` is a digest of every view of its cell, so two routes agree on it only if they showed
the same view at every decision. Run as a protocol command, it serves itself."""
import hashlib
import json

from banditbench.protocol import Draw, Policy, Stop, Wait, serve


class ViewDigest(Policy):
    def __init__(self, cell, **params):
        super().__init__(cell, **params)
        self.digest = hashlib.sha256()
        self.views = 0

    def decide(self, view):
        pool = view.pool or {}
        state = [view.step, view.used, view.worker, view.now,
                 [list(p) for p in view.pending], list(view.pulls), list(view.arm_clock),
                 list(view.arm_best), list(pool.get("last", [])), list(pool.get("done", [])),
                 list(pool.get("config", [])), pool.get("undrawn")]
        self.digest.update(json.dumps(state).encode())
        self.views += 1
        running = {p[0] for p in view.pending}
        if view.pool is not None:
            free = [a for a in range(view.n_arms) if a not in running and not pool["done"][a]]
            if pool["undrawn"] and (not free or view.step % 3 == 0):
                return Draw()
            score = pool["last"]
        else:
            free = [a for a in range(view.n_arms) if a not in running]
            score = view.arm_best
        if free:
            # The free arm whose score is highest (unseen first), fewest pulls on a tie.
            return max(free, key=lambda a: (float("inf") if score[a] is None else score[a],
                                            -view.pulls[a], -a))
        return Wait() if view.pending else Stop()

    def stats(self):
        return {"views": self.views, "digest": self.digest.hexdigest()}


if __name__ == "__main__":
    serve(ViewDigest)
