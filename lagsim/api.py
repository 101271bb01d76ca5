"""The Python API of lagsim (issue 13): load a system, derive, simulate, read, plot.

The public names are re-exported by :mod:`lagsim` (its ``__all__``); docs/api.md is the manual.
The command line is built on the same functions: ``lagsim simulate`` is :func:`open_system` and
:func:`run`, ``lagsim derive`` is :func:`open_system` and :func:`derive_forms`, ``lagsim check``,
``equilibria`` and ``modes`` are the methods of :class:`System` (lagsim/cli/commands/), so the
checks, messages and locations are the same. Where the command line names a flag
(``--rtol``, ``--set``, ``--init``), the API names its keyword (``rtol``, ``parameters``,
``initial``).

One compile per model structure: parameter values are run-time inputs of the compiled code
(docs/architecture.md, "compile.py"), so a :class:`System` compiles its model once and rebinds
it to each run's parameter values with
:meth:`~lagsim.numeric.compile.NumericSystem.with_parameters`.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import math
import numbers
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast, overload

from lagsim.errors import InputError, LagsimError, Location
from lagsim.spec import options as run_options
from lagsim.spec.options import OPTIONS

if TYPE_CHECKING:
    from lagsim.analysis.lyapunov import LyapunovReport
    from lagsim.numeric.compile import NumericSystem
    from lagsim.output.trajectory import Trajectory
    from lagsim.run.session import Runs
    from lagsim.spec.system import SystemSpec
    from lagsim.sweep.frame import SweepFrame
    from lagsim.symbolic.forms import Form
    from lagsim.symbolic.model import Model
    from lagsim.viz.figures import Figure

TEXT_LABEL = "<string>"
"""How messages name a system given as YAML text (as Python names code given as a string)."""

class LagsimWarning(UserWarning):
    """What the command line prints on stderr as ``lagsim: ...`` (an initial value moved onto
    the constraints, auto's choice of formulation, a singular mass matrix in ``derive``)."""


_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def _warn(message: str) -> None:
    """Warn at the caller's line (the first frame outside lagsim's own files), with the API's
    keywords where the command line would name flags (:meth:`~lagsim.spec.options.Naming.say`)."""
    message = run_options.WORDING.get().say(message)
    frame, level = sys._getframe(1), 2
    while frame.f_back is not None and os.path.abspath(frame.f_code.co_filename).startswith(
            _PACKAGE + os.sep):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, LagsimWarning, stacklevel=level)


MAX_BUDGET = 86400.0
"""The largest ``budget`` (``--budget``): one day of CPU."""
MAX_WIDTH = 100_000
"""The largest ``width`` (``--width``)."""


def _text_arg(value: Any, keyword: str) -> str:
    """``value`` of the keyword ``keyword``, which must be a string."""
    if not isinstance(value, str):
        raise TypeError(f"{keyword} must be a string, not {type(value).__name__}")
    return value


def _switch_arg(value: Any, keyword: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{keyword} must be True or False, not {value!r}")
    return value


@overload
def _number_arg(value: None, keyword: str, low: float = ..., high: float = ...,
                unit: str = ...) -> None: ...
@overload
def _number_arg(value: float, keyword: str, low: float = ..., high: float = ...,
                unit: str = ...) -> float: ...
def _number_arg(value: Any, keyword: str, low: float = -math.inf, high: float = math.inf,
                unit: str = "") -> float | None:
    """``value`` of the keyword ``keyword`` as a float: None stays None, a number must be finite
    and within [low, high] (as the command line's flag checks it)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{keyword} must be a number, not {type(value).__name__}")
    try:
        number = float(value)
    except OverflowError:
        number = math.copysign(math.inf, value)
    if not math.isfinite(number) or not low <= number <= high:
        within = f" between {low:g} and {high:g}" if math.isfinite(low + high) else ""
        raise InputError(f"{keyword} must be a finite number{within}"
                         f"{' ' + unit if unit else ''}, not {value!r}")
    return number


def _whole_arg(value: Any, keyword: str, low: int, high: int, unit: str) -> int | None:
    """``value`` of the keyword ``keyword``: None, or a whole number within [low, high]."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{keyword} must be a whole number, not {type(value).__name__}")
    if not low <= int(value) <= high:
        raise InputError(f"{keyword} must be between {low} and {high} {unit}, not {value!r}")
    return int(value)


def _mapping_arg(value: Any, keyword: str) -> Mapping[str, Any] | None:
    if value is not None and not isinstance(value, Mapping):
        raise TypeError(f"{keyword} must be a mapping of name to value, not "
                        f"{type(value).__name__}")
    return value


def _worded(error: LagsimError, keywords: bool) -> LagsimError:
    """With ``keywords``, ``error`` worded for the API: each command-line flag its message or
    location names (``--set``, ``--rtol``) named as the API's keyword (``parameters``,
    ``rtol``) by :data:`lagsim.spec.options.WORDING` (unless the command line runs the API);
    else ``error`` itself."""
    wording = run_options.WORDING.get()
    if not keywords or not wording.keywords:
        return error
    return error.reworded(wording.say)


@contextlib.contextmanager
def _keyword_errors(keywords: bool) -> Iterator[None]:
    """With ``keywords``, lagsim's errors worded for the API (:func:`_worded`)."""
    try:
        yield
    except LagsimError as error:
        worded = _worded(error, keywords)
        if worded is error:
            raise
        raise worded from None


_Call = TypeVar("_Call", bound=Callable[..., Any])


def _keywords(function: _Call) -> _Call:
    """``function``, a public entry of the API, raising its errors worded for the API
    (:func:`_worded`; a plain ``try``, which costs less than a context manager per call)."""
    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except LagsimError as error:
            worded = _worded(error, True)
            if worded is error:
                raise
            raise worded from None
    return cast(_Call, call)


def _is_text(source: str) -> bool:
    """Whether ``source`` is YAML text rather than a path or a bundled name: an existing file is
    a path; otherwise a string with a line break, or one that starts as a YAML flow mapping
    (``{``), is text (no system fits on one line in block style)."""
    if "\n" in source or "\r" in source:
        return True
    with contextlib.suppress(OSError, ValueError):
        if os.path.exists(source):
            return False
    return source.lstrip().startswith("{")


