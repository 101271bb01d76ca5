"""`python -m lagsim`."""

from lagsim.cli.app import main

main(prog_name="lagsim")
