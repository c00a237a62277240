"""Shared fixtures: the repository, and the banditbench binary (built by `cargo test` or
`cargo build`; BANDITBENCH_BIN overrides)."""
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def root():
    return ROOT


@pytest.fixture(scope="session")
def banditbench_bin():
    given = os.environ.get("BANDITBENCH_BIN")
    candidates = [pathlib.Path(given)] if given else [
        ROOT / "target" / "release" / "banditbench",
        ROOT / "target" / "debug" / "banditbench",
    ]
    for c in candidates:
        if c.is_file():
            return c
    if os.environ.get("BANDITBENCH_REQUIRE_BIN") == "1":
        pytest.fail(f"no banditbench binary at {', '.join(map(str, candidates))}")
    pytest.skip("no banditbench binary: run `cargo build` first")


def write_experiment(path, body):
    """An experiment on the repository's tiny hand-written test fixture."""
    fixture = ROOT / "tests" / "fixtures" / "tiny"
    path.write_text(f'name = "{path.stem}"\ntraces = "{fixture}"\n{body}')
    return path