def _read(source: str | os.PathLike[str]) -> tuple[str, str, str]:
    """(text, label, stem) of a path, a bundled name or YAML text."""
    from lagsim.spec.system import read_source

    if isinstance(source, os.PathLike):
        return read_source(Path(source))
    if not isinstance(source, str):
        raise TypeError(f"source must be a path, a bundled system's name or YAML text, not "
                        f"{type(source).__name__}")
    if _is_text(source):
        return source, TEXT_LABEL, "system"
    return read_source(source)


class Equations(str):
    """What :meth:`System.derive` returns for ``format="text"`` or ``"latex"``: the string
    ``lagsim derive`` prints, which a notebook displays typeset (:meth:`_repr_latex_`, the
    ``latex`` rendering of the same forms without its ``%`` comment lines)."""

    _forms: list[Form]
    _model: Model

    @classmethod
    def of(cls, text: str, forms: list[Form], model: Model) -> Equations:
        made = cls(text)
        made._forms, made._model = forms, model
        return made

    def _repr_latex_(self) -> str:
        from lagsim.symbolic.render import render

        latex = render(self._forms, "latex", self._model)
        return "\n".join(line for line in latex.splitlines() if not line.lstrip().startswith("%"))


class System:
    """A loaded, validated system: what ``lagsim`` reads from one YAML file.

    Made by :func:`load`. ``spec`` is the validated file (:class:`lagsim.spec.system.SystemSpec`),
    ``model`` its symbolic model (:class:`lagsim.symbolic.model.Model`, built on first use); both
    are what lagsim's analysis functions take, ``f(system.spec, system.model)``.
    """

    def __init__(self, spec: SystemSpec, text: str, label: str, stem: str,
                 parameters: Mapping[str, float], initial: Mapping[str, float]) -> None:
        self.spec = spec
        self._text, self._label, self._stem = text, label, stem
        self._parameters = dict(parameters)
        self._initial = dict(initial)
        self._model: Model | None = None
        self._tidy: Model | None = None
        self._numeric: NumericSystem | None = None
        self._runs: Runs | None = None
        """The runs kept for the next :meth:`simulate` with the same options
        (:class:`lagsim.run.session.Runs`: bounded, keyed by this System's spec, the
        resolved options and the report), made at the first run; a run with ``parameters`` or
        ``initial`` (a spec of its own) is not kept."""

    def __repr__(self) -> str:
        return (f"<lagsim.System {self.name!r}: coordinates {', '.join(self.coordinates)}; "
                f"parameters {self.parameters}>")

    def _repr_html_(self) -> str:
        """A notebook's view: the summary ``lagsim check`` prints (:meth:`check`)."""
        from html import escape

        return (f"<p><b>lagsim.System {escape(self.name)}</b></p>"
                f"<pre>{escape(self.check().to_text())}</pre>")

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def coordinates(self) -> tuple[str, ...]:
        return self.spec.coordinates

    @property
    def parameters(self) -> dict[str, float]:
        """The parameter values, by name."""
        return self.spec.parameter_values

    @property
    def initial(self) -> dict[str, float]:
        """The initial values the file (or :func:`load`) sets, by coordinate or velocity."""
        return dict(self.spec.initial)

    @property
    def model(self) -> Model:
        """The symbolic model (seed 001 §10.6–10.7): L, M, F, A, b as symengine objects."""
        if self._model is None:
            from lagsim.symbolic.model import build_model

            self._model = build_model(self.spec)
        return self._model

    @_keywords
    def derive(self, form: str = "lagrange", format: str | None = "text",
               simplify: bool = False, budget: float | None = None,
               width: int | None = None,
               steady: Mapping[str, float] | str | None = None) -> Any:
        """The equations of motion in ``form``, as ``lagsim derive --form FORM --format FORMAT``
        prints them: ``format`` is ``text`` or ``latex`` (the printed string, an
        :class:`Equations` that a notebook shows typeset), ``json`` (the JSON document as a
        dict: ``json.dumps(d, indent=2, ensure_ascii=False)`` is what the CLI prints), or None
        for the
        :class:`lagsim.symbolic.forms.Form` object itself (its ``items`` are SymPy values; a list of
        forms for ``form="all"``). Forms: ``lagrange``, ``matrix``, ``dae``, ``index1``,
        ``udwadia-kalaba``, ``reduced``, ``linear``, ``hamilton``, or ``all``. ``budget`` and
        ``width`` are ``--budget`` (CPU seconds for tidying) and ``--width`` (0: no wrap);
        ``steady`` is ``--steady`` (the linear form about a steady motion, as in :meth:`modes`)."""
        from lagsim.symbolic.render import FORMATS

        _text_arg(form, "form")
        _switch_arg(simplify, "simplify")
        budget = _number_arg(budget, "budget", 0.0, MAX_BUDGET, "seconds of CPU")
        width = _whole_arg(width, "width", 0, MAX_WIDTH, "characters (0: no wrap)")
        if format is not None and format not in FORMATS:
            raise InputError(f"format must be one of {', '.join(FORMATS)} or None, not "
                             f"{format!r}")
        model, forms = derive_forms(self, form, simplify, warn=_warn,
                                    budget=budget, steady=steady)
        if format is None:
            return forms if form == "all" else forms[0]
        from lagsim.symbolic.render import document, render

        if format == "json":
            return document(forms, model)
        return Equations.of(render(forms, format, model, width), forms, model)

    @_keywords
    def simulate(self, *, parameters: Mapping[str, float] | None = None,
                 initial: Mapping[str, float] | None = None, **options: Any) -> Trajectory:
        """Integrate the system (``lagsim simulate``) and return the :class:`Trajectory`.

        ``parameters`` and ``initial`` replace values of the file for this run only (as
        ``--set`` and ``--init``); every other keyword is an option of a run, named and checked
        as in the table lagsim/spec/options.py (the options are listed below); an option left out
        takes the file's ``simulate:`` value, else its default. Bad input raises
        :class:`lagsim.InputError`, a failed run :class:`lagsim.IntegrationError` (its
        ``partial`` is the trajectory up to the failure). What the command line prints on stderr
        comes as a :class:`LagsimWarning`.
        """
        return run(self, options, keywords=True, parameters=_mapping_arg(parameters, "parameters"),
                   initial=_mapping_arg(initial, "initial"), report=_warn)

    @_keywords
    def export_c(self, folder: str | os.PathLike[str], *, force: bool = False,
                 flags: Mapping[str, Any] | None = None) -> tuple[Path, ...]:
        """Write the system as standalone C into ``folder`` (``lagsim export --c``): the header
        ``<name>.h``, ``<name>.c`` and an example ``main.c``; the paths written. ``flags`` are
        run options (``formulation``, ``stabilize``, ``baumgarte``, ``t_end``, …) over the
        file's ``simulate:`` block; an existing folder is kept unless ``force``
        (:func:`lagsim.export.ccode.write_c`)."""
        from lagsim.export.ccode import export_options, write_c
        from lagsim.output.io import file_name

        options = export_options(self.spec, flags)
        return write_c(self.spec, self.model, file_name(folder, "folder"), force, options)

    @_keywords
    def export_fmu(self, path: str | os.PathLike[str], *, force: bool = False,
                   flags: Mapping[str, Any] | None = None,
                   report: Callable[[str], None] | None = None, fmi: int = 2) -> Path:
        """Write the system as an FMI 2.0 (``fmi=3``: 3.0) FMU for Model Exchange and
        Co-Simulation (``lagsim export --fmu [--fmi 3]``); its path. ``flags`` as in
        :meth:`export_c`; an existing file is kept unless ``force``; ``report`` (default a
        :class:`LagsimWarning`) hears the note of a source-only FMU when no C compiler is found
        (:func:`lagsim.export.fmu.write_fmu`)."""
        from lagsim.export.ccode import export_options
        from lagsim.export.fmu import write_fmu
        from lagsim.output.io import file_name

        options = export_options(self.spec, flags)
        return write_fmu(self.spec, self.model, file_name(path, "path"), force, options,
                         report or _warn, fmi)

    @_keywords
    def fit(self, data: str | os.PathLike[str], fit: Any, *, observe: Any = None,
            bounds: Mapping[str, tuple[float, float]] | None = None,
            parameters: Mapping[str, float] | None = None,
            initial: Mapping[str, float] | None = None, max_runs: int = 200,
            weights: Any = None, sigma: Any = None, starts: Any = 1, seed: Any = 0,
            **options: Any) -> Any:
        """Fit the parameters and initial values named in ``fit`` (a list or ``"l,c"``) to the
        columns ``observe`` (default all but ``t``) of the CSV ``data`` (``lagsim fit``), by
        least squares with the exact sensitivities as the Jacobian, within ``bounds``
        (name → (low, high)); ``options`` are run options as in :meth:`simulate` (the data start
        at or after the run's ``t_start``, where the initial values hold). Returns a
        :class:`lagsim.analysis.fit.FitReport` (``to_text()``, ``to_dict()``); a fit that does
        not converge in ``max_runs`` runs raises :class:`lagsim.analysis.fit.FitError` with
        the best point so far. ``weights`` (column → relative weight) or ``sigma`` (column →
        measurement standard deviation, every observed column), ``starts`` and ``seed`` are
        ``lagsim fit``'s (:data:`lagsim.spec.options.FIT_OPTIONS`)."""
        return fit_system(self, data, fit, observe, bounds or {}, options,
                          parameters=_mapping_arg(parameters, "parameters"),
                          initial=_mapping_arg(initial, "initial"), report=_warn,
                          max_runs=_whole_arg(max_runs, "max_runs", 1, 100_000, "runs") or 200,
                          fit_options={"weights": weights, "sigma": sigma, "starts": starts,
                                       "seed": seed})

    def sweep(self, **keywords: Any) -> SweepFrame:
        """Many runs of this system, as ``lagsim sweep``: :func:`sweep` with this system (the
        table as a ``pandas.DataFrame`` whose ``to_xarray()`` has one dimension per swept
        name). A method, because ``lagsim.sweep`` is the name of the package of the sweep
        engine."""
        return sweep(self, **keywords)

    @_keywords
    def check(self) -> Any:
        """What the system is (``lagsim check``): degrees of freedom, redundant constraints,
        the integrability of each velocity constraint and the conserved quantities, as a
        :class:`lagsim.analysis.check.CheckReport` (``to_text()``, ``to_dict()``)."""
        from lagsim.analysis.check import check_system

        return check_system(self.spec, self.model)

    @_keywords
    def equilibria(self) -> Any:
        """The rest states (``lagsim equilibria``), each with its residual and stability, as a
        :class:`lagsim.analysis.equilibria.EquilibriaReport` (``to_text()``, ``to_dict()``)."""
        from lagsim.analysis.equilibria import find_equilibria

        return find_equilibria(self.spec, self.model)

    @_keywords
    def modes(self, at: Mapping[str, float] | str | None = None,
              steady: Mapping[str, float] | str | None = None) -> Any:
        """The normal modes about an equilibrium (``lagsim modes``; ``at`` as ``--at``, default
        the equilibrium nearest the initial state), as a
        :class:`lagsim.analysis.modes.ModesReport`; about a steady motion (``steady`` as
        ``--steady``: coordinate → value and ``<coordinate>_dot`` → rate, or the file's
        ``steady:``), as a :class:`lagsim.analysis.steady.SteadyModesReport` whose
        ``eigenvalues`` are those of the reduced state matrix."""
        from lagsim.analysis.modes import normal_modes

        if steady is not None and not isinstance(steady, (str, Mapping)):
            raise TypeError(f"steady must be a mapping of coordinate or velocity to value, a "
                            f"text such as 'psi_dot=30', or None, not {type(steady).__name__}")
        if isinstance(steady, Mapping):
            steady = {_text_arg(name, "a key of steady"): _number_arg(value, f"steady[{name!r}]")
                      for name, value in steady.items()}

        if at is not None and not isinstance(at, (str, Mapping)):
            raise TypeError(f"at must be a mapping of coordinate to value, a text such as "
                            f"'theta=0', or None, not {type(at).__name__}")
        if isinstance(at, Mapping):
            at = {_text_arg(name, "a key of at"): _number_arg(value, f"at[{name!r}]")
                  for name, value in at.items()}
        return normal_modes(self.spec, self.model, at=at, steady=steady)

    @_keywords
    def lqr(self, at: Mapping[str, float] | str | None = None, Q: Any = None,
            R: Any = None) -> Any:
        """The linear-quadratic regulator about an equilibrium (``lagsim lqr``; ``at`` as in
        :meth:`modes`, ``Q`` and ``R`` as ``--Q`` and ``--R``: diagonal weights, a list in the
        order of the state or a mapping name → weight), as a
        :class:`lagsim.analysis.lqr.LqrReport`."""
        from lagsim.analysis.lqr import design

        if isinstance(at, Mapping):
            at = {_text_arg(name, "a key of at"): _number_arg(value, f"at[{name!r}]")
                  for name, value in at.items()}
        return design(self.spec, self.model, at, Q, R)

    @_keywords
    def lyapunov(self, t_end: float = 1000.0, transient: float = 0.0, renormalize: float = 1.0,
                 largest: bool = False, starts: int = 1, seed: int = 0,
                 perturbation: float = 1e-6) -> Any:
        """The Lyapunov spectrum from the initial state (``lagsim lyapunov``), on the constraint
        manifold for a constrained system, with the spread over ``starts`` initial states
        (the file's and ``starts`` − 1 moved by ``perturbation``, drawn with ``seed``), as a
        :class:`lagsim.analysis.lyapunov.LyapunovReport`."""
        from lagsim.analysis.lyapunov import MAX_STARTS, spectrum

        count = _whole_arg(starts, "starts", 1, MAX_STARTS, "starts")
        drawn = _whole_arg(seed, "seed", 0, 2**63 - 1, "")
        if count is None or drawn is None:
            raise TypeError("starts and seed must be whole numbers, not None")
        model, numeric = _compiled(self)
        return spectrum(self.spec, model, numeric,
                        _number_arg(t_end, "t_end"), _number_arg(transient, "transient"),
                        _number_arg(renormalize, "renormalize"), _switch_arg(largest, "largest"),
                        starts=count, seed=drawn,
                        perturbation=_number_arg(perturbation, "perturbation"))


