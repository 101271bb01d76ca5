"""Issue 30: what the Python API raises, warns and records names its keywords (``dt=0.12``,
``parameters``), never a command-line flag (``--dt 0.12``, ``--set``); the command line's message
for the same mistake still names the flag, on one line with exit status 2. One mechanism words
both: :class:`lagsim.spec.options.Naming` (:meth:`~lagsim.spec.options.Naming.say`)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import lagsim
from lagsim import naming
from lagsim.cli import main
from lagsim.spec.options import FLAGS, KEYWORDS

CART_POLE = textwrap.dedent("""\
    name: cart_pole
    parameters: {mc: 1.0, mp: 0.2, l: 0.5, g: 9.81}
    inputs: {F: 0}
    coordinates: [x, theta]
    masses:
      cart: {mass: mc, position: [x, 0]}
      tip: {mass: mp, position: [x + l*sin(theta), l*cos(theta)]}
    gravity: [0, -g]
    forces:
      x: F
    initial: {theta: 0.3}
    """)


def cli(*args: str) -> Result:
    """``lagsim ARGS`` run in this process (the models compiled once for both sides)."""
    return CliRunner().invoke(main, list(args))


def refused(result: Result) -> str:
    """The one line ``lagsim: error: ...`` of a command refused with exit status 2."""
    assert result.exit_code == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("lagsim: error: "), result.stderr
    return lines[0].removeprefix("lagsim: error: ")


def api_error(call: object) -> str:
    with pytest.raises(lagsim.InputError) as caught:
        call()  # type: ignore[operator]
    return str(caught.value)


@pytest.mark.parametrize(("text", "api"), [
    ("--set: l = 0 makes the mass matrix singular", "parameters: l = 0 makes the mass matrix "
     "singular"),
    ("--init: no such coordinate", "initial: no such coordinate"),
    ("--method rattle needs a constant mass matrix; use --method variational",
     "method='rattle' needs a constant mass matrix; use method='variational'"),
    ("give a smaller --rtol", "give a smaller rtol"),
    ("simulate with --invariants, or plot", "simulate with invariants=True, or plot"),
    ("must be at least 0 and below --t-end", "must be at least 0 and below t_end"),
    ("--random needs --runs N, the number of draws", "random needs runs=N, the number of draws"),
    ("or with --init NAME=VALUE)", "or with initial={NAME: VALUE})"),
    ('add --at, such as --at "x=0, theta=0"', 'add at, such as at="x=0, theta=0"'),
    ("write e.g. --summary 'amplitude=max(abs(theta))'",
     "write e.g. summary='amplitude=max(abs(theta))'"),
    ("--section-direction chooses the crossings of --section; give --section EXPR too",
     "section_direction chooses the crossings of section; give section=EXPR too"),
    ("the expression '--x' (a double minus) and x--y", "the expression '--x' (a double minus) "
     "and x--y"),
    ("no path to draw; use --kind time", "no path to draw; use kind='time'"),
    ("--kind poincare needs --x and --y", "kind='poincare' needs x and y"),
    ("does not linearize: give --form linear, or drop --steady",
     "does not linearize: give form='linear', or steady=None"),
    ("see --form matrix or lagrange", "see form='matrix' or 'lagrange'"),
    ("--sigma is right or wrong", "sigma is right or wrong"),
    ("with --scheduler synchronous to find", "with scheduler='synchronous' to find"),
    ("or 'synchronous'; leave --scheduler out for this machine's cores",
     "or 'synchronous'; scheduler=None for this machine's cores"),
    ("name it: --summary 'NAME=max(abs(theta))'", "name it: summary='NAME=max(abs(theta))'"),
    ("(--format json prints it whole)", "(format='json' prints it whole)"),
    ("--kind sideways is no kind", "kind sideways is no kind"),
    ("printed partitioned; --simplify prints the closed form",
     "printed partitioned; simplify=True prints the closed form"),
    ("the state is off the constraints and --strict-initial forbids correcting it",
     "the state is off the constraints and strict_initial=True forbids correcting it"),
    ("or drop --invariants", "or invariants=False"),
    ("--y 'l' is a swept column: drawn over --x 'theta0' it shows the grid",
     "y='l' is a swept column: drawn over x='theta0' it shows the grid"),
    ("cannot write 'c': it exists; give --force to write into it",
     "cannot write 'c': it exists; give force=True to write into it"),
    ("cannot be drawn; drop --plot (the shapes are printed)",
     "cannot be drawn; drop the command line's --plot (the shapes are printed)"),
    ("write them with lagsim lyapunov --trace FILE.csv; or --kind time",
     "write them with lagsim lyapunov --trace FILE.csv; or kind='time'"),
    ("lagsim writes at most 10 samples per run: lower --samples",
     "lagsim writes at most 10 samples per run: lower samples"),
])
def test_keywords_say_each_flag_as_its_keyword_and_flags_leave_the_text(text: str,
                                                                        api: str) -> None:
    assert KEYWORDS.say(text) == api
    assert FLAGS.say(text) == text
    assert KEYWORDS.flag("--set") == "parameters" and FLAGS.flag("--set") == "--set"
    assert KEYWORDS.flag("--sensitivity-errors") == "sensitivity_errors"


def test_a_failed_run_of_a_sweep_records_the_keyword_not_the_flag(tmp_path: Path) -> None:
    """l = 0 gives the pendulum no inertia: the run fails and the sweep goes on; the API's
    error column names ``parameters``, the CLI's ``--set`` (its exit status 1 for a failed run,
    its table written all the same)."""
    frame = lagsim.load("pendulum").sweep(grid={"l": (0.0, 1.0, 2)}, t_end=0.1)
    errors = frame[naming.ERROR].tolist()
    assert errors[1] == ""
    assert errors[0].startswith("parameters: l = 0 makes the mass matrix singular")
    assert "--" not in errors[0]
    cli_error_head = "--set: l = 0 makes the mass matrix singular"
    table = tmp_path / "table.csv"
    result = cli("sweep", "pendulum", "--grid", "l=0:1:2", "--t-end", "0.1", "--scheduler",
                 "synchronous", "-o", str(table))
    assert result.exit_code == 1 and f"(run 0: {cli_error_head}" in result.stderr
    from lagsim.sweep.core import read_table

    _, _, cli_errors = read_table(str(table))
    assert cli_errors[0] == "--set: " + errors[0].removeprefix("parameters: ")
    assert cli_errors[1] == ""


def test_a_bad_option_of_simulate_names_the_keyword() -> None:
    """The double pendulum's mass matrix depends on the angles, which RATTLE refuses."""
    double = lagsim.load("double_pendulum")
    message = api_error(lambda: double.simulate(method="rattle", dt=0.01, t_end=0.1))
    assert message.startswith("method='rattle' needs a constant mass matrix")
    assert "use method='variational'" in message and "--" not in message
    line = refused(cli("simulate", "double_pendulum", "--method", "rattle", "--dt", "0.01",
                       "--t-end", "0.1"))
    assert line.startswith("--method rattle needs a constant mass matrix")
    assert "use --method variational" in line
    direction = api_error(lambda: double.simulate(section_direction="up", t_end=0.1))
    assert "give section=EXPR too" in direction and "--" not in direction
    assert "give --section EXPR too" in refused(
        cli("simulate", "double_pendulum", "--section-direction", "up", "--t-end", "0.1"))


