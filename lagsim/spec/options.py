"""Every option of a run declared once (issue 8 §2): name, type, default, validation, help.

:data:`OPTIONS` is the table. From it come the YAML keys a ``simulate:`` block may hold
(:data:`SIMULATE_KEYS`, read by :mod:`lagsim.spec.system`), the command-line flags of ``simulate``,
``plot`` and ``animate`` (built in :mod:`lagsim.cli.options` from :attr:`Option.flag` and
:meth:`Option.help_text`) and the frozen :class:`SimulateOptions` (one field per row).
Validation happens once, up front, in :meth:`SimulateOptions.resolve`, with messages that name
the option as the user wrote it (``--rtol`` or ``FILE:LINE:COL: simulate.rtol``), in the manner
of scipy's ``integrate/_ivp`` checks.

This module imports no numerics: the names of the methods, formulations and stabilizers are
declared in :mod:`lagsim.spec.choices` (the run layer maps each to its implementation,
:mod:`lagsim.run.registry`), so ``lagsim --help`` and ``lagsim derive`` stay fast.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import field
from typing import Any

from lagsim.errors import InputError, Location
from lagsim.records import record
from lagsim.spec import choices

Parser = Callable[[Any, str, Location | None], Any]


def _suggest(name: str, options: tuple[str, ...]) -> str:
    from lagsim.spec.expressions import suggest

    return suggest(name, options)


def _fail(label: str, message: str, loc: Location | None) -> InputError:
    return InputError(f"{label} {message}", loc)


def parse_number(raw: Any, label: str, loc: Location | None) -> float:
    """A finite number (a bool is not one)."""
    if isinstance(raw, bool):
        raise _fail(label, f"must be a number, got {raw!r}", loc)
    try:
        value = float(raw)
    except OverflowError:
        raise _fail(label, f"must be a finite number, got an integer of {len(str(abs(raw))):,} "
                    "digits, too large for a float", loc) from None
    except (TypeError, ValueError):
        raise _fail(label, f"must be a number, got {raw!r}", loc) from None
    if not math.isfinite(value):
        raise _fail(label, f"must be a finite number, got {raw!r}", loc)
    return value


def parse_positive(raw: Any, label: str, loc: Location | None) -> float:
    """A finite number above 0."""
    value = parse_number(raw, label, loc)
    if value <= 0:
        raise _fail(label, f"must be positive, got {value!r}", loc)
    return value


def parse_samples(raw: Any, label: str, loc: Location | None) -> int:
    """A whole number of samples, at least 2."""
    value = parse_number(raw, label, loc)
    if value != int(value) or value < 2:
        raise _fail(label, f"must be a whole number of at least 2 (both ends are samples), got "
                    f"{raw!r}", loc)
    return int(value)


def _names(names: tuple[str, ...]) -> Callable[[], tuple[str, ...]]:
    """The choices of a row, as the command line and the schema ask for them."""
    return lambda: names


def _choice(names: Callable[[], tuple[str, ...]], what: str) -> Parser:
    def parse(raw: Any, label: str, loc: Location | None) -> str:
        options = names()
        text = str(raw).strip()
        folded = {o.lower(): o for o in options}
        if text.lower() in folded:
            return folded[text.lower()]
        raise _fail(label, f"must be one of {', '.join(options)}; {text!r} is not a known {what}"
                    f"{_suggest(text, options)}", loc)
    return parse


def parse_gains(raw: Any, label: str, loc: Location | None) -> tuple[float, float]:
    """Two non-negative numbers α, β, as a list or the text ``ALPHA,BETA``."""
    parts = raw.split(",") if isinstance(raw, str) else raw
    if not isinstance(parts, (list, tuple)) or len(parts) != 2:
        raise _fail(label, f"must be two numbers ALPHA,BETA (e.g. 5,5), got {raw!r}", loc)
    alpha, beta = (parse_number(p, label, loc) for p in parts)
    if alpha < 0 or beta < 0:
        raise _fail(label, f"must be two non-negative numbers ALPHA,BETA, got {raw!r}", loc)
    return alpha, beta


def parse_condition(raw: Any, label: str, loc: Location | None) -> str:
    """The text of an expression (checked against the system's names when the run is built)."""
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)) or not str(raw).strip():
        raise _fail(label, f"must be an expression such as 'y' or 'lambda_table', got {raw!r}",
                    loc)
    return str(raw).strip()


def parse_assignments(raw: Any, label: str, loc: Location | None) -> str:
    """``NAME=VALUE, ...`` (or, from the API, a mapping of them) as text, or a list of numbers
    as ``1,2,...``
    (the weights of ``--Q``): checked for form here, against the system's names when the
    controller is designed (:func:`lagsim.analysis.lqr.weights`)."""
    if isinstance(raw, Mapping):
        raw = ", ".join(f"{k}={v}" for k, v in raw.items())
    elif isinstance(raw, (list, tuple)):
        raw = ",".join(str(parse_number(x, label, loc)) for x in raw)
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)) or not str(raw).strip():
        raise _fail(label, f"must be NAME=VALUE entries such as 'theta=0' or a list of numbers, "
                    f"got {raw!r}", loc)
    return str(raw).strip()