def _options_doc() -> str:
    """The options of :meth:`System.simulate`, from the table, for ``help()``."""
    lines = [f"{row.name}: {row.doc or row.help_text()}"
             + ("" if row.default is None else f" (default {row.default!r})") for row in OPTIONS]
    return "\n        Options:\n\n" + "".join(f"            {line}\n" for line in lines)


def _simulate_signature() -> inspect.Signature:
    """``simulate``'s signature with one keyword per row of the options table, so that help()
    and notebooks list them (each defaults to None: "not given")."""
    keyword = inspect.Parameter.KEYWORD_ONLY
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
              inspect.Parameter("parameters", keyword, default=None,
                                annotation="Mapping[str, float] | None"),
              inspect.Parameter("initial", keyword, default=None,
                                annotation="Mapping[str, float] | None")]
    params += [inspect.Parameter(row.name, keyword, default=None) for row in OPTIONS]
    return inspect.Signature(params, return_annotation="Trajectory")


System.simulate.__signature__ = _simulate_signature()  # type: ignore[attr-defined]
System.simulate.__doc__ = (System.simulate.__doc__ or "") + _options_doc()


def open_system(source: str | os.PathLike[str], parameters: Mapping[str, float] | None = None,
                initial: Mapping[str, float] | None = None, api: bool = False) -> System:
    """Read and validate ``source`` (a path, a bundled system's name or ``-`` for stdin) with
    parameter and initial values replaced; the one loader of the API and the CLI. ``api``: the
    Python API's reading, where ``source`` may also be YAML text (:func:`load`) and errors name
    the keywords instead of ``--set``/``--init``."""
    from lagsim.spec.system import read_source

    text, label, stem = _read(source) if api else read_source(
        Path(source) if isinstance(source, os.PathLike) else source)
    with _keyword_errors(api):
        spec = _validated(text, label, stem, parameters, initial)
    return System(spec, text, label, stem, parameters or {}, initial or {})


