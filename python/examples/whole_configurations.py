"""Full-fidelity random search in the pool world, trained to the last unit in one piece of work
per configuration (the built-in ``random-search(work = "configuration")``'s rule): half the time
with ``Draw(to=units)``, half with a one-unit ``Draw()`` and then ``Train(arm, to=units)``, to show
both actions. Run through the protocol with ``python whole_configurations.py``, or in-process."""

from banditbench import Draw, Policy, Stop, Train, serve


class WholeConfigurations(Policy):
    def __init__(self, cell, **params):
        super().__init__(cell, **params)
        self.units = cell.pool["units"]
        self.pending = None

    def decide(self, view):
        if self.pending is not None:
            arm, self.pending = self.pending, None
            return Train(arm, to=self.units)
        if view.pool["undrawn"] == 0:
            return Stop()
        return Draw(to=self.units) if view.step % 2 == 0 else Draw()

    def observe(self, obs):
        if obs.arm_clock == 1 and not obs.exhausted:
            self.pending = obs.arm


if __name__ == "__main__":
    serve(WholeConfigurations)