def test_a_bad_option_of_lyapunov_names_the_keyword() -> None:
    pendulum = lagsim.load("pendulum")
    message = api_error(lambda: pendulum.lyapunov(t_end=1.0, transient=5.0))
    assert message == "transient: must be at least 0 and below t_end, got 5.0"
    assert refused(cli("lyapunov", "pendulum", "--t-end", "1", "--transient", "5")) == (
        "--transient: must be at least 0 and below --t-end, got 5.0")


def test_bad_options_of_lqr_and_of_its_controller_name_the_keyword(tmp_path: Path) -> None:
    path = tmp_path / "cart_pole.yaml"
    path.write_text(CART_POLE)
    system = lagsim.load(path)
    message = api_error(lambda: system.lqr("x=0, theta=0", Q=[1, 2]))
    assert message == "Q: needs 4 numbers, one for each of x, theta, x_dot, theta_dot; got 2"
    assert refused(cli("lqr", str(path), "--at", "x=0,theta=0", "--Q", "1,2")) == (
        "--Q: needs 4 numbers, one for each of x, theta, x_dot, theta_dot; got 2")
    held = api_error(lambda: system.simulate(controller="lqr", t_end=0.1))
    assert held == ("controller lqr needs the equilibrium to hold: add at, such as "
                    'at="x=0, theta=0"')
    assert refused(cli("simulate", str(path), "--controller", "lqr", "--t-end", "0.1")) == (
        '--controller lqr needs the equilibrium to hold: add --at, such as --at "x=0, theta=0"')


def test_sweep_argument_errors_name_the_keywords() -> None:
    pendulum = lagsim.load("pendulum")
    draws = api_error(lambda: pendulum.sweep(random={"l": (0.5, 1.0)}, t_end=0.1))
    assert draws == "random: random needs runs=N, the number of draws"
    assert refused(cli("sweep", "pendulum", "--random", "l=0.5:1", "--t-end", "0.1")) == (
        "--random: --random needs --runs N, the number of draws")
    nothing = api_error(lambda: pendulum.sweep(t_end=0.1))
    assert nothing.startswith("nothing to sweep: give grid={name: (start, stop, count)}")
    assert "--" not in nothing


