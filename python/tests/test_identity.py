"""The identity of user code: a Python policy's results are reused only while what Python runs is
the same. Every way a policy's behaviour can change is tried: its methods, a helper function or a
constant of the notebook it calls, a default argument, a closure, a base class, a nested function,
in a file and in a real Jupyter kernel (where ``inspect.getsource`` fails)."""
import os
import textwrap

import pytest

from conftest import ROOT
from banditbench.api import _code_digest

REQUIRED = os.environ.get("BANDITBENCH_REQUIRE_ENGINE") == "1"


def _make(source: str, name: str = "P"):
    """The class `name` defined by executing `source` as a fresh `__main__`-like module (no file:
    inspect.getsource cannot read it, as in a notebook)."""
    namespace = {"__name__": "__main__"}
    exec(compile(textwrap.dedent(source), "<cell>", "exec"), namespace)
    return namespace[name]


BASE = """
from banditbench import Policy
SCALE = 2.0
def helper(x):
    return x * SCALE
class Base(Policy):
    def first(self):
        return 0
class P(Base):
    def decide(self, view, k=1):
        return int(helper(k)) % len(view.pulls)
    def observe(self, obs):
        pass
"""

# Each edit changes what the policy does; none changes the class's name.
EDITS = {
    "method body": ("return int(helper(k)) % len(view.pulls)", "return int(helper(k) + 1) % len(view.pulls)"),
    "default argument": ("def decide(self, view, k=1)", "def decide(self, view, k=2)"),
    "helper function": ("return x * SCALE", "return x * SCALE + 1"),
    "module constant": ("SCALE = 2.0", "SCALE = 3.0"),
    "base class": ("return 0\nclass P", "return 1\nclass P"),
    "new method": ("    def observe(self, obs):\n        pass", "    def observe(self, obs):\n        pass\n    def extra(self):\n        return 1"),
}


def test_the_same_code_gives_the_same_digest_every_time():
    assert _code_digest(_make(BASE)) == _code_digest(_make(BASE))


@pytest.mark.parametrize("what", sorted(EDITS))
def test_every_edit_of_what_python_runs_changes_the_digest(what):
    old, new = EDITS[what]
    assert old in BASE
    assert _code_digest(_make(BASE)) != _code_digest(_make(BASE.replace(old, new)))


def test_closures_and_nested_functions_count():
    src = """
def make(c):
    class P:
        def decide(self, view):
            def inner():
                return c
            return inner()
    return P
P = make({c})
"""
    a, b, a2 = (_code_digest(_make(src.format(c=c))) for c in (1, 2, 1))
    assert a != b and a == a2


def test_code_that_cannot_be_identified_is_never_reused():
    src = """
import threading
LOCK = threading.Lock()
class P:
    def decide(self, view):
        with LOCK:
            return 0
"""
    with pytest.warns(UserWarning, match="never reused"):
        a = _code_digest(_make(src))
    with pytest.warns(UserWarning):
        b = _code_digest(_make(src))
    assert a.startswith("unidentified-") and a != b


def test_an_edited_class_in_a_real_kernel_is_not_served_old_results(tmp_path):
    """In a Jupyter kernel: define a policy in a cell and run it; run the same cell again (the
    same folder is reused); edit the class and run into the same folder: refused as a changed
    experiment, and fresh=True gives the new policy's results."""
    try:
        import banditbench._engine  # noqa: F401
        import nbclient
        import nbformat
    except ImportError as e:
        if REQUIRED:
            pytest.fail(f"needs the engine and nbclient: {e}")
        pytest.skip(f"needs the engine and nbclient: {e}")
    fixture = ROOT / "tests" / "fixtures" / "tiny"
    out = tmp_path / "out"
    setup = f"""
import banditbench as bb
EXP = {{"name": "identity", "traces": {str(fixture)!r}, "seed": 1, "repetitions": 1,
        "world": {{"kind": "time-sliced", "budgets": [20.0], "slice": 2.0}}}}
def arms(res):
    t = res.trajectories
    return list(t["arm"].astype(str))
"""
    policy = """
class Greedy(bb.Policy):
    def decide(self, view):
        return {arm}
    def observe(self, obs):
        pass
"""
    run = f"res = bb.run(EXP, policies={{'greedy': Greedy}}, out={str(out)!r}, progress=False@FRESH@)\nprint('ARMS', sorted(set(arms(res))))"
    refused = f"""
try:
    bb.run(EXP, policies={{'greedy': Greedy}}, out={str(out)!r}, progress=False)
    print('REUSED')
except bb.BanditbenchError as e:
    print('REFUSED', 'fresh' in str(e))
"""
    cells = [setup, policy.format(arm=0), run.replace("@FRESH@", ""), run.replace("@FRESH@", ""),
             policy.format(arm=1), refused, run.replace("@FRESH@", ", fresh=True")]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    printed = ["".join(o.get("text", "") for o in c.outputs if o.output_type == "stream" and o.get("name") == "stdout")
               for c in nb.cells]
    errors = [o for c in nb.cells for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    arms0 = printed[2].strip()
    assert arms0 == printed[3].strip(), printed  # the same code: the same folder, reused
    assert "REFUSED True" in printed[5], printed  # edited: never the old results
    assert printed[6].strip() != arms0, printed  # fresh: the new policy's own results