CONTROLLERS = ("lqr",)
"""``--controller``: the state feedbacks a run can close on the file's inputs (issue 28)."""

def parse_names(raw: Any, label: str, loc: Location | None) -> tuple[str, ...]:
    """Names, as a list or the text ``a,b,c``, none empty and none twice (checked against the
    system's parameters and state when the run is built)."""
    parts = raw.split(",") if isinstance(raw, str) else raw
    if not isinstance(parts, (list, tuple)) or not parts or any(
            not isinstance(p, str) or not p.strip() for p in parts):
        raise _fail(label, f"must be names NAME,NAME,... of parameters or initial values "
                    f"(e.g. l,c,theta), got {raw!r}", loc)
    names = tuple(p.strip() for p in parts)
    twice = next((x for i, x in enumerate(names) if x in names[:i]), None)
    if twice is not None:
        raise _fail(label, f"names {twice!r} twice", loc)
    return names


YAML11_BOOLEANS: Mapping[str, bool] = {
    word: value for words, value in (("yes on", True), ("no off", False))
    for word in (w for base in words.split() for w in (base, base.title(), base.upper()))}
"""The YAML 1.1 booleans that the YAML 1.2 reading of a file
(:class:`lagsim.spec.reader.Yaml12Loader`)
leaves as text; an on/off option still takes them as true and false."""


def parse_switch(raw: Any, label: str, loc: Location | None) -> bool:
    """true or false, the YAML 1.1 words (:data:`YAML11_BOOLEANS`) included."""
    if isinstance(raw, str) and raw in YAML11_BOOLEANS:
        return YAML11_BOOLEANS[raw]
    if not isinstance(raw, bool):
        raise _fail(label, f"must be true or false, got {raw!r}", loc)
    return raw


@record
class Option:
    """One row of the table: everything lagsim knows about one option of a run.

    ``name`` is the field of :class:`SimulateOptions` and the YAML key under ``simulate:``;
    :attr:`flag` is the command-line flag. ``parse(raw, label, location)`` validates a value from
    either place (a string from the command line, a YAML scalar or list from the file) and
    raises :class:`InputError` naming ``label``. ``switch`` options are on/off flags
    (``--strict-initial/--no-strict-initial``). ``help`` may use ``{choices}``.
    """

    name: str
    type: Any
    default: Any
    parse: Parser
    help: str
    metavar: str | None = None
    choices: Callable[[], tuple[str, ...]] | None = None
    switch: bool = False
    doc: str = ""
    """What the key means in a file (docs/format.md's table and the JSON Schema)."""
    needs: str | None = None
    """The option without which this one means nothing (``saturate`` needs ``controller``)."""
    fit: bool = True
    """Whether ``lagsim fit`` takes the option (not the times, which the data set, nor what
    changes the rows or the columns)."""

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def key(self) -> str:
        """The option as written in a file: ``simulate.<name>``."""
        return f"simulate.{self.name}"

    def help_text(self) -> str:
        """The help line of the flag, with the choices and the default filled in; the default
        names the file's ``simulate:`` key, which wins over it (a flag wins over both)."""
        text = self.help.format(choices=", ".join(self.choices()) if self.choices else "")
        if self.switch:
            return f"{text} [default: off, or the file's {self.key}]"
        if self.default is None:
            return text
        shown = ",".join(f"{x:g}" for x in self.default) if isinstance(self.default, tuple) \
            else f"{self.default:g}" if isinstance(self.default, float) else str(self.default)
        return f"{text} [default: {shown}, or the file's {self.key}]"


