"""``python -m lagsim.cli.chains N``: write the YAML of the planar chain of N pendulums
(:func:`lagsim.spec.chains.chain_yaml`) to a file or stdout, through the safe writer."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from lagsim.errors import LagsimError
from lagsim.output.io import check_output, open_output
from lagsim.spec.chains import chain_yaml


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: write the chain's YAML to a file or stdout."""
    parser = argparse.ArgumentParser(
        prog="python -m lagsim.cli.chains",
        description="Write the YAML of the planar n-pendulum chain."
    )
    parser.add_argument("n", type=int, help="number of links")
    parser.add_argument("--natural", action="store_true", help="Cartesian coordinates + rods")
    parser.add_argument("--angle", type=float, default=0.5, help="initial rod angle [rad]")
    parser.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    args = parser.parse_args(argv)
    if args.n < 1:
        parser.error("n must be at least 1")
    text = chain_yaml(args.n, natural=args.natural, angle=args.angle)
    try:
        with open_output(check_output(args.output)) as out:
            out.write(text)
    except LagsimError as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
