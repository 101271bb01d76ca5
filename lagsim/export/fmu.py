"""An FMI 2.0 or 3.0 FMU of one model, for Model Exchange and Co-Simulation at once (issue 25).

The FMU is a zip in the layout of the FMI 2.0.x standard (fmi-standard.org, §2.3 "FMU
Distribution"), as the Modelica Association's Reference FMUs lay it out: ``modelDescription.xml``,
``sources/`` (the standalone C of :mod:`lagsim.export.ccode`, ``fmucore.h``, the FMI wrapper
``fmu.c`` and the FMI 2.0 headers, 2-clause BSD, their licence in each header) and, when a C
compiler is found (:func:`lagsim.numeric.ccompile.compiler`),
``binaries/<platform>/<modelIdentifier>.so`` built from them. FMI 3.0 (``fmi=3``, the FMI 3.0
standard §2.5 "FMU Distribution") has the wrapper ``fmu3.c``, the FMI 3.0 headers,
``sources/buildDescription.xml`` and ``binaries/<arch>-<os>/`` (:func:`model_description3`).
Without a compiler the FMU is a source FMU only, and :func:`write_fmu` says so.

Variables (value references as in ``fmucore.h``): the states (coordinates and velocities,
continuous, lagsim's consistent start; ``initial="approx"`` with constraints, since
``fmi2ExitInitializationMode`` moves the start onto them as ``lagsim simulate`` does, a state
set before it given as ``--init`` gives it), their derivatives, every
parameter (``causality="parameter" variability="tunable"``, the file's value its start value; a
constrained system's Baumgarte gains too; the ``inputs:`` of the file ``causality="input"``,
their defaults the start values, so that a controller drives the model) and the outputs (mass
positions, multipliers ``lambda_<c>``, the energy); units from the file's ``units:`` block. In
Model Exchange the importer's solver integrates the index-1 ODE with Baumgarte's stabilization;
in Co-Simulation ``fmi2DoStep`` (``fmi3DoStep``) integrates it with DOP853 at the experiment's
tolerance.
"""

from __future__ import annotations

import hashlib
import platform
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from xml.sax.saxutils import quoteattr

from lagsim import __version__
from lagsim.errors import InputError, Location
from lagsim.export.ccode import Layout, sources, template
from lagsim.export.units import parse
from lagsim.numeric import csource
from lagsim.numeric.ccompile import compiler
from lagsim.output.io import check_output, open_output
from lagsim.records import record
from lagsim.spec.options import SimulateOptions
from lagsim.spec.system import SystemSpec
from lagsim.symbolic.model import Model

HEADERS = ("fmi2Functions.h", "fmi2FunctionTypes.h", "fmi2TypesPlatform.h")
"""The FMI 2.0 headers vendored in ``lagsim/export/c/`` (2-clause BSD)."""
HEADERS3 = ("fmi3Functions.h", "fmi3FunctionTypes.h", "fmi3PlatformTypes.h")
"""The FMI 3.0 headers vendored in ``lagsim/export/c/`` (2-clause BSD, the licence in each;
the files FMPy 0.3.32 ships, from the FMI 3.0 standard)."""


def platform_folder() -> str:
    """FMI 2.0's name of this platform's binaries folder (``linux64``, ``darwin64``,
    ``win64``)."""
    bits = "64" if sys.maxsize > 2**32 else "32"
    system = {"linux": "linux", "darwin": "darwin", "win32": "win"}.get(sys.platform,
                                                                         sys.platform)
    return system + bits


def platform_tuple() -> str:
    """FMI 3.0's name of this platform's binaries folder (§2.5.1.4: ``x86_64-linux``,
    ``aarch64-darwin``, ``x86_64-windows``)."""
    machine = platform.machine().lower()
    arch = {"amd64": "x86_64", "x86_64": "x86_64", "arm64": "aarch64", "aarch64": "aarch64",
            "i386": "x86", "i686": "x86", "x86": "x86"}.get(machine, machine)
    system = {"linux": "linux", "darwin": "darwin", "win32": "windows"}.get(sys.platform,
                                                                           sys.platform)
    return f"{arch}-{system}"