@record
class Naming:
    """How messages write an option and a value for it: the command line's flag
    (``--dt 0.12``) or the Python API's keyword (``dt=0.12``); :data:`FLAGS` and
    :data:`KEYWORDS` are the two."""

    keywords: bool

    def name(self, row: Option) -> str:
        return row.name if self.keywords else row.flag

    def give(self, option: str, value: object) -> str:
        """Option ``option`` given ``value``, as the user would write it."""
        return f"{self.name(BY_NAME[option])}{'=' if self.keywords else ' '}{value}"

    def flag(self, flag: str) -> str:
        """Command-line flag ``flag`` (``--t-end``) as this naming writes it: the flag itself,
        or the API's keyword (``t_end``; :data:`RENAMED_FLAGS` for those named otherwise)."""
        if not self.keywords:
            return flag
        return RENAMED_FLAGS.get(flag, flag[2:].replace("-", "_"))

    def say(self, text: str) -> str:
        """``text``, a message of lagsim's that names command-line flags, as this naming writes
        it: unchanged for the command line; for the API each flag named as its keyword
        (:meth:`flag`), an on/off option's flag as the keyword given True (``--invariants`` →
        ``invariants=True``; :data:`FLAG_SWITCHES` for those outside the table), and a flag
        followed by one of its option's choices, by its metavar or by a quoted value written as
        the keyword given it (``--method rattle`` → ``method='rattle'``, ``--kind path`` →
        ``kind='path'`` by :data:`FLAG_CHOICES`, ``--runs N`` → ``runs=N``, ``--set
        NAME=VALUE`` → ``parameters={NAME: VALUE}``), and advice to leave a flag out as its
        default (``leave --scheduler out``, ``drop --steady`` → ``scheduler=None``,
        ``steady=None``); a flag the API has no keyword for (:data:`CLI_ONLY_FLAGS`) is named
        as the command line's (``drop the command line's --plot``), and a command line a message
        quotes (``lagsim lyapunov --trace FILE.csv``) is left as written. A flag is ``--`` and a
        letter at the start or after a space, ``(``, ``[``, ``/`` or a backtick, so a quoted
        value such as ``'--x'`` stays. The one place the
        API's wording of lagsim's messages is made: the API applies it to what it raises, warns
        and records, and the reports it returns to what they print (:mod:`lagsim.api`)."""
        if not self.keywords or "--" not in text:
            return text
        out, last = [], 0
        for command in re.finditer(_COMMAND_LINE, text):
            out += [self._reword(text[last:command.start()]), command.group(0)]
            last = command.end()
        return "".join([*out, self._reword(text[last:])])

    def _reword(self, text: str) -> str:
        return re.sub(_FLAG, self._keyword, re.sub(_LEAVE_OUT, self._left_out, text))

    def _left_out(self, match: re.Match[str]) -> str:
        flag = match.group(1) or match.group(2)
        if flag in CLI_ONLY_FLAGS:
            return match.group(0)
        keyword = self.flag(flag)
        return f"{keyword}={False if _switch(flag, BY_NAME.get(keyword)) else None}"

    def _keyword(self, match: re.Match[str]) -> str:
        flag, choice, tail = match.group(1), match.group(2), match.group(3) or ""
        if flag in CLI_ONLY_FLAGS:
            return f"the command line's {match.group(0)}"
        keyword = self.flag(flag)
        row = BY_NAME.get(keyword)
        if _switch(flag, row):
            return f"{keyword}=True" + match.group(0).removeprefix(flag)
        if choice is None:
            return keyword
        named = (row.choices() if row is not None and row.choices is not None
                 else FLAG_CHOICES.get(flag, ()))
        if choice in named:
            others = (w for w in tail.split(" or ") if w)
            return f"{keyword}={choice!r}" + "".join(
                f" or {w!r}" if w in named else f" or {w}" for w in others)
        return self._value(keyword, choice) + tail

    @staticmethod
    def _value(keyword: str, choice: str) -> str:
        if choice[0] in "\"'":
            return f"{keyword}={choice}"
        name, eq, value = choice.partition("=")
        if eq and name.isupper() and value.isupper():
            return f"{keyword}={{{name}: {value}}}"
        if choice.isupper():
            return f"{keyword}={choice}"
        return f"{keyword} {choice}"


_FLAG = (r"(?<![^\s(\[/`])(--[A-Za-z][A-Za-z0-9-]*)"
         r"(?: ([A-Za-z][\w-]*(?:=[A-Z]+)?(?![\w=:]|,\S)|\"[^\"]*\"|'[^']*')"
         r"((?: or [a-z][\w-]*\b(?![-=:(]))*))?")
"""A command-line flag in a message, the word after it, and other words that word is or-ed
with (``--form matrix or lagrange``; :meth:`Naming.say`). This and the two patterns below are
compiled by :mod:`re` (which keeps what it compiled) when the API first rewords a message, not
at every start-up (0.8 ms; issue 31, "Start-up")."""
_LEAVE_OUT = r"\b(?:leave (--[a-z][a-z0-9-]*) out|drop (--[a-z][a-z0-9-]*))"
"""A message's advice to give no such flag, which the API words as its default
(``leave --scheduler out`` → ``scheduler=None``; :meth:`Naming.say`)."""

_COMMAND_LINE = r"\blagsim [a-z][a-z-]*(?: [^\s;,):`]+)*"
"""A command line a message quotes (``write them with lagsim lyapunov --trace FILE.csv``): words
after ``lagsim`` up to a space-free stop (``;``, ``,``, ``)``, ``:`` or a backtick), which
:meth:`Naming.say` leaves as written."""

RENAMED_FLAGS: Mapping[str, str] = {"--set": "parameters", "--init": "initial", "--c": "folder",
                                    "--fmu": "path"}
"""The API keyword of each command-line flag whose keyword is not the flag's name (``--t-end``
is ``t_end``, ``--grid`` is ``grid``)."""

FLAG_CHOICES: Mapping[str, tuple[str, ...]] = {
    "--form": (*choices.FORMS, choices.ALL_FORMS), "--kind": choices.PLOT_KINDS,
    "--format": choices.REPORT_FORMATS, "--scheduler": choices.LOCAL_SCHEDULERS}
"""The names a flag outside the options table takes (:mod:`lagsim.spec.choices`), which a
message's ``--kind poincare`` gives the API as ``kind='poincare'`` (:meth:`Naming.say`)."""
FLAG_SWITCHES: tuple[str, ...] = ("--simplify", "--force")
"""The on/off flags outside the options table that the API takes as a keyword given True or
False (``derive --simplify``, ``System.derive(simplify=True)``; ``export --force``,
``System.export_c(folder, force=True)``; :meth:`Naming.say`)."""
CLI_ONLY_FLAGS: tuple[str, ...] = ("--plot", "--wrap", "--dpi", "--fps", "--frames", "--trail",
                                   "--trace", "--table", "--save-trajectories", "--stationary",
                                   "--from", "--to")