SPEC_FORMAT = "lagsim validated spec 1"
"""The first part of a validated spec's cache key: changed when what is stored changes."""
REREAD = "reading the file again"
"""What is done instead of using a validated spec's entry that fails the checks."""


@functools.cache
def _spec_stamp() -> bytes:
    """What a spec parsed by this lagsim depends on besides its arguments: the text of
    lagsim/spec/*.py, errors.py, naming.py and records.py (their bytes hashed, not their times:
    a checkout resets those), and the versions of Python, SymEngine and PyYAML (the text of
    its ``__init__``, which holds its version, found without importing it). NumPy, which
    checks a ``matrix`` orientation at seeded random states, is left out: it decides only
    whether a file is refused, and a refusal is never stored. Computed once a process: 0.7 to
    0.9 ms of a fresh one (16 files, 235 kB), measured 2026-12-04."""
    import hashlib
    import importlib.util

    import symengine

    found = importlib.util.find_spec("yaml")
    if found is None or found.origin is None:
        raise RuntimeError("PyYAML is not installed")
    spec = os.path.join(_PACKAGE, "spec")
    paths = [os.path.join(spec, name) for name in sorted(os.listdir(spec))
             if name.endswith(".py")]
    paths += [os.path.join(_PACKAGE, name) for name in ("errors.py", "naming.py", "records.py")]
    digest = hashlib.sha256(f"{sys.version}\0{symengine.__version__}".encode())
    for path in [*paths, found.origin]:
        with open(path, "rb", buffering=0) as handle:
            text = handle.read()
        name = os.path.basename(path).encode()
        digest.update(b"%d:%s%d:" % (len(name), name, len(text)))
        digest.update(text)
    return digest.digest()


