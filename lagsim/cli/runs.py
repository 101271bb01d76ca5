"""The run behind ``simulate``, ``plot`` and ``animate``: a system read and simulated through
the API (:func:`lagsim.api.open_system`, :func:`lagsim.api.run`), or a CSV read back.

The stages are imported inside the functions: they pull in NumPy and SymEngine, which
``lagsim COMMAND --help`` and shell completion do without.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lagsim import api
from lagsim.cli.exits import warn
from lagsim.cli.files import stdin_hint
from lagsim.cli.progress import Progress

if TYPE_CHECKING:
    from lagsim.output.io import Output, Table
    from lagsim.output.trajectory import Trajectory
    from lagsim.spec.system import SystemSpec
    from lagsim.symbolic.model import Model


def simulate_file(file: str, flags: dict[str, Any], overrides: dict[str, float],
                  initial: dict[str, float], partial: str | None = None,
                  output: Output | None = None, inputs: Sequence[tuple[str, str]] = (),
                  planned: Callable[[Any], None] | None = None
                  ) -> tuple[SystemSpec, Model, Trajectory]:
    """Run FILE; with ``partial`` (``""`` for the default place) the rows before a failure are
    kept there, a place checked, like ``output``, before the run; ``planned`` is called with the
    run's resolved options before the run, to refuse what the run's result would be refused
    for."""
    from lagsim.numeric.compile import compile_ahead
    from lagsim.output.io import check_output

    stdin_hint(file, "YAML", "FILE")
    system = api.open_system(file, overrides, initial)
    compile_ahead(system.model)  # gcc runs while the run's modules are imported
    from lagsim.run.driver import FailedRun

    spec = system.spec
    kept = None
    if partial is not None:
        kept = check_output(partial or _partial_path(output, spec.name), "--partial",
                            inputs=inputs)
    if planned is not None:
        from lagsim.spec.options import SimulateOptions

        planned(SimulateOptions.resolve(spec.simulate, flags))
    progress = Progress()
    failed: FailedRun | None = None
    try:
        trajectory = api.run(system, flags, report=warn, progress=progress)
    except FailedRun as failure:
        failed = failure
    finally:
        progress.close()
    if failed is not None:
        if kept is not None:
            _keep_partial(failed.partial, kept)
        raise failed
    if trajectory.message:
        warn(trajectory.message)
    return spec, system.model, trajectory


def _partial_path(output: Output | None, name: str) -> str:
    """--partial's default: beside -o FILE as FILE's stem + .partial.csv when -o is a regular
    file, else <system name>.partial.csv in the current folder (lagsim.output.io.derived_path: a
    name such as ../x or /x is refused, not followed)."""
    from lagsim.output.io import derived_path

    if output is not None and output.kind == "file":
        path = Path(output.name)
        return derived_path(path.parent, path.stem, ".partial.csv", "--partial",
                            "the -o file's name")
    return derived_path(".", name, ".partial.csv", "--partial", "the system's name")


def _keep_partial(trajectory: Trajectory, target: Output) -> None:
    from lagsim.output.io import write_csv

    write_csv(trajectory.columns, trajectory.as_array(), target)
    warn(f"kept the {len(trajectory.t)} rows before the failure in {target.name}")


def looks_like_csv(source: str) -> bool:
    """Whether INPUT is a CSV (stdin, a .csv or .txt name, or a file starting ``t,``) rather
    than a system."""
    if source == "-":
        return True
    path = Path(source)
    if path.suffix.lower() in (".yaml", ".yml"):
        return False
    if path.suffix.lower() in (".csv", ".txt"):
        return True
    if path.is_file():
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(2) == "t,"
    return False


def table_and_model(source: str, system: str | None, flags: dict[str, Any],
                    overrides: dict[str, float], initial: dict[str, float],
                    planned: Callable[[Any], None] | None = None
                    ) -> tuple[Table, Model | None, SystemSpec | None]:
    """A CSV table from a CSV source, or by simulating a system (``planned`` as in
    :func:`simulate_file`); the system's model and spec if known (``--system`` wins over the
    simulated one)."""
    from lagsim.output.io import Table, read_csv

    spec: SystemSpec | None
    model: Model | None
    if looks_like_csv(source):
        stdin_hint(source, "CSV", "INPUT (a CSV file or a system)")
        table = read_csv(source)
        known = api.open_system(system, overrides) if system else None
        spec, model = (known.spec, known.model) if known else (None, None)
    else:
        spec, model, trajectory = simulate_file(source, flags, overrides, initial,
                                                planned=planned)
        table = Table(tuple(trajectory.columns), trajectory.as_array(), spec.source)
        if system:
            known = api.open_system(system, overrides)
            spec, model = known.spec, known.model
    if system and model is not None:
        from lagsim.analysis.balance import check_parameters

        note = check_parameters(table, model)
        if note:
            warn(note)
    return table, model, spec