"""The flags lagsim's messages name that no function of the API takes (``modes --plot``:
the API returns the report, :func:`lagsim.plot` draws): the API's wording names each as the
command line's (:meth:`Naming.say`), rather than as a keyword nothing accepts. Every flag a
message of lagsim names is a row of the options table, a keyword of the API (by its name or
:data:`RENAMED_FLAGS`), or one of these (tests/test_api_wording.py)."""


def _switch(flag: str, row: Option | None) -> bool:
    return row.switch if row is not None else flag in FLAG_SWITCHES


FLAGS = Naming(keywords=False)
"""The command line's naming: ``--dt 0.12``."""
KEYWORDS = Naming(keywords=True)
"""The Python API's naming: ``dt=0.12``."""
WORDING: ContextVar[Naming] = ContextVar("lagsim_wording", default=KEYWORDS)
"""How the public entries of the Python API word what they raise, warn and record
(:meth:`Naming.say`, :mod:`lagsim.api`): :data:`KEYWORDS`, except while the command line runs
a command through them (``lagsim lqr`` calls ``System.lqr``), for which it sets :data:`FLAGS`
(:meth:`lagsim.cli.group.LagsimGroup.invoke`)."""


SECTION_DIRECTIONS = ("both", "up", "down")
"""``--section-direction``: every crossing, the expression rising through 0, or falling."""