def _suffix() -> str:
    return {"darwin": ".dylib", "win32": ".dll"}.get(sys.platform, ".so")


def unit_names(lay: Layout) -> list[str]:
    """Every unit text a variable of ``lay`` has, sorted."""
    return sorted({u for u in (*lay.state_units, *lay.derivative_units, *lay.parameter_units,
                               *lay.output_units) if u})


def _unit_definitions(lay: Layout) -> str:
    """``<UnitDefinitions>``: each unit with its ``<BaseUnit>`` (SI exponents and factor,
    :func:`lagsim.export.units.parse`) where the text is an SI unit, its name alone where not;
    no block without units."""
    units = unit_names(lay)
    if not units:
        return ""
    rows = []
    for u in units:
        base = parse(u).base_unit()
        attrs = " ".join(f'{k}="{v}"' for k, v in (base or {}).items())
        rows.append(f"    <Unit name={quoteattr(u)}><BaseUnit {attrs}/></Unit>\n" if base
                    else f"    <Unit name={quoteattr(u)}/>\n")
    return "  <UnitDefinitions>\n" + "".join(rows) + "  </UnitDefinitions>\n"


def computed(lay: Layout, i: int) -> bool:
    """Whether state ``i``'s start is computed at initialization (``initial="approx"``): moved
    onto the constraints, or written in the file as an expression in parameters."""
    return bool(lay.m) or lay.state_defined[i]


def initial_unknowns(lay: Layout) -> list[int]:
    """The value references of the unknowns of initialization, ascending (FMI 2.0 §2.2.8,
    FMI 3.0 §2.4.8): the states computed at initialization (:func:`computed`), every state
    derivative, the calculated parameters and the outputs."""
    ny, npar = len(lay.states), len(lay.parameters)
    return [*(i for i in range(ny) if computed(lay, i)), *range(ny, 2 * ny),
            *(2 * ny + j for j, k in enumerate(lay.parameters) if k in lay.derived),
            *range(2 * ny + npar, 2 * ny + npar + len(lay.outputs))]


@record
class Variable:
    """One scalar variable of the model description: its attributes (FMI 2.0 §2.2.7, FMI 3.0
    §2.4.7), ``derivative`` the index (FMI 2.0) or value reference (FMI 3.0) of the state it is
    the derivative of."""

    name: str
    vr: int
    causality: str
    variability: str
    description: str
    start: float | None = None
    unit: str = ""
    derivative: int | None = None
    initial: str | None = None


def variable_element(v: Variable, fmi: int) -> str:
    """The element of ``v`` in an FMI ``fmi`` model description: a ``<ScalarVariable>`` with its
    ``<Real>`` (FMI 2.0), a ``<Float64>`` (FMI 3.0)."""
    attrs = [f"name={quoteattr(v.name)}", f'valueReference="{v.vr}"',
             f"description={quoteattr(v.description)}", f'causality="{v.causality}"',
             f'variability="{v.variability}"']
    if v.initial:
        attrs.append(f'initial="{v.initial}"')
    typed = []
    if v.unit:
        typed.append(f"unit={quoteattr(v.unit)}")
    if v.start is not None:
        typed.append(f'start="{v.start!r}"')
    if v.derivative is not None:
        typed.append(f'derivative="{v.derivative}"')
    if fmi == 2:
        return (f"    <ScalarVariable {' '.join(attrs)}>\n      <Real {' '.join(typed)}/>\n"
                f"    </ScalarVariable>")
    return f"    <Float64 {' '.join([*attrs, *typed])}/>"


