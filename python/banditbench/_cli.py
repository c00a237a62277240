"""The ``banditbench`` command of the Python package: the engine's command line, in-process.
``banditbench policies`` also lists the library adapters (``banditbench.adapters``), which only
the Python package has."""

import signal
import sys
from typing import List, Optional


def _policies_filter(args: List[str]) -> Optional[tuple]:
    """(name filter, world filter) of a ``policies`` command line; None for any other command
    or for its help."""
    if not args or args[0] != "policies" or "-h" in args or "--help" in args:
        return None
    name, world, rest = None, None, args[1:]
    i = 0
    while i < len(rest):
        a = rest[i]
        if a == "--world" and i + 1 < len(rest):
            world, i = rest[i + 1], i + 2
            continue
        if a.startswith("--world="):
            world = a.split("=", 1)[1]
        elif not a.startswith("-"):
            name = a
        i += 1
    return name, world


def print_adapters(name: Optional[str] = None, world: Optional[str] = None) -> None:
    """The library adapters and the methods each exposes (``adapters.catalog()``), those whose
    library or method name contains ``name``; none outside the pool world."""
    if world is not None and world != "pool":
        return
    from .adapters import ADAPTERS, catalog
    from .adapters.dehb import VERSION as DEHB_VERSION
    from .adapters.hebo import VERSION as HEBO_VERSION
    from .adapters.neps import VERSION as NEPS_VERSION

    c = catalog()
    lines = []
    for library, (module, cls, _, dist) in ADAPTERS.items():
        rows = c[c["library"] == library]
        if name is not None and name not in library and not rows["name"].str.contains(
                name, regex=False).any():
            continue
        installed = rows["installed"].iloc[0]
        lines.append(f"{library}: banditbench.adapters.{module}.{cls}, {dist} "
                     f"{rows['pinned'].iloc[0]} pinned, "
                     + (f"{installed} installed" if installed else "not installed")
                     + f" (pip install 'banditbench-engine[{library}]')")
        for param, names in rows.groupby("parameter", sort=False)["name"]:
            shown = [n for n in names if name is None or name in library or name in n]
            if not shown:
                continue
            more = f" ... ({len(shown)} in all)" if len(shown) > 12 else ""
            lines.append(f"    {param}: {', '.join(shown[:12])}{more}")
    if name is None or name in "dehb":
        lines.append(f"dehb: banditbench.adapters.dehb.DEHBOptimizer, DEHB {DEHB_VERSION} pinned, "
                     "in a venv of its own (pip install -r python/requirements-dehb.txt)")
    if name is None or name in "hebo":
        lines.append(f"hebo: banditbench.adapters.hebo.HEBOOptimizer, HEBO {HEBO_VERSION} pinned, "
                     "in a venv of its own (pip install -r python/requirements-hebo.txt)")
    if name is None or name in "neps":
        lines.append(f"neps: banditbench.adapters.neps.NePSOptimizer, neural-pipeline-search "
                     f"{NEPS_VERSION} pinned, in a venv of its own (pip install -r "
                     "python/requirements-neps.txt): any name in neps.algorithms")
    if not lines:
        return
    print("library adapters (pool world, any number of workers; README 'Library optimizers'; "
          "banditbench.adapters.catalog() as a DataFrame)")
    for line in lines:
        print("    " + line)


def main() -> None:
    from . import _engine

    # Ctrl-C ends the command at once, as it ends the binary (finished cells are on disk).
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    args = sys.argv[1:]
    code = _engine.cli(args)
    listing = _policies_filter(args)
    if code == 0 and listing is not None:
        sys.stdout.flush()
        try:
            print_adapters(*listing)
        except Exception as e:  # a broken optional library must not fail the listing
            print(f"library adapters: not listed ({type(e).__name__}: {e}); "
                  "banditbench.adapters.catalog() shows the error whole", file=sys.stderr)
    sys.exit(code)


if __name__ == "__main__":
    main()
