"""lagsim: derive and simulate the equations of motion of constrained mechanical systems."""

__version__ = "0.1.0"