OPTIONS: tuple[Option, ...] = (
    Option("t_start", float, 0.0, parse_number, "Start time.", "T",
           doc="start time; the initial values are at this time"),
    Option("t_end", float, 10.0, parse_number, "End time.", "T",
           doc="end time, greater than `t_start`", fit=False),
    Option("samples", int | None, 1001, parse_samples,
           "Equally spaced output samples, both ends included.", "N",
           doc="number of equally spaced output times, both ends included (at least 2)",
           fit=False),
    Option("dt", float | None, None, parse_positive,
           "Output spacing instead of --samples. With --method rattle or variational: the "
           "fixed step (required), a sample every step unless --samples is given too; a "
           "sample between steps is one partial step from the last step.", "DT",
           doc="output spacing instead of `samples` (give one of the two)", fit=False),
    Option("method", str, "DOP853", _choice(_names(choices.METHODS), "method"),
           "Integration method. DOP853 (steps in C) suits most systems, fast undamped "
           "oscillations included; Radau, BDF or LSODA suit stiff ones (fast modes that are "
           "strongly damped) and get the analytic Jacobian (Radau steps in C for "
           "unconstrained systems); rattle and variational take fixed "
           "steps of --dt that keep the constraints and the energy (see README).", "NAME",
           _names(choices.METHODS),
           doc=("scipy's `RK45`, `RK23`, `DOP853`, `Radau`, `BDF` or `LSODA`, or the fixed-step "
                "`rattle` and `variational` (with `dt`); the implicit `Radau`, `BDF` and "
                "`LSODA` (for stiff systems: strongly damped fast modes) get the analytic "
                "Jacobian of the right-hand side")),
    Option("rtol", float, 1e-10, parse_positive, "Relative tolerance.", "RTOL",
           doc="relative tolerance, positive"),
    Option("atol", float, 1e-10, parse_positive, "Absolute tolerance.", "ATOL",
           doc="absolute tolerance, positive"),
    Option("formulation", str, choices.AUTO,
           _choice(_names(choices.FORMULATION_CHOICES), "formulation"),
           "How constraints enter the ODE (auto picks ode, index1 or udwadia-kalaba).", "NAME",
           _names(choices.FORMULATION_CHOICES),
           doc=("`ode`, `index1`, `udwadia-kalaba`, `reduced`, or `auto` (`ode` without "
                "constraints, else `index1`, or `udwadia-kalaba` when the constraints are "
                "dependent)")),
    Option("stabilize", str, "projection", _choice(_names(choices.STABILIZERS), "stabilizer"),
           "How a constrained run keeps to its constraints.", "NAME",
           _names(choices.STABILIZERS),
           doc="`none`, `baumgarte` or `projection`"),
    Option("baumgarte", tuple[float, float], (5.0, 5.0), parse_gains,
           "Baumgarte gains; good values depend on the system's time scale (about 1/period).",
           "ALPHA,BETA",
           doc="α, β of the Baumgarte stabilizer, as a list `[5, 5]` or the text `5,5`"),
    Option("stop_when", str | None, None, parse_condition,
           "Stop when EXPR changes sign, e.g. lambda_c1 or y.", "EXPR",
           doc=("an expression in t, q, q̇, parameters and `lambda_<c>`; the run ends when it "
                "changes sign"), fit=False),
    Option("section", str | None, None, parse_condition,
           "Write, instead of the samples, the state at every crossing of EXPR = 0 (a "
           "Poincaré section), e.g. theta1.", "EXPR",
           doc=("an expression in t, q, q̇, parameters and `lambda_<c>`; the output is the state "
                "at each of its zeros (a Poincaré section) instead of the samples"), fit=False),
    Option("section_direction", str, "both",
           _choice(_names(SECTION_DIRECTIONS), "direction"),
           "Which crossings of --section: up (EXPR rising through 0), down or both.",
           "up|down|both", _names(SECTION_DIRECTIONS),
           doc="`up` (the expression rising through 0), `down` or `both`", fit=False),
    Option("strict_initial", bool, False, parse_switch,
           "Refuse to move the initial values you set onto the constraints (values left out "
           "are still computed).",
           switch=True,
           doc=("`true` refuses to move the initial values you set onto the constraints (left-out "
                "values are still computed)")),
    Option("invariants", bool, False, parse_switch,
           "Add a column invariant_<name> for each conserved quantity `lagsim check` finds "
           "(energy, cyclic and Noether momenta).",
           switch=True,
           doc=("`true` adds a column `invariant_<name>` for each conserved quantity `lagsim "
                "check` finds (energy h, cyclic momenta, Noether momenta p·ξ)"), fit=False),
    Option("action", bool, False, parse_switch,
           "Add the running action S = ∫L dt as a column `action` (corrected trapezoids on the "
           "samples, error O(h⁴), its estimate on stderr).",
           switch=True,
           doc="`true` adds the running action S = ∫L dt as a last column `action`",
           fit=False),
    Option("controller", str | None, None, _choice(_names(CONTROLLERS), "controller"),
           "Close the loop on the file's inputs: lqr applies u = u* − K (x − x*), K the "
           "gain of `lagsim lqr` about --at with --Q and --R.", "NAME", _names(CONTROLLERS),
           doc=("`lqr`: the inputs follow u = u* − K (x − x*) with K the gain `lagsim lqr` "
                "designs about `at` with `Q` and `R`")),
    Option("at", str | None, None, parse_assignments,
           "With --controller: the equilibrium to hold, such as \"x=0, theta=0\" (as "
           "`lagsim lqr --at`).", "POINT",
           doc="with `controller`: the equilibrium to hold, such as `x=0, theta=0`",
           needs="controller"),
    Option("Q", str | None, None, parse_assignments,
           "With --controller: the state weights (as `lagsim lqr --Q`; default all 1).",
           "WEIGHTS",
           doc=("with `controller`: the diagonal state weights, a list in the order of the state "
                "or `name=value` entries (default all 1)"), needs="controller"),
    Option("R", str | None, None, parse_assignments,
           "With --controller: the input weights (as `lagsim lqr --R`; default all 1).",
           "WEIGHTS",
           doc="with `controller`: the diagonal input weights (default all 1)",
           needs="controller"),
    Option("saturate", float | None, None, parse_positive,
           "With --controller: the actuator limit U, each input clipped to [−U, U].", "U",
           doc="with `controller`: the actuator limit U, each input clipped to [−U, U]",
           needs="controller"),
    Option("sensitivities", tuple[str, ...] | None, None, parse_names,
           "Add a column d(<column>)/d(<name>) for each coordinate, velocity and multiplier and "
           "each NAME: a parameter, or the initial value of a coordinate or velocity (theta, "
           "theta_dot), by the forward sensitivity equations (in the C loop with DOP853; ode, "
           "index1, udwadia-kalaba).", "NAMES",
           doc=("names of parameters or initial values (a coordinate or `<coordinate>_dot`), as "
                "a list or `l,c,theta`; adds a column `d(<column>)/d(<name>)` for each "
                "coordinate, velocity and multiplier and each name (forward sensitivities)"),
           fit=False),
    Option("sensitivity_errors", str, choices.AUTO,
           _choice(_names(choices.SENSITIVITY_ERRORS), "error control"),
           "With --sensitivities: what the step-size control measures: state (the state "
           "alone, CVODES's errconS off: the plain run's steps, the sensitivities about as "
           "accurate as the state; DOP853, RK45, RK23), joint (the state and the "
           "sensitivities, CVODES's default) or auto (state where the method can, else "
           "joint).", "HOW", _names(choices.SENSITIVITY_ERRORS),
           doc=("with `sensitivities`: `state` (the error control covers the state alone; "
                "DOP853, RK45, RK23), `joint` (the state and the sensitivities) or `auto` "
                "(state where the method can, else joint)"),
           needs="sensitivities"),
)
"""The options of a run, in the order of ``lagsim simulate --help``."""



def parse_column_values(raw: Any, label: str, loc: Location | None
                        ) -> tuple[tuple[str, float], ...]:
    """``NAME=VALUE,...`` (or, from the API, a mapping) of positive numbers, each name once
    (checked against the observed columns when the fit is built)."""
    if isinstance(raw, Mapping):
        items = [(str(k), v) for k, v in raw.items()]
    elif isinstance(raw, str) and raw.strip():
        items = []
        for part in raw.split(","):
            name, eq, value = part.partition("=")
            if not eq or not name.strip():
                raise _fail(label, f"must be COLUMN=VALUE entries such as 'theta=1,x=0.1', got "
                            f"{raw!r}", loc)
            items.append((name.strip(), value))
    else:
        raise _fail(label, f"must be COLUMN=VALUE entries such as 'theta=1,x=0.1', got {raw!r}",
                    loc)
    out: dict[str, float] = {}
    for name, value in items:
        if name in out:
            raise _fail(label, f"names column '{name}' twice", loc)
        out[name] = parse_positive(value, f"{label} {name}", loc)
    return tuple(out.items())