def test_a_reworded_error_keeps_its_class_time_and_location_in_a_file() -> None:
    from lagsim.errors import IntegrationError, Location

    failed = IntegrationError("step size too small; give a smaller --rtol", time=1.5)
    reworded = failed.reworded(KEYWORDS.say)
    assert type(reworded) is IntegrationError and reworded.time == 1.5
    assert str(reworded) == "at t = 1.5: step size too small; give a smaller rtol"
    assert str(failed) == "at t = 1.5: step size too small; give a smaller --rtol"
    placed = lagsim.InputError("--dt must be positive", Location("--dt-file.yaml", 3, 1))
    assert str(placed.reworded(KEYWORDS.say)) == "--dt-file.yaml:3:1: dt must be positive"
    assert str(lagsim.InputError("bad", Location("--set")).reworded(KEYWORDS.say)) == (
        "parameters: bad")


def test_the_names_a_flag_outside_the_options_table_takes_are_the_implemented_ones() -> None:
    """``--kind``, ``--form`` and ``--scheduler`` name values the API writes quoted
    (:data:`lagsim.spec.options.FLAG_CHOICES`): the names the plotting, the forms and the sweep
    take, each declared in :mod:`lagsim.spec.choices`."""
    from lagsim.spec import choices
    from lagsim.spec.options import FLAG_CHOICES
    from lagsim.sweep.core import LOCAL_SCHEDULERS
    from lagsim.symbolic import render
    from lagsim.symbolic.forms import FORMS
    from lagsim.viz.kinds import KIND_HELP

    assert tuple(KIND_HELP) == choices.PLOT_KINDS == FLAG_CHOICES["--kind"]
    assert tuple(FORMS) == choices.FORMS
    assert FLAG_CHOICES["--form"] == (*FORMS, "all")
    assert FLAG_CHOICES["--scheduler"] == LOCAL_SCHEDULERS == ("synchronous",)
    assert FLAG_CHOICES["--format"] == render.FORMATS


def test_derive_errors_name_the_form_as_a_keyword_given_its_value() -> None:
    message = api_error(lambda: lagsim.load("pendulum").derive("matrix", steady="theta=0"))
    assert message == ("steady: steady is the steady motion of the linear form; form='matrix' "
                       "does not linearize: give form='linear', or steady=None")


def test_the_check_report_names_the_api_where_the_command_line_names_flags() -> None:
    """The constrained pendulum's energy is longer than the text report shows: the command
    line's report points to ``--format json``, the API's (and a notebook's view of the system)
    to ``to_dict()``; no flag in the API's text, the command line's text as it prints it."""
    from lagsim.spec.options import WORDING

    system = lagsim.load("pendulum_constrained")
    report = system.check()
    text = report.to_text()
    assert "characters; to_dict() has it whole)" in text and "--" not in text
    assert "--" not in system._repr_html_()
    token = WORDING.set(FLAGS)
    try:
        flagged = report.to_text()
    finally:
        WORDING.reset(token)
    assert "characters; --format json prints it whole)" in flagged
    assert flagged.replace("--format json prints", "to_dict() has") == text
    assert cli("check", "pendulum_constrained").stdout == flagged


def test_the_notes_of_derived_forms_name_the_api_where_the_command_line_names_flags() -> None:
    """The pendulum has no constraints: its Udwadia–Kalaba form is M q̈ = F, and its note
    points to the matrix and Lagrange forms, as ``form=`` values in every format of the API and
    as ``--form`` in ``lagsim derive``'s."""
    pendulum = lagsim.load("pendulum")
    said = "see form='matrix' or 'lagrange'"
    for fmt in ("text", "latex"):
        text = str(pendulum.derive("udwadia-kalaba", format=fmt))
        assert said in text and "--" not in text
    document = pendulum.derive("udwadia-kalaba", format="json")
    assert any(said in note for note in document["notes"])
    printed = cli("derive", "pendulum", "--form", "udwadia-kalaba").stdout
    assert "see --form matrix or lagrange" in printed and said not in printed


