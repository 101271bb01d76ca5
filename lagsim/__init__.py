"""lagsim: derive and simulate the equations of motion of constrained mechanical systems.

The Python API (docs/api.md)::

    import lagsim
    pendulum = lagsim.load("pendulum")                 # a path, a bundled name or YAML text
    print(pendulum.derive("matrix"))                   # as `lagsim derive --form matrix`
    traj = pendulum.simulate(t_end=5, parameters={"l": 2.0}, initial={"theta": 0.3})
    traj["theta"], traj.t, traj.to_numpy(), traj.to_pandas(), traj.to_csv("run.csv")
    lagsim.read_csv("run.csv"); lagsim.plot(traj, kind="phase")

These names are the public API; every other module is private (docs/architecture.md maps the
subpackages). They are imported on first use
(PEP 562), so ``import lagsim`` imports nothing else (not even ``typing``), and NumPy and SymPy
only come with the first use of what needs them.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = [
    "InputError",
    "IntegrationError",
    "LagsimError",
    "LagsimWarning",
    "Location",
    "System",
    "Trajectory",
    "__version__",
    "load",
    "plot",
    "read_csv",
]

_LAZY = {
    "InputError": "lagsim.errors",
    "IntegrationError": "lagsim.errors",
    "LagsimError": "lagsim.errors",
    "Location": "lagsim.errors",
    "LagsimWarning": "lagsim.api",
    "System": "lagsim.api",
    "load": "lagsim.api",
    "plot": "lagsim.api",
    "read_csv": "lagsim.api",
    "Trajectory": "lagsim.output.trajectory",
}


def __getattr__(name: str) -> object:
    import importlib

    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'lagsim' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