def _spec_key(text: str, label: str, stem: str, parameters: Mapping[str, float] | None,
              initial: Mapping[str, float] | None) -> str | None:
    """The validated-spec cache key of :func:`lagsim.spec.system.parse_spec`'s arguments: a
    sha256 over :data:`SPEC_FORMAT`, :func:`_spec_stamp`, the text, label and stem, and each
    ``--set``/``--init`` value in its order with its type and ``repr`` (the text ``"1"`` and
    the number 1 are read differently); None, not to be cached, for a value that is not an
    ``int``, ``float`` or ``str`` (its ``repr`` need not tell two values apart)."""
    import hashlib

    parts = [SPEC_FORMAT, text, label, stem]
    for values in (parameters or {}, initial or {}):
        parts.append(str(len(values)))
        for name, value in values.items():
            if type(name) is not str or type(value) not in (int, float, str):
                return None
            parts += [name, type(value).__name__, repr(value)]
    digest = hashlib.sha256(_spec_stamp())
    for part in parts:
        data = part.encode("utf-8", "surrogatepass")
        digest.update(b"%d:" % len(data) + data)
    return digest.hexdigest()


def _validated(text: str, label: str, stem: str, parameters: Mapping[str, float] | None,
               initial: Mapping[str, float] | None) -> SystemSpec:
    """:func:`lagsim.spec.system.parse_spec` of these arguments, from the validated-spec cache
    when an entry of their key (:func:`_spec_key`) is there and passes the cache's checks
    (:func:`lagsim.numeric.cache.read_blob`): parse_spec is a pure function of them, so the
    entry is the spec it would give, without PyYAML or the checks (issue 31, "Start-up").
    Otherwise the text is parsed and the spec stored for the next run; a spec that cannot be
    stored is said once and the run goes on. A file that is refused stores nothing.

    The run that stores the spec goes on with the stored one, unpickled, as every later run
    does: SymEngine keeps the terms of a sum or product in the order they were made, which
    unpickling changes, and a sum evaluated in another order may differ in its last bit (the
    gyroscope's equilibrium residual, 2.2e-16 parsed and 1.7e-16 unpickled), so that the first
    run and the next would not compute alike."""
    import pickle

    from lagsim.numeric import cache
    from lagsim.spec import system as spec_system

    key = _spec_key(text, label, stem, parameters, initial)
    if key is not None:
        found = cache.read_blob(key, cache.SPEC, REREAD)
        if found is not None:
            where, data = found
            try:
                kept = pickle.loads(data)
            except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError,
                    ValueError) as exc:
                kept = exc
            if isinstance(kept, spec_system.SystemSpec):
                return kept
            cache.note_rejected(where, f"it does not hold a validated system ({kept!r})",
                                REREAD)
    spec = spec_system.parse_spec(text, label, stem, parameters, initial)
    if key is not None:
        try:
            data = pickle.dumps(spec, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError, RecursionError) as exc:
            cache.say_once("spec pickle", f"warning: the validated system cannot be kept in "
                           f"the cache ({exc}); each run reads its file again")
        else:
            cache.store_blob(key, cache.SPEC, data, cache.SPEC_KEEP)
            spec = pickle.loads(data)
    return spec


@_keywords
def load(source: str | os.PathLike[str], **parameters: float) -> System:
    """Load a system: a path to a YAML file, the name of a bundled system (``"pendulum"``, see
    ``lagsim systems``) or the YAML text itself (a string with a line break); ``parameters``
    replace the file's values (``load("pendulum", l=2.0)``, as ``--set l=2``).

    A path-like object is always a path; a string is a path when such a file exists, YAML text
    when it has a line break or starts with ``{``, else a path or a bundled name. Errors are
    :class:`lagsim.InputError` with the file, line and column the command line prints.
    """
    return open_system(source, parameters, api=True)


def _spec(system: System, parameters: Mapping[str, float] | None,
          initial: Mapping[str, float] | None, keywords: bool) -> SystemSpec:
    """The spec of one run: the file read again with ``parameters`` and ``initial`` replaced
    (so parameters defined from others, and initial values given by parameters, follow); with
    ``initial`` alone, the system's spec with those values put in as ``--init`` (the same spec,
    without reading the file again)."""
    if not parameters and not initial:
        return system.spec
    from lagsim.spec.system import parse_spec, with_initial

    with _keyword_errors(keywords):
        if not parameters:
            assert initial is not None
            return with_initial(system.spec, initial)
        return parse_spec(system._text, system._label, system._stem,
                          {**system._parameters, **(parameters or {})},
                          {**system._initial, **(initial or {})})


def as_system(system: System | str | os.PathLike[str], keyword: str = "system") -> System:
    """``system`` as a :class:`System`: a System itself, or a path, a bundled system's name or
    YAML text read as :func:`load` reads it; anything else is a TypeError naming ``keyword``.
    Every function of the API that takes a system takes it through here."""
    if isinstance(system, System):
        return system
    if isinstance(system, (str, os.PathLike)):
        return load(system)
    raise TypeError(f"{keyword} must be a lagsim.System, a path, a bundled system's name or YAML "
                    f"text, not {type(system).__name__}")


def _compiled(system: System) -> tuple[Model, NumericSystem]:
    """The model and compiled model of ``system``, compiled once and kept."""
    if system._numeric is None:
        from lagsim.numeric.compile import compile_model

        system._numeric = compile_model(system.model)
    return system.model, system._numeric


def _lqr_feedback(spec: Any, model: Any, options: Any) -> Any:
    """``--controller lqr`` (:func:`lagsim.analysis.lqr.feedback`), imported when asked for."""
    from lagsim.analysis.lqr import feedback

    return feedback(spec, model, options)