def model_variables(lay: Layout, fmi: int) -> list[Variable]:
    """The states, their derivatives, the parameters (inputs, calculated ones, the others) and
    the outputs of ``lay`` with ``fmucore.h``'s value references, as the FMI ``fmi`` model
    description declares them."""
    ny, npar = len(lay.states), len(lay.parameters)
    rows = [Variable(name, i, "local", "continuous", "state", float(start), unit,
                     initial="approx" if computed(lay, i) else "exact")
            for i, (name, start, unit) in enumerate(zip(lay.states, lay.state_start,
                                                        lay.state_units))]
    rows += [Variable(f"der({name})", ny + i, "local", "continuous",
                      f"the derivative of {name}", None, lay.derivative_units[i],
                      derivative=i + 1 if fmi == 2 else i)
             for i, name in enumerate(lay.states)]
    for j, (name, start, unit) in enumerate(zip(lay.parameters, lay.parameter_start,
                                                lay.parameter_units)):
        if name in lay.inputs:
            rows.append(Variable(name, 2 * ny + j, "input", "continuous", "input",
                                 float(start), unit))
        elif name in lay.derived:
            rows.append(Variable(name, 2 * ny + j, "calculatedParameter", "tunable",
                                 "computed from the other parameters", None, unit,
                                 initial="calculated"))
        else:
            rows.append(Variable(name, 2 * ny + j, "parameter", "tunable", "parameter",
                                 float(start), unit, initial="exact" if fmi == 2 else None))
    rows += [Variable(name, 2 * ny + npar + k, "output", "continuous", "output", unit=unit)
             for k, (name, unit) in enumerate(zip(lay.outputs, lay.output_units))]
    return rows


def model_description(lay: Layout, guid: str, files: tuple[str, ...]) -> str:
    """``modelDescription.xml`` of the FMU (FMI 2.0 §2.2): both interfaces, the variables in
    the value-reference order of ``fmu.c``, the model structure."""
    ny, npar = len(lay.states), len(lay.parameters)
    rows = [variable_element(v, 2) for v in model_variables(lay, 2)]
    first_out = 2 * ny + npar + 1
    outputs = "".join(f'      <Unknown index="{first_out + k}"/>\n'
                      for k in range(len(lay.outputs)))
    derivatives = "".join(f'      <Unknown index="{ny + i + 1}"/>\n' for i in range(ny))
    initial = "".join(f'      <Unknown index="{vr + 1}"/>\n' for vr in initial_unknowns(lay))
    unit_block = _unit_definitions(lay)
    source_files = ("      <SourceFiles>\n" + "".join(f"        <File name={quoteattr(f)}/>\n"
                                                       for f in files)
                    + "      </SourceFiles>\n")
    ident = quoteattr(lay.prefix)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<fmiModelDescription fmiVersion="2.0" modelName={quoteattr(lay.name)} '
        f'guid="{guid}" generationTool="lagsim {__version__}" '
        f'variableNamingConvention="flat" '
        f'numberOfEventIndicators="{int(bool(lay.stop_when))}">\n'
        f"  <ModelExchange modelIdentifier={ident} canGetAndSetFMUstate=\"true\" "
        f"canSerializeFMUstate=\"true\" canNotUseMemoryManagementFunctions=\"true\" "
        f"providesDirectionalDerivative=\"true\">\n"
        f"{source_files}  </ModelExchange>\n"
        f"  <CoSimulation modelIdentifier={ident} canHandleVariableCommunicationStepSize="
        f"\"true\" canGetAndSetFMUstate=\"true\" canSerializeFMUstate=\"true\" "
        f"canNotUseMemoryManagementFunctions=\"true\" providesDirectionalDerivative=\"true\">\n"
        f"{source_files}  </CoSimulation>\n"
        f"{unit_block}"
        f'  <DefaultExperiment startTime="{lay.t0!r}" stopTime="{lay.t_end!r}" '
        f'tolerance="1e-10"/>\n'
        "  <ModelVariables>\n" + "\n".join(rows) + "\n  </ModelVariables>\n"
        "  <ModelStructure>\n"
        + (f"    <Outputs>\n{outputs}    </Outputs>\n" if outputs else "")
        + f"    <Derivatives>\n{derivatives}    </Derivatives>\n"
        f"    <InitialUnknowns>\n{initial}    </InitialUnknowns>\n"
        "  </ModelStructure>\n</fmiModelDescription>\n")