def test_a_swept_column_is_named_quoted_after_x_and_y_in_both_wordings(tmp_path: Path) -> None:
    """A 2-D grid over theta0 and l drawn with ``--x theta0 --y l``: l is an input of the runs,
    refused naming both columns quoted, as every other message names a column (``no column
    'thet'``); the API's wording gives each as the keyword's value (``y='l'``), not ``y l``."""
    from lagsim.viz.sweep_figures import make_figure

    rows = [f"{k},{th},{l},0.1,0.2,1e-12,1e-12,nan,{th / l},"
            for k, (th, l) in enumerate((th, l) for l in (1, 2) for th in (0.1, 0.5))]
    table = tmp_path / "two.csv"
    table.write_text("run,theta0,l,theta,theta_dot,energy_drift,energy_change,stop_time,amp,"
                     "error\n" + "\n".join(rows) + "\n")
    with pytest.raises(lagsim.InputError) as caught:
        make_figure("sweep", str(table), "theta0", "l", None)
    error = caught.value
    assert str(error).startswith("--y: --y 'l' is a swept column, an input of the runs: drawn "
                                 "over --x 'theta0' it shows the grid")
    assert str(error.reworded(KEYWORDS.say)).startswith(
        "y: y='l' is a swept column, an input of the runs: drawn over x='theta0' it shows")
    with pytest.raises(lagsim.InputError) as no_y:
        make_figure("sweep", str(table), "theta0", None, None)
    assert KEYWORDS.say(str(no_y.value)) == (
        "y: give y, the column to draw against 'theta0', e.g. a summary column")


def _api_keywords() -> dict[str, object]:
    """Every keyword a public function or method of :mod:`lagsim.api` takes, with its default."""
    import inspect

    from lagsim import api

    found: dict[str, object] = {}
    for name, obj in vars(api).items():
        methods = ([obj] if inspect.isfunction(obj) else
                   [m for m in vars(obj).values() if inspect.isfunction(m)]
                   if inspect.isclass(obj) and obj.__module__ == api.__name__ else [])
        for method in methods if not name.startswith("_") else []:
            for parameter in inspect.signature(method).parameters.values():
                found.setdefault(parameter.name, parameter.default)
    return found


def _flags_in_messages() -> dict[str, str]:
    """Each flag the text of lagsim's messages names (string constants holding a space, not
    docstrings; the command line's own modules left out), with one place it stands."""
    import ast
    import re

    from lagsim.spec.options import _FLAG

    found: dict[str, str] = {}
    for path in sorted((Path(lagsim.__file__).parent).rglob("*.py")):
        if "cli" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        prose = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and " " in node.value and id(node) not in prose):
                for match in re.finditer(_FLAG, node.value):
                    found.setdefault(match.group(1), f"{path.name}:{node.lineno}")
    return found


def test_every_flag_a_message_names_has_one_declared_api_wording() -> None:
    """Each flag in lagsim's messages is a row of the options tables, an API keyword (an on/off
    one declared as a switch, so the API says ``force=True``, not ``force``), or declared
    command-line only; a command-line-only flag is a real flag of some command and no keyword
    of the API. ``--force`` was worded ``give force to replace it``, ``--plot`` as ``plot``."""
    import click

    from lagsim.spec.options import CLI_ONLY_FLAGS, FIT_OPTIONS, FLAG_SWITCHES, OPTIONS

    keywords = _api_keywords()
    rows = {o.flag: o for o in (*OPTIONS, *FIT_OPTIONS)}
    flags = _flags_in_messages()
    assert {"--force", "--plot", "--x", "--y", "--simplify"} <= set(flags)
    for flag, where in flags.items():
        keyword = KEYWORDS.flag(flag)
        if flag in rows or flag in CLI_ONLY_FLAGS:
            continue
        assert keyword in keywords, (flag, where)
        if isinstance(keywords[keyword], bool):
            assert flag in FLAG_SWITCHES, (flag, where)
            assert KEYWORDS.say(f"give {flag} to") == f"give {keyword}=True to"
    context = click.Context(main)
    command_flags = {opt for name in main.list_commands(context)
                     for param in main.get_command(context, name).params  # type: ignore[union-attr]
                     for opt in param.opts}
    for flag in CLI_ONLY_FLAGS:
        assert flag in command_flags and KEYWORDS.flag(flag) not in keywords, flag
        assert KEYWORDS.say(f"drop {flag}") == f"drop the command line's {flag}"


def test_each_format_a_command_offers_is_declared_in_choices() -> None:
    """``derive --format`` offers the forms' formats, every report's ``--format`` text and
    json, both from :mod:`lagsim.spec.choices` (derive, check and action had listed theirs)."""
    import click

    from lagsim.spec import choices

    context = click.Context(main)
    offered = {name: tuple(param.type.choices)  # type: ignore[attr-defined]
               for name in main.list_commands(context)
               for param in main.get_command(context, name).params  # type: ignore[union-attr]
               if "--format" in param.opts}
    assert offered.pop("derive") == choices.REPORT_FORMATS == ("text", "latex", "json")
    assert {"check", "action", "modes", "fit"} <= set(offered)
    assert set(offered.values()) == {choices.TEXT_FORMATS} and choices.TEXT_FORMATS == (
        "text", "json")