def parse_count(raw: Any, label: str, loc: Location | None) -> int:
    """A whole number, at least 1."""
    value = parse_number(raw, label, loc)
    if value != int(value) or value < 1:
        raise _fail(label, f"must be a whole number of at least 1, got {raw!r}", loc)
    return int(value)


def parse_seed(raw: Any, label: str, loc: Location | None) -> int:
    """A whole number, at least 0."""
    value = parse_number(raw, label, loc)
    if value != int(value) or value < 0:
        raise _fail(label, f"must be a whole number of at least 0, got {raw!r}", loc)
    return int(value)


FIT_OPTIONS: tuple[Option, ...] = (
    Option("weights", tuple[tuple[str, float], ...] | None, None, parse_column_values,
           "Relative weight of each observed column's squared residuals, e.g. theta=1,x=0.1 "
           "(a column left out weighs 1); the residual variance is still estimated from the "
           "data. Not with --sigma.", "COLUMN=W,...", fit=False),
    Option("sigma", tuple[tuple[str, float], ...] | None, None, parse_column_values,
           "The measurement standard deviation of every observed column, e.g. "
           "theta=0.01,x=0.5: weights 1/σ², standard errors from σ rather than from the "
           "residuals, and χ²/(N − p) reported as a check of σ (near 1). Not with --weights.",
           "COLUMN=SIGMA,...", fit=False),
    Option("starts", int, 1, parse_count,
           "Fit from N starts: the file's values and N − 1 drawn uniformly within --bounds "
           "(every fitted name needs both bounds), seeded by --seed; reports the best fit and "
           "how many starts reached it.", "N", fit=False),
    Option("seed", int, 0, parse_seed, "The seed of the starts --starts draws.", "SEED",
           fit=False),
)
"""The options of ``lagsim fit`` and ``System.fit`` beyond those of its runs (issue 26):
declared once for the command line (flags) and the API (keywords)."""
FIT_BY_NAME: Mapping[str, Option] = {o.name: o for o in FIT_OPTIONS}

BY_NAME: Mapping[str, Option] = {o.name: o for o in OPTIONS}
SIMULATE_KEYS: tuple[str, ...] = tuple(BY_NAME)
"""The keys a ``simulate:`` block of a system file may hold."""

MAX_SAMPLES = 1_000_000
"""More output rows than this are refused before the run (issue 15, "Limits")."""
ROW_SECONDS_PER_COLUMN = 5e-6
ROW_BYTES_PER_COLUMN = 18
"""Rough cost of one output row per CSV column: sampling, multipliers, residuals, CSV text.
Measured with 200001 samples to a file: the pendulum (4 columns) 26 µs and 69 bytes a row,
the double pendulum in natural coordinates (26 columns) 140 µs and 350 bytes a row."""


def _default(name: str) -> Any:
    """The default of option ``name``, as its row of :data:`OPTIONS` declares it."""
    return BY_NAME[name].default