STOP_WHEN = "stop_when"
"""The FMI 3.0 variable of the ``--stop-when`` event indicator."""


def model_description3(lay: Layout, token: str) -> str:
    """``modelDescription.xml`` of the FMI 3.0 FMU (FMI 3.0 §2.4): both interfaces, the
    variables with ``fmucore.h``'s value references, ``time`` (the independent variable) and
    the event indicator (``--stop-when``) after the outputs, the model structure."""
    ny, npar = len(lay.states), len(lay.parameters)
    first_out, time_vr = 2 * ny + npar, 2 * ny + npar + len(lay.outputs)
    rows = [variable_element(v, 3) for v in (
        Variable("time", time_vr, "independent", "continuous", "time", unit=lay.time_unit),
        *model_variables(lay, 3),
        *([Variable(STOP_WHEN, time_vr + 1, "local", "continuous",
                    f"the event indicator {lay.stop_when}")] if lay.stop_when else []))]

    def refs(tag: str, vrs: range | list[int]) -> str:
        return "".join(f'    <{tag} valueReference="{vr}"/>\n' for vr in vrs)

    outputs = range(first_out, first_out + len(lay.outputs))
    derivatives = range(ny, 2 * ny)
    initial = initial_unknowns(lay)
    ident = quoteattr(lay.prefix)
    common = ('canGetAndSetFMUState="true" canSerializeFMUState="true" '
              'providesDirectionalDerivatives="true"')
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<fmiModelDescription fmiVersion="3.0" modelName={quoteattr(lay.name)} '
        f'instantiationToken="{token}" generationTool="lagsim {__version__}" '
        f'variableNamingConvention="flat">\n'
        f"  <ModelExchange modelIdentifier={ident} {common}/>\n"
        f"  <CoSimulation modelIdentifier={ident} {common} "
        f'canHandleVariableCommunicationStepSize="true" canReturnEarlyAfterIntermediateUpdate='
        f'"false" mightReturnEarlyFromDoStep="true"/>\n'
        f"{_unit_definitions(lay)}"
        f'  <DefaultExperiment startTime="{lay.t0!r}" stopTime="{lay.t_end!r}" '
        f'tolerance="1e-10"/>\n'
        "  <ModelVariables>\n" + "\n".join(rows) + "\n  </ModelVariables>\n"
        "  <ModelStructure>\n" + refs("Output", outputs)
        + refs("ContinuousStateDerivative", derivatives) + refs("InitialUnknown", initial)
        + refs("EventIndicator", [time_vr + 1] if lay.stop_when else [])
        + "  </ModelStructure>\n</fmiModelDescription>\n")


def build_description(lay: Layout, c_files: tuple[str, ...]) -> str:
    """``sources/buildDescription.xml`` of the FMI 3.0 FMU (FMI 3.0 §2.5.1.5): the C99 sources
    to compile into the binary."""
    files = "".join(f"        <SourceFile name={quoteattr(f)}/>\n" for f in c_files)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<fmiBuildDescription fmiVersion="3.0">\n'
            f"  <BuildConfiguration modelIdentifier={quoteattr(lay.prefix)}>\n"
            '    <SourceFileSet language="C99">\n'
            f"{files}    </SourceFileSet>\n  </BuildConfiguration>\n</fmiBuildDescription>\n")


