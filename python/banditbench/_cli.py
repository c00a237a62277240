"""The ``banditbench`` command of the Python package: the engine's command line, in-process."""

import sys


def main() -> None:
    from . import _engine

    sys.exit(_engine.cli(sys.argv[1:]))


if __name__ == "__main__":
    main()