@record
class SimulateOptions:
    """The validated settings of one run, one field per row of :data:`OPTIONS`, of the row's
    type and with its default (tests/test_options.py holds the two together); build it with
    :meth:`resolve`. ``samples`` equally spaced sample times including both ends, or a spacing
    ``dt`` (then ``samples`` is None; the last row is ``t_end`` even when ``dt`` does not divide
    the span). ``baumgarte`` is (α, β) of the stabilizer −2α·φ̇ − β²·φ (holonomic) and −α·w
    (velocity). ``locations`` records where each given option came from (:meth:`where`)."""

    t_start: float = _default("t_start")
    t_end: float = _default("t_end")
    samples: int | None = _default("samples")
    dt: float | None = _default("dt")
    method: str = _default("method")
    rtol: float = _default("rtol")
    atol: float = _default("atol")
    formulation: str = _default("formulation")
    stabilize: str = _default("stabilize")
    baumgarte: tuple[float, float] = _default("baumgarte")
    stop_when: str | None = _default("stop_when")
    section: str | None = _default("section")
    section_direction: str = _default("section_direction")
    strict_initial: bool = _default("strict_initial")
    invariants: bool = _default("invariants")
    action: bool = _default("action")
    controller: str | None = _default("controller")
    at: str | None = _default("at")
    Q: str | None = _default("Q")
    R: str | None = _default("R")
    saturate: float | None = _default("saturate")
    sensitivities: tuple[str, ...] | None = _default("sensitivities")
    sensitivity_errors: str = _default("sensitivity_errors")
    locations: tuple[tuple[str, Location], ...] = field(default=(), compare=False)
    naming: Naming = field(default=FLAGS, compare=False)

    @classmethod
    def resolve(cls, settings: Mapping[str, Any], flags: Mapping[str, Any],
                naming: Naming = FLAGS) -> SimulateOptions:
        """Merge the YAML ``simulate:`` settings and the command-line ``flags`` (a flag wins).

        ``settings`` maps keys to :class:`lagsim.spec.system.Setting` (value and location);
        ``flags`` maps option names (``t_end``, not ``--t-end``) to raw values, ``None`` meaning
        "not given" (so ``0`` and ``False`` given on the command line count). A bad value is an
        :class:`InputError` that names the option as the user wrote it: ``naming`` says how a
        flag is written (:data:`FLAGS` by default; the Python API passes :data:`KEYWORDS`), here
        and in what the run says later (:meth:`label`, :meth:`give`). Options resolved once
        are kept (:data:`RESOLVED`): a loop of runs with the same settings resolves them once.
        """
        key: Any = None
        if all(_plain(v) for v in flags.values()) and all(
                _plain(setting.value) for setting in settings.values()):
            key = (tuple((k, type(v), repr(v)) for k, v in flags.items()),
                   tuple((k, type(v.value), repr(v.value), v.location)
                         for k, v in settings.items()), naming)
        if key is not None and key in RESOLVED:
            return RESOLVED[key]
        options = cls._resolve(settings, flags, naming)
        if key is not None:
            RESOLVED[key] = options
            while len(RESOLVED) > RESOLVED_SIZE:
                del RESOLVED[next(iter(RESOLVED))]
        return options

    @classmethod
    def _resolve(cls, settings: Mapping[str, Any], flags: Mapping[str, Any],
                 naming: Naming) -> SimulateOptions:
        name = naming.name
        unknown = [k for k in list(settings) + list(flags) if k not in BY_NAME]
        if unknown:
            raise InputError(f"unknown simulate option '{unknown[0]}'"
                             f"{_suggest(unknown[0], SIMULATE_KEYS)}; the options are "
                             f"{', '.join(SIMULATE_KEYS)}")
        given: dict[str, tuple[Any, str, Location]] = {}
        for key, setting in settings.items():
            given[key] = (setting.value, BY_NAME[key].key, setting.location)
        flag_given = {k: v for k, v in flags.items() if v is not None}
        samples, dt = BY_NAME["samples"], BY_NAME["dt"]
        fixed = _fixed_step(flag_given.get("method", settings["method"].value
                                           if "method" in settings else None))
        if not fixed and "samples" in flag_given and "dt" in flag_given:
            raise InputError(f"give either {name(samples)} or {name(dt)}, not both")
        if not fixed and ("samples" in flag_given or "dt" in flag_given):
            given.pop("samples", None)
            given.pop("dt", None)
        elif not fixed and "samples" in given and "dt" in given:
            raise InputError(f"give either {samples.key} or {dt.key}, not both",
                             given["dt"][2])
        for key, value in flag_given.items():
            given[key] = (value, name(BY_NAME[key]), Location(name(BY_NAME[key])))

        values: dict[str, Any] = {key: BY_NAME[key].parse(raw, label, loc if loc.line else None)
                                  for key, (raw, label, loc) in given.items()}
        if "dt" in values and not (fixed and "samples" in values):
            values["samples"] = None
        t_start = values.get("t_start", BY_NAME["t_start"].default)
        t_end = values.get("t_end", BY_NAME["t_end"].default)
        if not t_end > t_start or not math.isfinite(t_end - t_start):
            key = "t_end" if "t_end" in given else "t_start"
            _, label, loc = given[key]
            what = "greater than" if not t_end > t_start else "a finite distance from"
            raise InputError(f"{label} must leave t_end {what} t_start, got t_start = "
                             f"{t_start!r} and t_end = {t_end!r}", loc if loc.line else None)
        _check_spacing(values, given, t_start, t_end)
        locations = tuple((key, loc) for key, (_, _, loc) in given.items())
        return cls(**values, locations=locations, naming=naming)

    def where(self, name: str) -> Location | None:
        """Where option ``name`` was given: its value in the file, or its flag; None for a
        default."""
        return dict(self.locations).get(name)

    def file_location(self, name: str) -> Location | None:
        """Where option ``name`` stands in the file, None when it was a flag or a default (a
        message then names the flag itself)."""
        where = self.where(name)
        return where if where is not None and where.line is not None else None

    def label(self, name: str) -> str:
        """The option as the user gave it: ``--rtol`` (or the API's ``rtol``), or
        ``simulate.rtol`` from a file; an option not given as :attr:`naming` writes it."""
        where = self.where(name)
        if where is not None and where.line is None:
            return where.file
        return BY_NAME[name].key if where is not None else self.naming.name(BY_NAME[name])

    def give(self, name: str, value: object) -> str:
        """Advice to give option ``name`` the value ``value``, as :attr:`naming` writes it
        (``--dt 0.12`` on the command line, ``dt=0.12`` in the API)."""
        return self.naming.give(name, value)

    def rows(self) -> int:
        """How many samples the run writes (both ends included)."""
        samples, dt = self.samples, self.dt
        if samples is not None:
            return samples
        if dt is None:
            raise ValueError("SimulateOptions has neither samples nor dt")
        t0, t1 = self.t_start, self.t_end
        count = math.floor((t1 - t0) / dt * (1 + 1e-12))
        return count + 1 + (t1 - (t0 + count * dt) > 1e-9 * dt)

    def check_size(self, columns: int) -> None:
        """Refuse, before any work, a run whose output would exceed :data:`MAX_SAMPLES` rows,
        saying how large and how long it would be (issue 15)."""
        rows = self.rows()
        if rows <= MAX_SAMPLES:
            return
        name = "dt" if self.dt is not None else "samples"
        size = rows * columns * ROW_BYTES_PER_COLUMN
        seconds = rows * columns * ROW_SECONDS_PER_COLUMN
        raise InputError(
            f"{self.label(name)} asks for {rows:.4g} samples: about {_bytes(size)} of CSV and "
            f"{duration(seconds)} of sampling alone; lagsim writes at most "
            f"{MAX_SAMPLES} samples per run: lower {self.naming.name(BY_NAME['samples'])}, "
            f"raise {self.naming.name(BY_NAME['dt'])}, or split the run with "
            f"{self.naming.name(BY_NAME['t_start'])}/{self.naming.name(BY_NAME['t_end'])}",
            self.file_location(name))

    def sample_times(self) -> Any:
        """The sample times, both ends included, each the double nearest its decimal value
        (:func:`lagsim.spec.times.clean_times`: 0.15 is written 0.15)."""
        samples = None if self.dt is None else self.rows()
        return _sample_times(self.t_start, self.t_end, self.dt, self.samples, samples).copy()


