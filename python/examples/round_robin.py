"""The cheapest possible policy: arms in turn. Measures the protocol's own cost
(`banditbench bench --only protocol`)."""
from banditbench import Policy, serve


class RoundRobin(Policy):
    def decide(self, view):
        return view.step % len(view.pulls)


if __name__ == "__main__":
    serve(RoundRobin)
