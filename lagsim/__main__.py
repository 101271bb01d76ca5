"""`python -m lagsim`."""

from lagsim.cli import main

main(prog_name="lagsim")
