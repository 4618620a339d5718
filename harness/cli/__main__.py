"""``python -m harness.cli``: the ``harness`` command."""

from harness.cli import main

if __name__ == "__main__":  # importing the package's modules (as a test does) runs nothing
    raise SystemExit(main())