def run(system: System, given: Mapping[str, Any], keywords: bool = False,
        parameters: Mapping[str, float] | None = None,
        initial: Mapping[str, float] | None = None,
        report: Callable[[str], None] | None = None,
        progress: Callable[[float], None] | None = None, times: Any = None) -> Trajectory:
    """Simulate ``system`` with the options ``given`` (by option name, None meaning not given)
    merged over its file's ``simulate:`` block; the one run of the API and the CLI
    (:func:`lagsim.run.session.run_spec`). Options are named by their flag in errors, or by
    their keyword when ``keywords``; ``times`` are sample times other than the options'
    (increasing from the start time: ``lagsim fit`` samples at the data's times)."""
    from lagsim.run.session import Runs, run_spec

    spec = _spec(system, parameters, initial, keywords)
    if system._runs is None:
        system._runs = Runs()
    trajectory, _ = run_spec(spec, lambda: _compiled(system), given,
                             run_options.KEYWORDS if keywords else run_options.FLAGS,
                             report, progress, controller=_lqr_feedback, times=times,
                             runs=system._runs if spec is system.spec else None)
    if spec.units:
        from dataclasses import replace

        from lagsim.output.units import unit_columns

        units = unit_columns(dict(spec.units), spec.coordinates)
        trajectory = replace(trajectory, units=tuple(units.items()))
    return trajectory


def _names_arg(value: Any, label: str) -> tuple[str, ...]:
    parts = value.split(",") if isinstance(value, str) else list(value)
    names = tuple(str(p).strip() for p in parts)
    if not names or not all(names):
        raise InputError(f"{label} must name at least one parameter or initial value, got "
                         f"{value!r}")
    return names


def fit_system(system: System, data: str | os.PathLike[str], fit: Any, observe: Any,
               bounds: Mapping[str, tuple[float, float]], given: Mapping[str, Any],
               keywords: bool = True, parameters: Mapping[str, float] | None = None,
               initial: Mapping[str, float] | None = None,
               report: Callable[[str], None] | None = None, max_runs: int = 200,
               fit_options: Mapping[str, Any] | None = None) -> Any:
    """The one fit of the API and the CLI (:meth:`System.fit`, ``lagsim fit``): the data read
    and checked, each run through :func:`run` at the data's times with the sensitivities of the
    fitted names (notes of the first run only go to ``report``); ``fit_options`` the raw values
    of :data:`lagsim.spec.options.FIT_OPTIONS` by name (None: not given)."""
    from lagsim.analysis.fit import fit_spec

    how = run_options.KEYWORDS if keywords else run_options.FLAGS
    names = _names_arg(fit, how.flag("--fit"))
    spec = _spec(system, parameters, initial, keywords)
    observed = None if observe is None else _names_arg(observe, how.flag("--observe"))

    def runner(params: Mapping[str, float], inits: Mapping[str, float],
               options: Mapping[str, Any], times: Any, say: Callable[[str], None] | None
               ) -> Trajectory:
        return run(system, options, keywords, parameters={**(parameters or {}), **params},
                   initial={**(initial or {}), **inits}, report=say, times=times)

    return fit_spec(spec, data, names, observed, bounds, given, how, runner,
                    report=report, max_runs=max_runs, fit_options=fit_options)


def fitted_run(system: System, report: Any, given: Mapping[str, Any], keywords: bool = False,
               parameters: Mapping[str, float] | None = None,
               initial: Mapping[str, float] | None = None, samples: int = 501) -> Trajectory:
    """The run at a fit's estimates (:class:`lagsim.analysis.fit.FitReport`) from the start
    time to the data's last time, ``samples`` equally spaced samples: the curve ``lagsim fit
    --plot`` draws over the data."""
    from lagsim import naming

    spec = _spec(system, parameters, initial, keywords)
    state = naming.state(spec.coordinates)
    at = dict(zip(report.names, report.estimates))
    options = {k: v for k, v in given.items() if k != "sensitivities"}
    options["t_end"] = float(report.data.t[-1])
    options["samples"] = samples
    options.pop("dt", None)
    params = {**(parameters or {}), **{n: v for n, v in at.items() if n not in state}}
    inits = {**(initial or {}), **{n: v for n, v in at.items() if n in state}}
    return run(system, options, keywords, parameters=params, initial=inits)


def derive_forms(system: System, form: str, simplify: bool = False,
                 status: Callable[[str], None] | None = None,
                 warn: Callable[[str], None] | None = None,
                 budget: float | None = None,
                 steady: Mapping[str, float] | str | None = None
                 ) -> tuple[Model, list[Form]]:
    """The model to print and the forms ``form`` (a name of :data:`lagsim.symbolic.forms.FORMS` or
    ``all``) of ``system``; the one derivation of the API and the CLI. The model is tidied for
    printing (:func:`lagsim.symbolic.model.tidy_model`); the tidying of each form shares a CPU-time
    ``budget`` in seconds (default :data:`lagsim.symbolic.tidy.DEFAULT_SECONDS`, or
    :data:`lagsim.symbolic.tidy.SIMPLIFY_SECONDS` with ``simplify``, which also runs SymPy's
    simplify), past which expressions print as derived, and ``warn`` hears a note (issue 16 §4).
    ``status`` hears the stage, ``warn`` what the command line prints on stderr. The linear
    form is about the steady motion ``steady`` (``--steady``) or the file's ``steady:`` when
    either is given (:mod:`lagsim.analysis.steady`). Without constraints
    ``all`` leaves the Udwadia–Kalaba form out (there is nothing to constrain)."""
    from lagsim.symbolic import tidy
    from lagsim.symbolic.forms import FORMS
    from lagsim.symbolic.model import tidy_model

    status = status or (lambda _stage: None)
    warn = warn or (lambda _message: None)
    if form != "all" and form not in FORMS:
        from lagsim.spec.expressions import suggest

        choices = (*FORMS, "all")
        raise InputError(f"--form must be one of {', '.join(choices)}; {form!r} is not a known "
                         f"form{suggest(form, choices)}")
    if steady is not None and form not in ("linear", "all"):
        raise InputError(f"--steady is the steady motion of the linear form; --form {form} "
                         "does not linearize: give --form linear, or drop --steady",
                         Location("--steady"))
    spec = system.spec
    status(f"deriving {spec.name} ({len(spec.coordinates)} coordinates)")
    if system._tidy is None:
        system._tidy = tidy_model(system.model)
    model = system._tidy
    for name in model.singular_coordinates():
        warn(f"warning: the mass matrix is singular: the velocity of {name} appears nowhere "
             "in the kinetic energy; `lagsim simulate` will refuse this system")
    names = ([f for f in FORMS if model.m or f != "udwadia-kalaba"] if form == "all"
             else [form])
    forms = []
    q0 = dict(zip(spec.coordinates, spec.initial_state()[0]))

    def rest() -> object:
        from lagsim.analysis.modes import rest_linearization
        from lagsim.analysis.steady import steady_linearization, wants_steady

        if wants_steady(spec, steady):
            return steady_linearization(model, spec, steady)
        return rest_linearization(model, q0)

    provide: dict[str, Callable[[], object]] = {"q0": lambda: q0, "rest": rest}
    seconds = budget if budget is not None else (
        tidy.SIMPLIFY_SECONDS if simplify else tidy.DEFAULT_SECONDS)
    with tidy.budget(seconds, deep=simplify) as spent:
        for name in names:
            status(f"forming the {name} form")
            try:
                kind = FORMS[name]
                forms.append(kind(model, simplify, **{k: provide[k]() for k in kind.inputs}))
            except InputError as exc:
                if form != "all":
                    from lagsim.run.problem import SourceMap

                    raise SourceMap.of(spec).place(exc) from None
                warn(f"note: form {name} skipped: {exc.message}")
    if spent.stopped:
        warn(f"note: tidying stopped after its budget of {seconds:g} s CPU: {spent.stopped} "
             "step(s) left expressions as derived (equal, only longer); --budget SECONDS "
             "allows more")
    status("printing")
    return model, forms


