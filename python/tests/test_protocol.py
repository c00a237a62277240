"""The policy side of the protocol, driven in-process with the messages banditbench sends."""
import copy
import io
import json
import sys

import pytest

from banditbench import Choose, Draw, Mutate, Policy, Stop, Train, serve
from banditbench.protocol import _encode


def talk(factory, messages, env=None, monkeypatch=None):
    data = "".join(json.dumps(m) + "\n" for m in messages).encode()
    out = io.BytesIO()
    serve(factory, stdin=io.BytesIO(data), stdout=out)
    return [json.loads(l) for l in out.getvalue().decode().splitlines()]


START = {"type": "start", "cell": 4, "seed": 99, "repetition": 0, "task": "d/0", "dataset": "d",
         "world": "pull-count", "unit": "pulls", "budget": 10.0, "budget_abs": 10.0, "slice": 1.0,
         "arms": ["a", "b", "c"], "policy": "p", "params": {"k": 2}}


class Recorder(Policy):
    """Pulls the arm with the most pulls so far + k (mod arms); records what it saw."""
    seen = []

    def __init__(self, cell, k):
        super().__init__(cell)
        self.k = k
        Recorder.seen.append(("start", cell.cell, cell.arms, cell.params))

    def decide(self, view):
        Recorder.seen.append(("view", view.step, list(view.pulls), list(view.arm_best), view.budget))
        return (view.step + self.k) % view.n_arms

    def observe(self, obs):
        Recorder.seen.append(("obs", obs.arm, obs.reward))


def test_a_cell_round_trip_keeps_the_view_from_updates():
    Recorder.seen = []
    replies = talk(Recorder, [
        {"type": "hello", "protocol": 1, "program": "test"},
        START,
        {"type": "decide", "step": 0, "used": 0.0},
        {"type": "observe", "arm": 2, "reward": 0.5, "arm_clock": 1.0, "exhausted": False, "revealed": [[1.0, 0.5]]},
        {"type": "decide", "step": 1, "used": 1.0, "update": [2, 1, 1.0, 0.5]},
        {"type": "observe", "arm": 0, "reward": None, "arm_clock": 1.0, "exhausted": False, "revealed": [[1.0, None]]},
        {"type": "end"},
    ])
    assert replies == [{"type": "hello", "protocol": 1}, 2, 0, {"type": "end"}]
    assert Recorder.seen == [
        ("start", 4, ["a", "b", "c"], {"k": 2}),
        ("view", 0, [0, 0, 0], [None, None, None], 10.0),
        ("obs", 2, 0.5),
        ("view", 1, [0, 0, 1], [None, None, 0.5], 10.0),
        ("obs", 0, None),
    ]


def test_exceptions_become_error_answers_with_the_traceback():
    class Broken(Policy):
        def decide(self, view):
            raise ValueError("no idea")

    replies = talk(Broken, [
        {"type": "hello", "protocol": 1},
        dict(START, params={}),
        {"type": "decide", "step": 0, "used": 0.0},
    ])
    assert replies[-1]["type"] == "error"
    assert "decide: Traceback" in replies[-1]["message"]
    assert "ValueError: no idea" in replies[-1]["message"]


def test_an_error_in_the_last_observation_fails_at_end():
    class BadObserve(Policy):
        def decide(self, view):
            return 0

        def observe(self, obs):
            raise KeyError("oops")

    replies = talk(BadObserve, [
        {"type": "hello", "protocol": 1},
        dict(START, params={}),
        {"type": "decide", "step": 0, "used": 0.0},
        {"type": "observe", "arm": 0, "reward": 1.0, "arm_clock": 1.0, "exhausted": False, "revealed": []},
        {"type": "end"},
    ])
    assert replies[1] == 0
    assert replies[2]["type"] == "error" and "observe: Traceback" in replies[2]["message"]


def test_unknown_parameters_are_named():
    replies = talk(Policy, [
        {"type": "hello", "protocol": 1},
        START,
        {"type": "decide", "step": 0, "used": 0.0},
    ])
    assert "takes no parameters, but the experiment gives: k" in replies[-1]["message"]


def test_the_pool_world_view_grows_with_new_arms():
    class Drawer(Policy):
        views = []

        def decide(self, view):
            Drawer.views.append((view.n_arms, copy.deepcopy(view.pool)))
            return Draw() if view.n_arms < 2 else Mutate(1)

    start = dict(START, world="pool", arms=[], params={},
                 pool={"units": 5, "configs": 10, "learners": ["x"]})
    replies = talk(Drawer, [
        {"type": "hello", "protocol": 1},
        start,
        {"type": "decide", "step": 0, "used": 0.0, "undrawn": 10},
        {"type": "observe", "arm": 0, "reward": 0.2, "arm_clock": 1.0, "exhausted": False, "revealed": [[1.0, 0.2]]},
        {"type": "decide", "step": 1, "used": 1.0, "update": [0, 1, 1.0, 0.2, 0.2, False, 7], "undrawn": 9},
        {"type": "observe", "arm": 1, "reward": 0.3, "arm_clock": 1.0, "exhausted": False, "revealed": [[1.0, 0.3]]},
        {"type": "decide", "step": 2, "used": 2.0, "update": [1, 1, 1.0, 0.3, 0.3, True, 3], "undrawn": 8},
    ])
    assert replies[1:] == [{"action": "draw"}, {"action": "draw"}, {"action": "mutate", "arm": 1}]
    assert Drawer.views[0] == (0, {"undrawn": 10, "last": [], "done": [], "config": []})
    assert Drawer.views[2] == (2, {"undrawn": 8, "last": [0.2, 0.3], "done": [False, True], "config": [7, 3]})


def test_actions_encode_and_bad_ones_are_refused():
    assert _encode(3) == b"3\n"
    assert _encode(Draw()) == b'{"action":"draw"}\n'
    assert _encode(Draw(to=27)) == b'{"action":"draw","to":27}\n'
    assert _encode(Train(2, to=9)) == b'{"action":"pull","arm":2,"to":9}\n'
    assert _encode(Mutate(2)) == b'{"action":"mutate","arm":2}\n'
    assert _encode(Choose(12)) == b'{"action":"choose","config":12}\n'
    assert _encode(Stop()) == b'{"action":"stop"}\n'
    with pytest.raises(TypeError, match="return an arm index"):
        _encode("left")
    with pytest.raises(TypeError):
        _encode(True)