def _plain(value: Any) -> bool:
    """Whether ``value`` is a number, a string, a bool or None, which its type and ``repr`` tell
    apart (0 from False and 0.0 from -0.0; options given as lists are resolved each time)."""
    return value is None or type(value) in (int, float, str, bool)


RESOLVED: dict[Any, SimulateOptions] = {}
"""Options :meth:`SimulateOptions.resolve` made, by their settings, flags and naming (frozen, so
shared); at most :data:`RESOLVED_SIZE`, the oldest dropped first."""
RESOLVED_SIZE = 64


@functools.lru_cache(maxsize=16)
def _sample_times(t0: float, t1: float, dt: float | None, samples: int | None, rows: int | None
                  ) -> Any:
    """:meth:`SimulateOptions.sample_times` of these values, made once in a process for runs
    that share them (read-only: the method hands out copies)."""
    from lagsim.spec.times import clean_steps, clean_times

    if dt is None or samples is not None:
        times = clean_times(t0, t1, samples or 2)
    else:
        assert rows is not None
        times = clean_steps(t0, dt, rows)
        times[-1] = min(times[-1], t1)
    times.setflags(write=False)
    return times


def _check_spacing(values: Mapping[str, Any], given: Mapping[str, tuple[Any, str, Location]],
                   t_start: float, t_end: float) -> None:
    """Refuse sample times or a step that floating-point times cannot tell apart (a span of
    5e-324 in 1001 samples gives times 0, 0, ..., 5e-324): each spacing must exceed twice the
    spacing of doubles near the larger end, so that the rounded times strictly increase."""
    resolution = 2 * math.ulp(max(abs(t_start), abs(t_end)))
    samples = values.get("samples", BY_NAME["samples"].default)
    dt = values.get("dt")
    checks = [("dt", dt)] if dt is not None else []
    if samples is not None:
        checks.append(("samples", (t_end - t_start) / (samples - 1)))
    for key, spacing in checks:
        if spacing > resolution:
            continue
        blame = next((k for k in (key, "t_end", "t_start", "samples") if k in given), key)
        _, label, loc = given.get(blame, (None, BY_NAME[blame].flag, Location("")))
        what = (f"the step dt = {dt!r}" if key == "dt" else
                f"{samples} samples from t_start = {t_start!r} to t_end = {t_end!r} are "
                f"{spacing!r} apart, which")
        raise InputError(
            f"{label}: {what} is below the resolution of floating-point times near "
            f"{max(abs(t_start), abs(t_end))!r} ({math.ulp(max(abs(t_start), abs(t_end))):.3g}), "
            "so the sample times would repeat; lengthen the span, or use fewer samples or a "
            "larger step", loc if loc.line else None)


def _fixed_step(raw: Any) -> bool:
    """Whether the method ``raw`` (as given; None: the default) takes fixed steps of ``dt``
    (then ``dt`` is the step and ``samples`` may be given as well)."""
    if raw is None:
        return False
    return str(raw).strip().lower() in {m.lower() for m in choices.FIXED_STEP_METHODS}


def _bytes(size: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size / 1e3:.3g} kB"


def duration(seconds: float) -> str:
    """``about 3.2 hours``: a rough span of time for a message."""
    for unit, scale in (("years", 3.15e7), ("days", 86400.0), ("hours", 3600.0),
                        ("minutes", 60.0)):
        if seconds >= scale:
            return f"about {seconds / scale:.3g} {unit}"
    return f"about {seconds:.2g} s"
