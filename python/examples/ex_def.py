"""Ex-Def (Thornton et al. 2013, Auto-WEKA §5) in Python: every learner's default configuration,
then stop. The same rule as the built-in `ex-def`, through the policy protocol: `Choose` a
configuration the cell names (`cell.pool["defaults"]`), `Stop` when there is nothing left."""

from banditbench import Choose, Policy, Stop, serve


class ExDef(Policy):
    def __init__(self, cell, **params):
        super().__init__(cell, **params)
        self.todo = [c for c in cell.pool["defaults"] if c is not None]

    def decide(self, view):
        if not self.todo:
            return Stop()
        return Choose(self.todo.pop(0))


if __name__ == "__main__":
    serve(ExDef)