def build(cc: str, files: dict[str, str], identifier: str) -> bytes:
    """The shared library of the FMU built from ``files`` (name → text) with ``cc``; an
    :class:`InputError` with the compiler's last line when it fails."""
    with tempfile.TemporaryDirectory(prefix="lagsim-fmu-") as work:
        folder = Path(work)
        for name, text in files.items():
            (folder / name).write_text(text, encoding="utf-8")
        target = folder / f"{identifier}{_suffix()}"
        sources_c = [str(folder / n) for n in files if n.endswith(".c") and n != "main.c"]
        try:
            done = subprocess.run([cc, "-shared", "-fPIC", "-O2", "-w", f"-I{folder}", "-o",
                                   str(target), *sources_c, "-lm"], capture_output=True,
                                  check=False, timeout=600)
        except (OSError, subprocess.SubprocessError) as exc:
            raise InputError(f"the C compiler {cc!r} could not be run: {exc}") from exc
        if done.returncode != 0 or not target.exists():
            lines = (done.stderr or done.stdout).decode("utf-8", "replace").strip().splitlines()
            raise InputError(f"the C compiler {cc!r} failed on the FMU's sources: "
                             f"{lines[-1] if lines else done.returncode}")
        return target.read_bytes()


def write_fmu(spec: SystemSpec, model: Model, path: str | Path, force: bool = False,
              options: SimulateOptions | None = None,
              report: Callable[[str], None] | None = None, fmi: int = 2) -> Path:
    """Write the FMI ``fmi`` (2 or 3) FMU of ``model`` to ``path`` (``.fmu``) through the
    project's one writer (:func:`lagsim.output.io.open_output`); an existing file is kept unless
    ``force``. Without a C compiler the FMU holds its sources only, and ``report`` says so in
    one line."""
    if fmi not in (2, 3):
        raise InputError(f"--fmi {fmi} is not an FMI version lagsim exports (2 or 3)",
                         Location("--fmi"))
    if Path(path).exists() and not force:
        raise InputError(f"cannot write {str(path)!r}: it exists; give --force to replace it",
                         Location("-o"))
    target = check_output(path, "-o", formats=("fmu",), binary=True)
    lay, files = sources(spec, model, options)
    files = {k: v for k, v in files.items() if k != "main.c"}
    files.update({h: template(h) for h in (HEADERS if fmi == 2 else HEADERS3)})
    files["fmucore.h"] = csource.fill(template("fmucore.h"), P=lay.prefix, NAME=lay.name,
                                      VERSION=__version__)
    guid = "{" + hashlib.sha256("\0".join(f"{k}\0{v}" for k, v in sorted(files.items()))
                                .encode()).hexdigest()[:32] + "}"
    wrapper = "fmu.c" if fmi == 2 else "fmu3.c"
    files[wrapper] = csource.fill(template(wrapper), P=lay.prefix, NAME=lay.name,
                                  VERSION=__version__, GUID=guid)
    c_files = tuple(n for n in files if n.endswith(".c"))
    folder = platform_folder() if fmi == 2 else platform_tuple()
    cc = compiler()
    binary = None
    if cc is None:
        (report or (lambda _m: None))(
            f"no C compiler (cc, gcc or $CC) found; wrote a source-only FMU without "
            f"binaries/{folder}: build sources/{' '.join(c_files)} into "
            f"{lay.prefix}{_suffix()}")
    else:
        binary = build(cc, files, lay.prefix)
    description = (model_description(lay, guid, c_files) if fmi == 2
                   else model_description3(lay, guid))
    with open_output(target, binary=True) as out, zipfile.ZipFile(
            out, "w", zipfile.ZIP_DEFLATED) as fmu:
        fmu.writestr("modelDescription.xml", description)
        for name, text in files.items():
            fmu.writestr(f"sources/{name}", text)
        if fmi == 3:
            fmu.writestr("sources/buildDescription.xml", build_description(lay, c_files))
        if binary is not None:
            fmu.writestr(f"binaries/{folder}/{lay.prefix}{_suffix()}", binary)
    return target.path
