"""Standalone C of one model (issue 25): a header with the documented interface, one ``.c`` file
and an example ``main.c``, none of which needs Python or lagsim at run time.

The texts are named templates in ``lagsim/export/c/`` filled by
:func:`lagsim.numeric.csource.fill` (PyDy's way: fixed C with named slots, the constants an array
``p`` passed at run time). The model's expressions are printed by
:func:`lagsim.numeric.ccompile.c_function`, the linear algebra is lagsim's ``runtime.c`` and the
integrator lagsim's DOP853 step (:func:`lagsim.numeric.ccompile.dop853_source`), the same texts
the C paths of ``lagsim simulate`` compile. The C↔Python interface is declared once here
(:class:`Layout`): the names and order of the states, parameters and outputs that the header,
the FMU's model description (:mod:`lagsim.export.fmu`) and the tests read.

Constrained systems are exported in the index-1 form [[M, −Aᵀ], [A, 0]] [q̈; λ] = [F; b] (seed
001 §10.7) with Baumgarte's stabilization b − 2α φ̇ − β² φ (holonomic rows) and b − α(A q̇ + c)
(velocity rows), α and β two more parameters (``baumgarte_alpha``, ``baumgarte_beta``) with
``--baumgarte``'s values as start values: ``lagsim simulate --formulation index1 --stabilize
baumgarte`` integrates the same ODE.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import symengine as se

from lagsim import __version__, naming
from lagsim.errors import InputError, Location
from lagsim.export.units import output_units
from lagsim.numeric import csource
from lagsim.numeric.ccompile import RUNTIME, c_function, dop853_coefficients, dop853_source
from lagsim.numeric.compile import compile_model
from lagsim.numeric.jacobian import residual_derivatives
from lagsim.output.io import check_output, open_output
from lagsim.records import record
from lagsim.run.start import CUTOFF as START_CUTOFF
from lagsim.run.start import NUDGE as START_NUDGE
from lagsim.run.start import TOLERANCE as START_TOLERANCE
from lagsim.run.start import consistent_start
from lagsim.spec.expressions import Source, parse_expression
from lagsim.spec.options import FLAGS, Naming, SimulateOptions
from lagsim.spec.system import SystemSpec
from lagsim.symbolic.model import Model

BAUMGARTE = ("baumgarte_alpha", "baumgarte_beta")
"""The two parameters a constrained export adds after the file's (Baumgarte's α and β)."""
AXES = ("x", "y", "z")


def template(name: str) -> str:
    """The text of ``lagsim/export/c/<name>`` (package data)."""
    return (resources.files("lagsim.export") / "c" / name).read_text(encoding="utf-8")


def identifier(name: str) -> str:
    """``name`` as a C identifier (FMI's modelIdentifier): other characters become ``_``, and a
    leading digit gets ``m_``."""
    text = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return f"m_{text}" if not text or text[0].isdigit() else text


@record
class Layout:
    """The exported model's interface, declared once: the state, parameter and output names in
    their array order, with start values and units (``""`` when the file gives none);
    ``derived`` the parameters computed from the others (the file's ``I: m*l**2``), and
    ``state_defined`` the states whose start the file writes as an expression in parameters
    (both re-evaluated by the export when a parameter changes, as ``--set`` re-reads them)."""

    prefix: str
    name: str
    coordinates: tuple[str, ...]
    constraints: tuple[str, ...]
    holonomic: tuple[int, ...]
    states: tuple[str, ...]
    state_start: tuple[float, ...]
    state_initial: tuple[float, ...]
    state_given: tuple[bool, ...]
    state_units: tuple[str, ...]
    derivative_units: tuple[str, ...]
    parameters: tuple[str, ...]
    parameter_start: tuple[float, ...]
    parameter_units: tuple[str, ...]
    derived: tuple[str, ...]
    state_defined: tuple[bool, ...]
    inputs: tuple[str, ...]
    positions: tuple[str, ...]
    outputs: tuple[str, ...]
    output_units: tuple[str, ...]
    stop_when: str
    formulation: str
    projection: bool
    t0: float
    t_end: float
    samples: int
    time_unit: str

    @property
    def n(self) -> int:
        return len(self.coordinates)

    @property
    def m(self) -> int:
        return len(self.constraints)


FORMULATIONS = ("auto", "index1", "udwadia-kalaba")
"""The ``--formulation`` values an export takes (auto means index1 here)."""


def export_options(spec: SystemSpec, flags: Mapping[str, Any] | None = None,
                   naming: Naming = FLAGS) -> SimulateOptions:
    """The run settings an export uses (``t_start``, ``t_end``, ``samples``, ``formulation``,
    ``stabilize``, ``baumgarte``): the file's ``simulate:`` block with ``flags`` over it
    (:meth:`lagsim.spec.options.SimulateOptions.resolve`). A constrained system exported in
    another formulation than the exported C integrates is an :class:`InputError` that says
    what works; every stabilizer is exported (Baumgarte's by default; projection in the C
    integrator, Co-Simulation's, with Baumgarte's terms kept in Model Exchange)."""
    flags = dict(flags or {})
    options = SimulateOptions.resolve(spec.simulate, flags, naming)
    if not spec.constraints:
        return options
    if options.formulation not in FORMULATIONS:
        raise InputError(f"an export integrates the constrained system in the index1 or the "
                         f"udwadia-kalaba form; --formulation {options.formulation} is not "
                         f"exported (use index1, or udwadia-kalaba for dependent constraints)",
                         options.where("formulation"))
    if "stabilize" not in flags or flags["stabilize"] is None:
        return replace(options, stabilize="baumgarte")
    return options


def layout(spec: SystemSpec, model: Model, options: SimulateOptions) -> Layout:
    """The interface of ``model`` (from ``spec``) with its start state at ``options.t_start``:
    the file's initial values moved onto the constraints as ``lagsim simulate`` moves them
    (:func:`lagsim.run.start.consistent_start`)."""
    coords = tuple(model.coordinates)
    units = dict(spec.units)
    time_unit = units.get("t", "")
    t0 = options.t_start
    baumgarte = (0.0, 0.0) if options.stabilize == "none" else options.baumgarte
    q0, qd0 = spec.initial_state()
    initial = tuple(map(float, [*q0, *qd0]))
    given = frozenset(name for name, _ in spec.initial)
    if model.m:
        numeric = compile_model(model)
        q, qd = consistent_start(numeric, t0, np.array(q0), np.array(qd0), given=given)
        q0, qd0 = q.tolist(), qd.tolist()
    names = tuple(model.parameters)
    values = tuple(float(model.parameters[k]) for k in names)
    punits = tuple(units.get(k, "") for k in names)
    if model.m:
        names += BAUMGARTE
        values += tuple(float(g) for g in baumgarte)
        punits += (f"1/{time_unit}",) * 2 if time_unit else ("", "")
    rate = [_per(units.get(c, ""), time_unit) for c in coords]
    positions = tuple(f"{mass}_{AXES[k]}" for mass, r in model.mass_positions
                      for k in range(len(r)))
    multipliers = tuple(naming.multiplier(c.name) for c in model.constraints)
    found = output_units(units, model, model.mass_positions)
    return Layout(
        prefix=identifier(model.name), name=model.name, coordinates=coords,
        constraints=tuple(c.name for c in model.constraints),
        holonomic=tuple(i for i, c in enumerate(model.constraints) if c.kind == "holonomic"),
        states=naming.state(coords), state_start=tuple(map(float, [*q0, *qd0])),
        state_initial=initial, state_given=tuple(s in given for s in naming.state(coords)),
        state_units=tuple(units.get(c, "") for c in coords) + tuple(rate),
        derivative_units=(*rate, *(_per(units.get(c, ""), f"{time_unit}2") for c in coords)),
        parameters=names, parameter_start=values, parameter_units=punits,
        derived=tuple(k for k, _ in spec.parameter_definitions if k not in spec.inputs),
        state_defined=tuple(s in dict(spec.initial_definitions)
                            for s in naming.state(coords)),
        inputs=tuple(model.inputs),
        positions=positions, outputs=(*positions, *multipliers, "energy"),
        output_units=tuple(found.get(name, "") for name in (*positions, *multipliers,
                                                             "energy")),
        stop_when=options.stop_when or "",
        projection=bool(model.m) and options.stabilize == "projection",
        formulation=("udwadia-kalaba" if model.m and options.formulation == "udwadia-kalaba"
                     else "index1" if model.m else "ode"), t0=t0,
        t_end=options.t_end, samples=options.rows(), time_unit=time_unit)


def _per(unit: str, time_unit: str) -> str:
    """The unit of a rate of ``unit`` per ``time_unit`` (``""`` when either is unknown; ``s2``
    for s², as Modelica writes it)."""
    if not unit or not time_unit.rstrip("2"):
        return ""
    return f"{unit}/{time_unit}"


def _strings(names: tuple[str, ...]) -> str:
    return ", ".join('"' + n.replace("\\", "\\\\").replace('"', '\\"') + '"' for n in names)


def _doubles(values: tuple[float, ...]) -> str:
    return ", ".join(repr(float(v)) for v in values) or "0"


def _indices(prefix: str, lay: Layout) -> str:
    """``#define <prefix>_Y_<state> i`` (and ``_P_``, ``_OUT_``) for every entry of the three
    arrays."""
    lines = []
    for kind, names in (("Y", lay.states), ("P", lay.parameters), ("OUT", lay.outputs)):
        lines += [f"#define {prefix}_{kind}_{identifier(name)} {i}"
                  for i, name in enumerate(names)]
    return "\n".join(lines)


def _indicator(spec: SystemSpec, model: Model, options: SimulateOptions) -> str:
    """``indicator`` of (t, q, q̇, λ): the ``--stop-when`` expression as
    :func:`lagsim.run.events.compile_events` reads it (the same names), or no text without
    one."""
    if not options.stop_when:
        return ""
    coords = tuple(model.coordinates)
    lambdas = tuple(se.Symbol(naming.multiplier(c.name)) for c in model.constraints)
    names: dict[str, se.Basic] = dict(spec.symbols())
    names.update({s.name: s for s in lambdas})
    where = options.file_location("stop_when") or Location(options.label("stop_when"))
    hint = ("it may use t, the coordinates, their velocities <q>_dot, the parameters and the "
            f"multipliers {', '.join(s.name for s in lambdas) or '(none: no constraints)'}")
    expr = parse_expression(options.stop_when, names, Source(where), "expression", hint)
    args = [se.Symbol("t"), *(se.Symbol(c) for c in coords),
            *(se.Symbol(v) for v in naming.velocities(coords)), *lambdas]
    return c_function("indicator", args, [expr], [se.Symbol(k) for k in model.parameters])


def _definitions(spec: SystemSpec, model: Model, lay: Layout) -> str:
    """``derived_values`` (the parameters of ``lay.derived`` in that order) and
    ``initial_values`` (the starts of ``lay.state_defined``'s states in state order) as C of the
    parameters ``p``: the file's definitions (:attr:`SystemSpec.parameter_definitions`,
    :attr:`SystemSpec.initial_definitions`)."""
    params = list(model.substitutions())
    derived = dict(spec.parameter_definitions)
    initial = dict(spec.initial_definitions)
    starts = [initial[s] for s, d in zip(lay.states, lay.state_defined) if d]
    return "\n".join([c_function("derived_values", [], [derived[k] for k in lay.derived], params),
                      c_function("initial_values", [], starts, params)])


def _functions(model: Model) -> str:
    """The model's expressions as C (:func:`lagsim.numeric.ccompile.c_function`): ``dynamics``
    (M, F, A, b of t, q, q̇), ``phi`` (φ, φ_q of t, q), ``velocity`` (A, c of t, q) and
    ``observe`` (the mass positions and h of t, q, q̇) and ``jacobian`` (the derivatives of the
    residual, :func:`lagsim.numeric.jacobian.residual_derivatives`), the parameters ``p`` their
    inputs."""
    t, q, qd = model.t, list(model.q), list(model.qd)
    params = list(model.substitutions())
    flat = [model.mass_matrix[i, j] for i in range(model.n) for j in range(model.n)]
    forcing = [model.forcing[i, 0] for i in range(model.n)]
    A = [model.A[i, j] for i in range(model.A.rows) for j in range(model.A.cols)]
    b = [model.b[i, 0] for i in range(model.b.rows)]
    hol = model.holonomic
    phis = [c.expression for c in hol] + [r for c in hol for r in c.row]
    rows = [r for c in model.constraints for r in c.row] + [c.offset for c in model.constraints]
    observed = [se.sympify(x) for _, r in model.mass_positions for x in r] + [model.energy]
    state = [t, *q, *qd]
    args, derivatives = residual_derivatives(model)
    return "\n".join([
        c_function("jacobian", args, derivatives, params),
        c_function("dynamics", state, [*flat, *forcing, *A, *b], params),
        c_function("phi", state, phis, params),
        c_function("velocity", state, rows, params),
        c_function("observe", state, observed, params)])


def sources(spec: SystemSpec, model: Model, options: SimulateOptions | None = None
            ) -> tuple[Layout, dict[str, str]]:
    """The interface and the files of the standalone C export: ``<prefix>.h``, ``<prefix>.c``
    and ``main.c`` by name; ``options`` default :func:`export_options` of the file."""
    options = options or export_options(spec)
    lay = layout(spec, model, options)
    P = lay.prefix
    common = dict(P=P, NAME=lay.name, VERSION=__version__)
    constraints = (f"Constraints ({lay.m} rows: {', '.join(lay.constraints)}) enter by the "
                   f"{lay.formulation} form with Baumgarte's stabilization, alpha and beta the "
                   f"last two parameters." if lay.m
                   else "No constraints: M(q) q_ddot = F(q, q_dot, t).")
    header = csource.fill(
        template("model.h"), **common, STATE_NAMES=", ".join(lay.states),
        PARAMETER_NAMES=", ".join(lay.parameters),
        DERIVED_NAMES=", ".join(lay.derived) or "none here",
        DEFINED_NAMES=", ".join(s for s, d in zip(lay.states, lay.state_defined) if d)
        or "none here",
        INPUTS=(f"the inputs u ({', '.join(lay.inputs)}) are parameters: set them before each "
                f"call" if lay.inputs else "no inputs"),
        OUTPUT_NAMES=", ".join(lay.outputs),
        CONSTRAINTS=constraints, GUARD=f"LAGSIM_EXPORT_{P.upper()}_H", N=lay.n, M=lay.m,
        NY=2 * lay.n, NP=len(lay.parameters), NOUT=len(lay.outputs), T0=repr(lay.t0),
        INDICES=_indices(P, lay), TOLERANCE=repr(START_TOLERANCE),
        STABILIZER=("With --stabilize projection it steps the index-1 equations without "
                    "Baumgarte's terms and projects the state onto the constraints after each "
                    "accepted step (lagsim simulate --stabilize projection); @P@_rhs keeps "
                    "them." if lay.projection else "").replace("@P@", P),
        NEVENT=int(bool(lay.stop_when)), STOP_WHEN=lay.stop_when or "(none)")
    body = csource.fill(
        template("model.c"), **common,
        FORMULATION={"index1": "the index-1 form and Baumgarte's stabilization",
                     "udwadia-kalaba": "Udwadia-Kalaba's form (seed 004) and Baumgarte's "
                                       "stabilization",
                     "ode": "q_ddot from an L D L^T factorization of M"}[lay.formulation],
        UK=int(lay.formulation == "udwadia-kalaba"),
        STATE_LIST=_strings(lay.states), PARAMETER_LIST=_strings(lay.parameters),
        OUTPUT_LIST=_strings(lay.outputs), PARAMETER_VALUES=_doubles(lay.parameter_start),
        CONSTRAINT_LIST=", ".join(filter(None, (_strings(lay.constraints), "0"))),
        STATE_INITIAL=_doubles(lay.state_initial),
        STATE_GIVEN=", ".join(str(int(g)) for g in lay.state_given), CUTOFF=repr(START_CUTOFF),
        NUDGE=repr(START_NUDGE),
        STATE_VALUES=_doubles(lay.state_start), RUNTIME=RUNTIME,
        FUNCTIONS="\n".join([_functions(model), _definitions(spec, model, lay),
                             _indicator(spec, model, options)]),
        ND=len(lay.derived), NI=sum(lay.state_defined),
        DERIVED=", ".join(map(str, (*(lay.parameters.index(k) for k in lay.derived), 0))),
        DEFINED=", ".join(map(str, (*(i for i, d in enumerate(lay.state_defined) if d), 0))),
        PARAMETER_DERIVED=", ".join(str(int(k in lay.derived)) for k in lay.parameters),
        NEVENT=int(bool(lay.stop_when)), PROJECTION=int(lay.projection),
        N=lay.n, M=lay.m, MH=len(lay.holonomic), NPM=len(model.parameters),
        HOLONOMIC=", ".join(map(str, (*lay.holonomic, 0))), NPOS=len(lay.positions),
        DOP853=dop853_source(lay.n), STAGES=dop853_coefficients().N_STAGES)
    main = csource.fill(template("main.c"), **common, T0=repr(lay.t0), T_END=repr(lay.t_end),
                        SAMPLES=lay.samples)
    return lay, {f"{P}.h": header, f"{P}.c": body, "main.c": main}


def write_c(spec: SystemSpec, model: Model, folder: str | Path, force: bool = False,
            options: SimulateOptions | None = None) -> tuple[Path, ...]:
    """Write :func:`sources` into ``folder`` (made if missing) through the project's one writer
    (:func:`lagsim.output.io.open_output`: a temporary file renamed into place); the paths
    written. An existing folder, or an existing file among those, is kept unless ``force``:
    an :class:`InputError` before anything is written."""
    target = Path(folder)
    if target.exists() and not force:
        raise InputError(f"cannot write {str(target)!r}: it exists; give --force to write into "
                         f"it", Location("--c"))
    if target.exists() and not target.is_dir():
        raise InputError(f"cannot write {str(target)!r}: it is not a folder", Location("--c"))
    _, files = sources(spec, model, options)
    outputs = [check_output(target / name, "--c") if target.exists() else None
               for name in files]
    try:
        target.mkdir(parents=False, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot make the folder {str(target)!r}: {exc.strerror or exc}",
                         Location("--c")) from exc
    written = []
    for (name, text), checked in zip(files.items(), outputs):
        with open_output(checked or check_output(target / name, "--c")) as out:
            out.write(text)
        written.append(target / name)
    return tuple(written)