@_keywords
def read_csv(path: str | os.PathLike[str]) -> Trajectory:
    """A CSV written by ``lagsim simulate`` (or :meth:`Trajectory.to_csv`) read back as a
    :class:`Trajectory`; ``-`` reads stdin. Errors are :class:`lagsim.InputError` at
    FILE:LINE:COL, as ``lagsim plot`` reports them."""
    from lagsim.output import io
    from lagsim.output.trajectory import Trajectory

    table = io.read_csv(Path(path) if isinstance(path, os.PathLike) else path)
    name = Path(table.source).stem if not table.source.startswith("<") else ""
    return Trajectory.from_columns(table.columns, table.data, name, table.source)


@_keywords
def plot(trajectory: Trajectory | LyapunovReport, kind: str = "overview",
         system: System | str | os.PathLike[str] | None = None,
         columns: list[str] | None = None, x: str | None = None, y: str | None = None,
         title: str | None = None, view: str | None = None) -> Figure:
    """The figure ``lagsim plot --kind KIND`` draws, as a matplotlib Figure (not shown; in a
    notebook it displays itself, ``fig.savefig(path)`` writes it). Kinds: ``overview``,
    ``time``, ``phase``, ``drift``, ``energy``, ``forces``, ``invariants`` (a run with
    ``invariants=True``), ``poincare`` (``x`` against ``y`` at the crossings of a run with
    ``section=``), ``path`` (which needs ``system`` for
    the masses' positions; in the plane gravity points down in, named under the title; on 3-D
    axes seen from ``view``, as ``--view`` takes it, for a system with 3-D bodies),
    ``lyapunov`` (the running estimates of a :meth:`System.lyapunov` report, given in place of
    the trajectory). ``columns``, ``x``, ``y`` choose columns for ``time`` and
    ``phase``.
    ``system`` is a :class:`System`, a path or a bundled system's name (:func:`as_system`);
    the axes carry the units of the file's ``units:`` (of ``system``, else those the run kept,
    as ``lagsim plot`` labels them). ``sweep`` is a kind of ``lagsim plot TABLE.csv`` only."""
    from lagsim.analysis.lyapunov import LyapunovReport
    from lagsim.output.io import Table
    from lagsim.output.units import Quantities
    from lagsim.viz import figures as plotting

    if isinstance(trajectory, LyapunovReport):
        if kind != "lyapunov":
            raise TypeError(f"a Lyapunov report is drawn by kind='lyapunov', not {kind!r}")
        columns_, rows = trajectory.trace_columns()
        return plotting.make_figure(Table(tuple(columns_), rows, trajectory.system),
                                    kind="lyapunov", title=title)
    table = Table(tuple(trajectory.columns), trajectory.as_array(),
                  trajectory.name or "<trajectory>")
    if kind == "poincare":
        from lagsim.viz.sweep_figures import make_figure

        return make_figure("poincare", None, x, y, title, table)
    path_xy = plane = None
    info = Quantities(units=dict(trajectory.units)) if trajectory.units else None
    if system is not None:
        system = as_system(system)
        from dataclasses import replace

        from lagsim.analysis.balance import check_parameters, table_with_work
        from lagsim.analysis.kinematics import quantities
        from lagsim.symbolic.invariants import energy_conserved

        model = system.model
        notes = [check_parameters(table, model, "in the system: load(FILE, NAME=VALUE)")]
        if kind in ("overview", "energy"):
            table, note = table_with_work(table, model)
            notes.append(note)
        for note in filter(None, notes):
            _warn(note)
        info = replace(quantities(system.spec, model),
                       energy_change=energy_conserved(model, model.substitutions()))
        if kind in ("overview", "drift"):
            from lagsim.analysis.roundoff import residual_floors

            info = replace(info, floors=residual_floors(model, table))
    if kind == "path":
        if system is None:
            raise InputError("kind='path' needs the system: plot(traj, kind='path', "
                             "system=system)")
        from lagsim.analysis.kinematics import gravity_vector, has_bodies, mass_points
        from lagsim.viz.views import parse_view

        if has_bodies(system.spec):
            from lagsim.viz.scene3d import path_figure, scene

            return path_figure(scene(system.spec, system.model, table), parse_view(view),
                               system.name if title is None else title)
        plane, path_xy = plotting.plane_paths(mass_points(system.model, table),
                                              gravity_vector(system.spec),
                                              None if view is None else parse_view(view))
    elif view is not None:
        raise InputError("view= applies to kind='path'")
    if title is None and system is not None:
        title = system.name
    return plotting.make_figure(table, kind=kind, columns=columns, x=x, y=y, title=title,
                                path_xy=path_xy, info=info, plane=plane)


