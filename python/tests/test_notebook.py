"""examples/banditbench.ipynb runs top to bottom against the installed engine (CI runs it in a
fresh venv where cargo is not on PATH), and its outputs are what the cells promise."""
import os
import shutil

import pytest

from conftest import ROOT

REQUIRED = os.environ.get("BANDITBENCH_REQUIRE_ENGINE") == "1"


def test_the_notebook_runs(tmp_path):
    try:
        import banditbench._engine  # noqa: F401
        import nbclient
        import nbformat
    except ImportError as e:
        if REQUIRED:
            pytest.fail(f"the notebook needs the engine and nbclient: {e}")
        pytest.skip(f"needs the engine and nbclient: {e}")
    nb = nbformat.read(ROOT / "examples" / "banditbench.ipynb", as_version=4)
    # Where Jupyter starts a notebook's kernel: the notebook's own folder. The results go to
    # examples/results/ (git-ignored); a fresh folder each time, so nothing is reused.
    shutil.rmtree(ROOT / "examples" / "results", ignore_errors=True)
    nbclient.NotebookClient(nb, timeout=900, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT / "examples")}}).execute()
    check_outputs(nb)
    if os.environ.get("BANDITBENCH_WRITE_NOTEBOOK") == "1":
        # python -m pytest python/tests/test_notebook.py with this set commits the outputs.
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.outputs = as_a_terminal_shows(cell.outputs)
        nbformat.write(nb, ROOT / "examples" / "banditbench.ipynb")


def as_a_terminal_shows(outputs):
    """Consecutive stream outputs as one, each line as a terminal leaves it (a progress bar
    redrawn after carriage returns keeps its last state)."""
    merged = []
    for o in outputs:
        if o.output_type == "stream" and merged and merged[-1].output_type == "stream" and merged[-1].name == o.name:
            merged[-1].text += o.text
        else:
            merged.append(o)
    for o in merged:
        if o.output_type == "stream":
            o.text = "\n".join(line.rstrip("\r").split("\r")[-1] for line in o.text.split("\n"))
    return merged


def test_the_committed_notebook_shows_its_outputs():
    """A reader on a forge sees the tables and figures without running anything."""
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.read(ROOT / "examples" / "banditbench.ipynb", as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.outputs for c in code), "a code cell has no output: rerun with BANDITBENCH_WRITE_NOTEBOOK=1"
    check_outputs(nb)


def check_outputs(nb):
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    # The quickstart's ranking, the policy written in the notebook, another tool's scores.
    assert any("ucb1(tie_break=first, log_t=pulls)" in h and "mean_rank" in h for h in html)
    assert any(">greedy<" in h for h in html)
    assert any("optuna-tpe" in h and "smac3" in h for h in html)
    # The grid grown on a Dask cluster: the old policies' cells came from the cell cache, and
    # the new policy ranks beside them.
    streams = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    grown = [l for l in streams.splitlines() if "came from the cell cache" in l]
    assert len(grown) == 2 and " 0 came from the cell cache" in grown[0], grown
    assert int(grown[1].split("finished; ")[1].split()[0]) > 0, grown
    assert any("successive-halving" in h and "d-ttts" in h for h in html)
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) == 2  # the critical-difference diagram and the anytime curves