def _sweep_items(value: Any, keyword: str, width: int) -> list[tuple[str, tuple[Any, ...]]]:
    """``{name: (a, b, ...)}`` of :func:`sweep`'s ``keyword``, each tuple ``width`` long (any
    length for ``width`` 0)."""
    if value is None:
        return []
    if not isinstance(value, Mapping):
        raise TypeError(f"{keyword} must be a mapping of name to values, not "
                        f"{type(value).__name__}")
    items = []
    for name, spec in value.items():
        _text_arg(name, f"a key of {keyword}")
        if isinstance(spec, (str, bytes)) or not hasattr(spec, "__iter__"):
            raise TypeError(f"{keyword}[{name!r}] must be a sequence of numbers, not "
                            f"{type(spec).__name__}")
        numbers = tuple(spec)
        if width and len(numbers) != width:
            raise InputError(f"{keyword}[{name!r}] must have {width} entries, got "
                             f"{len(numbers)}", Location(keyword))
        items.append((name, tuple(_number_arg(x, f"{keyword}[{name!r}]") for x in numbers)))
    return items


@_keywords
def sweep(system: System | str | os.PathLike[str], *,
          grid: Mapping[str, tuple[float, float, int]] | None = None,
          values: Mapping[str, Any] | None = None,
          random: Mapping[str, tuple[float, float]] | None = None, runs: int | None = None,
          seed: int = 0, summary: Any = (), scheduler: str | None = "synchronous",
          workers: int | None = None, parameters: Mapping[str, float] | None = None,
          initial: Mapping[str, float] | None = None, **options: Any) -> SweepFrame:
    """Simulate ``system`` once for every combination of the swept values, as ``lagsim sweep``
    (the same runs, bit for bit, and the same table), and return the table as a
    ``pandas.DataFrame``: ``run``, the swept values (an initial value ``theta`` as
    ``theta0``), the final state, ``max_residual_<c>``, the energy columns, ``stop_time``
    (with ``stop_when``), each summary, and ``error`` (empty for a run that succeeded; the
    run's numbers are then NaN).

    The frame is a :class:`lagsim.sweep.frame.SweepFrame`, a DataFrame whose ``to_xarray()``
    gives an ``xarray.Dataset`` with one dimension per ``grid`` or ``values`` name (its
    coordinate the values in the order given), one ``draw`` dimension for the ``random``
    draws, each other column a variable over them (NaN where a run failed) and the file's
    units in ``attrs`` (``pip install 'lagsim[xarray]'``). A frame derived from it (a
    selection, ``copy()``) is a plain DataFrame with pandas' own ``to_xarray``: its rows are
    no longer known to be the sweep's.

    ``grid={"theta": (0.1, 3, 50)}`` is ``--grid theta=0.1:3:50``; ``values={"l": [0.5, 1]}`` is
    ``--values``; ``random={"theta": (0, 1)}`` with ``runs`` and ``seed`` is ``--random``; they
    combine as a product (``grid``'s names, then ``values``', then the draws; the last varies
    fastest). ``summary`` is a list of ``--summary`` texts
    (``"amp=max(abs(theta))"``). ``scheduler`` is ``"synchronous"`` (this process, the
    default), None (``workers`` processes of this machine; without ``workers``, one per core,
    or none when the runs after run 0 are less work than starting them, as ``lagsim sweep``
    decides: :func:`lagsim.sweep.core.choose_engine`) or a Dask scheduler's address.
    Every other keyword is an option of :meth:`System.simulate`. pandas is needed
    (``pip install 'lagsim[pandas]'``)."""
    try:
        import pandas  # noqa: F401 - lagsim.sweep.frame subclasses its DataFrame
    except ImportError as exc:
        raise ImportError("lagsim.sweep needs pandas, which is not installed: pip install "
                          "'lagsim[pandas]' (or pip install pandas)") from exc
    from lagsim.sweep import core as sw
    from lagsim.sweep.frame import layout, sweep_frame
    from lagsim.sweep.setup import prepare

    system = as_system(system)
    parameters = dict(_mapping_arg(parameters, "parameters") or {})
    initial = dict(_mapping_arg(initial, "initial") or {})
    if isinstance(summary, str):
        summary = [summary]
    summaries = [_text_arg(raw, "summary") for raw in summary]
    if scheduler is not None:
        _text_arg(scheduler, "scheduler")
    run_count = _whole_arg(runs, "runs", 1, sw.MAX_RUNS, "runs")

    def axes() -> list[sw.Axis]:
        made = [sw.grid_axis(f"{name}={a!r}:{b!r}:{c!r}")
                for name, (a, b, c) in _sweep_items(grid, "grid", 3)]
        made += [sw.values_axis(f"{name}={','.join(map(repr, listed))}")
                 for name, listed in _sweep_items(values, "values", 0)]
        draws = _sweep_items(random, "random", 2)
        if draws or run_count is not None:
            made.append(sw.random_axis([f"{name}={a!r}:{b!r}" for name, (a, b) in draws],
                                       run_count, seed))
        if not made:
            raise InputError("nothing to sweep: give grid={name: (start, stop, count)}, "
                             "values={name: [v1, v2, ...]} or random={name: (low, high)} with "
                             "runs=N")
        if scheduler is not None and scheduler not in sw.LOCAL_SCHEDULERS:
            sw.scheduler_address(scheduler)
        return made

    with _keyword_errors(True):
        prepared = prepare(system._text, system._label, system._stem,
                           {**system._parameters, **parameters}, {**system._initial, **initial},
                           dict(options), axes, summaries, run_options.KEYWORDS)
    job = prepared.job.keyed()
    rows = sw.execute(job, prepared.plan, scheduler, workers)
    for index, row in enumerate(rows):
        for note in row.notes:
            _warn(f"run {index}: {note}")
    header, data, errors = prepared.table(job, rows)
    errors = [run_options.WORDING.get().say(error) for error in errors]
    shape = layout(prepared.plan, header, prepared.units(header), system.name)
    return sweep_frame(header, data, errors, shape)


__all__ = ["LagsimWarning", "System", "as_system", "derive_forms", "load", "open_system", "plot",
           "read_csv", "run", "sweep"]
