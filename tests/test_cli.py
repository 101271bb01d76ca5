"""The command line as a user meets it: exit codes, one-line errors, stdin/stdout, bundled names.

Real subprocesses where the process boundary matters (exit status, stderr, broken pipes, running
from another folder); click's CliRunner elsewhere.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import sympy
from click.testing import CliRunner

from lagsim import __version__
from lagsim.cli import main

ROOT = Path(__file__).resolve().parents[1]
BAD = """parameters: {m: 1, l: 1}
coordinates: [x, y]
kinetic: 1/2*m*(x_dot**2 + y_dot**2)
constraints:
  - name: rod
    holonomic: x**2 + y**2 - L**2
"""


def run(*args: str, stdin: str | None = None, cwd: Path | None = None
        ) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "lagsim", *args], input=stdin,
                          capture_output=True, text=True, cwd=cwd or ROOT, env=env, timeout=300)


def test_input_error_is_one_line_exit_2_without_traceback(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(BAD)
    proc = run("derive", str(path))
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == (
        f"lagsim: error: {path}:6:30: constraint 'rod' 'x**2 + y**2 - L**2': unknown symbol 'L' "
        "(did you mean 'l'?); declare it under 'parameters' or 'coordinates' (velocities are "
        "written <coordinate>_dot, time is t)\n")


def test_debug_shows_the_traceback(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(BAD)
    proc = run("--debug", "derive", str(path))
    assert proc.returncode != 0
    assert "Traceback (most recent call last)" in proc.stderr
    assert "InputError" in proc.stderr


def test_bundled_system_by_name_from_another_folder(tmp_path):
    proc = run("derive", "pendulum", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["coordinates"] == ["theta"]
    th, thd, thdd, m, g, l = sympy.symbols("theta theta_dot theta_ddot m g l")
    (equation,) = data["equations"]
    lhs, rhs = (sympy.sympify(side) for side in equation.split("="))
    expected = m * l**2 * thdd + m * g * l * sympy.sin(th)
    assert sympy.simplify(lhs - rhs - expected) == 0


def test_path_that_exists_wins_over_bundled_name(tmp_path):
    (tmp_path / "pendulum").write_text("coordinates: [q]\nkinetic: q_dot**2\n")
    proc = run("derive", "pendulum", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["coordinates"] == ["q"]


def test_yaml_on_stdin():
    result = CliRunner().invoke(main, ["derive", "-", "--format", "json"],
                                input="coordinates: [x]\nparameters: {k: 2}\n"
                                      "kinetic: 1/2*x_dot**2\npotential: 1/2*k*x**2\n")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["mass_matrix"] == [["1"]]
    assert sympy.sympify(data["forcing"][0]) == -sympy.Symbol("k") * sympy.Symbol("x")


def test_unknown_system_name_suggests_a_bundled_one():
    result = CliRunner().invoke(main, ["derive", "pendulm"])
    assert result.exit_code == 2
    assert "did you mean 'pendulum'?" in result.output


def test_set_overrides_a_parameter_and_rejects_unknown_ones():
    runner = CliRunner()
    ok = runner.invoke(main, ["derive", "pendulum", "--format", "json", "--set", "l=2.5"])
    assert ok.exit_code == 0
    assert json.loads(ok.output)["parameters"]["l"] == 2.5
    bad = runner.invoke(main, ["derive", "pendulum", "--set", "length=2"])
    assert bad.exit_code == 2
    assert "--set: no such parameter 'length'" in bad.output


def test_singular_mass_matrix_warns_in_derive():
    result = CliRunner().invoke(main, ["derive", "-"],
                                input="coordinates: [x, y]\nkinetic: 1/2*x_dot**2\n"
                                      "potential: y**2 + x**2\n")
    assert result.exit_code == 0
    assert "the mass matrix is singular: the velocity of y appears nowhere" in result.output


@pytest.mark.parametrize("command", ["derive", "simulate", "plot", "animate", "systems"])
def test_every_command_has_help_with_an_example(command):
    result = CliRunner().invoke(main, [command, "--help"])
    assert result.exit_code == 0
    assert "Example:" in result.output
    assert "lagsim " + command in result.output


def test_version():
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0
    assert __version__ in result.output


def test_systems_lists_every_bundled_file():
    result = CliRunner().invoke(main, ["systems"])
    assert result.exit_code == 0
    listed = {line.split()[0] for line in result.output.splitlines()}
    assert listed == {p.stem for p in (ROOT / "systems").glob("*.yaml")}


@pytest.mark.parametrize("form", ["lagrange", "matrix", "dae", "index1", "udwadia-kalaba",
                                  "reduced"])
@pytest.mark.parametrize("fmt", ["text", "latex", "json"])
def test_every_form_and_format_of_a_constrained_system(form, fmt):
    result = CliRunner().invoke(main, ["derive", "pendulum_constrained", "--form", form,
                                       "--format", fmt])
    assert result.exit_code == 0, result.output
    if fmt == "json":
        data = json.loads(result.output)
        assert [c["name"] for c in data["constraints"]] == ["string", "plane"]
    elif fmt == "latex":
        assert "\\dot{\\theta}" in result.output or "\\ddot{\\theta}" in result.output
    else:
        assert "θ" in result.output


BLOWUP = """coordinates: [x]
kinetic: 1/2*x_dot**2
potential: -x**4
initial: {x: 1.0}
simulate: {t_end: 2}
"""


def test_simulate_to_a_file_and_read_it_back(tmp_path):
    out = tmp_path / "p.csv"
    result = CliRunner().invoke(main, ["simulate", "pendulum", "--t-end", "1", "--samples", "11",
                                       "-o", str(out)])
    assert result.exit_code == 0, result.output
    from lagsim.output.io import read_csv

    table = read_csv(out)
    assert table.columns == ("t", "theta", "theta_dot", "energy")
    assert table.column("t")[-1] == 1.0
    assert table.data.shape == (11, 4)
    energy = table.column("energy")
    assert abs(energy - energy[0]).max() <= 1e-8 * abs(energy[0])


def test_failed_run_exits_1_and_leaves_no_file(tmp_path):
    """ẍ = 4x³ from x = 1 blows up at t = K(1/2)/2 ≈ 0.927: the run fails, nothing is written."""
    src = tmp_path / "blowup.yaml"
    src.write_text(BLOWUP)
    out = tmp_path / "out.csv"
    proc = run("simulate", str(src), "-o", str(out))
    assert proc.returncode == 1
    assert proc.stderr.startswith("lagsim: error: at t = 0.92")
    assert proc.stderr.count("\n") == 1
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [src]


def test_failed_run_keeps_an_existing_output_untouched(tmp_path):
    src = tmp_path / "blowup.yaml"
    src.write_text(BLOWUP)
    out = tmp_path / "out.csv"
    out.write_text("old\n")
    assert run("simulate", str(src), "-o", str(out)).returncode == 1
    assert out.read_text() == "old\n"


def test_bad_flag_exits_2_naming_the_option():
    result = CliRunner().invoke(main, ["simulate", "pendulum", "--rtol", "-1"])
    assert result.exit_code == 2
    assert "--rtol must be positive, got -1.0" in result.output


def test_simulate_reads_yaml_from_stdin():
    text = (ROOT / "systems" / "pendulum.yaml").read_text()
    proc = run("simulate", "--t-end", "0.5", "--samples", "3", stdin=text)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "t,theta,theta_dot,energy"
    assert [float(r.split(",")[0]) for r in lines[1:]] == [0.0, 0.25, 0.5]


def test_piping_into_head_ends_quietly():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        f"{sys.executable} -m lagsim simulate double_pendulum --samples 20001 | head -2",
        shell=True, capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert proc.stdout.count("\n") == 2
    assert "Traceback" not in proc.stderr
    assert "BrokenPipe" not in proc.stderr


def test_pipeline_simulate_into_plot(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = tmp_path / "p.png"
    proc = subprocess.run(
        f"{sys.executable} -m lagsim simulate pendulum_natural --t-end 2 | "
        f"{sys.executable} -m lagsim plot -o {out}",
        shell=True, capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_a_system_directly_with_its_path(tmp_path):
    out = tmp_path / "path.svg"
    result = CliRunner().invoke(main, ["plot", "double_pendulum", "--t-end", "1", "--kind", "path",
                                       "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert b"<svg" in out.read_bytes()[:500]


def test_plot_without_output_or_display_writes_a_png(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    csv = tmp_path / "run.csv"
    assert CliRunner().invoke(main, ["simulate", "pendulum", "--t-end", "1", "-o",
                                     str(csv)]).exit_code == 0
    result = CliRunner().invoke(main, ["plot", str(csv)])
    assert result.exit_code == 0, result.output
    assert "writing run.png" in result.output
    assert (tmp_path / "run.png").read_bytes()[:4] == b"\x89PNG"


def test_path_of_a_csv_needs_the_system(tmp_path):
    csv = tmp_path / "run.csv"
    CliRunner().invoke(main, ["simulate", "pendulum", "--t-end", "1", "-o", str(csv)])
    result = CliRunner().invoke(main, ["plot", str(csv), "--kind", "path", "-o",
                                       str(tmp_path / "x.png")])
    assert result.exit_code == 2
    assert "--kind path needs the system" in result.output
    assert not (tmp_path / "x.png").exists()


def test_animate_writes_the_requested_frames(tmp_path):
    from PIL import Image

    out = tmp_path / "dp.gif"
    result = CliRunner().invoke(main, ["animate", "double_pendulum", "--t-end", "1", "--fps", "8",
                                       "--dpi", "50", "-o", str(out)])
    assert result.exit_code == 0, result.output
    with Image.open(out) as gif:
        assert gif.n_frames == 8
        small = gif.size
    CliRunner().invoke(main, ["animate", "double_pendulum", "--t-end", "1", "--fps", "8",
                              "--dpi", "100", "-o", str(out)])
    with Image.open(out) as gif:
        assert gif.size == (2 * small[0], 2 * small[1])


def test_progress_bar_only_on_a_terminal(monkeypatch):
    """A run of over about a second draws a bar on a terminal, and nothing in a pipeline."""
    import io

    from lagsim.cli.progress import Progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    for stream, expect_bar in ((Terminal(), True), (io.StringIO(), False)):
        monkeypatch.setattr(sys, "stderr", stream)
        progress = Progress()
        progress.start -= 2.0
        for k in range(11):
            progress(k / 10)
        progress.close()
        assert ("simulating" in stream.getvalue()) is expect_bar


def test_derive_status_only_on_a_terminal(monkeypatch):
    """A derivation past about a second names its stage on a terminal, and erases it."""
    import io

    from lagsim.cli.progress import Status

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    for stream, expect in ((Terminal(), True), (io.StringIO(), False)):
        monkeypatch.setattr(sys, "stderr", stream)
        status = Status()
        status.start -= 2.0
        status("forming the matrix form")
        status.close()
        text = stream.getvalue()
        assert ("lagsim: forming the matrix form" in text) is expect
        assert text.endswith("\r\033[K") is expect


@pytest.mark.parametrize("text, message", [
    ("t,x\n0.0,1.0\n", "a plot needs at least two samples"),
    ("t,x\n0.0,1.0\n0.1,abc\n", "abc"),
    ("x,y\n0.0,1.0\n0.1,2.0\n", "t"),
])
def test_plot_of_a_bad_csv_exits_2_and_writes_nothing(tmp_path, text, message):
    src = tmp_path / "bad.csv"
    src.write_text(text)
    out = tmp_path / "bad.png"
    proc = run("plot", str(src), "-o", str(out))
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"lagsim: error: {src}:")
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists()


def test_wheel_ships_the_bundled_systems(tmp_path):
    """`pip install .` (not editable) must carry systems/*.yaml inside the package."""
    import zipfile

    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                           "-w", str(tmp_path), str(ROOT)],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        pytest.fail(f"pip wheel failed: {proc.stderr[-500:]}")
    (wheel,) = tmp_path.glob("lagsim-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {n.rsplit("/", 1)[-1] for n in names if n.startswith("lagsim/systems/")}
    assert {p.name for p in (ROOT / "systems").glob("*.yaml")} <= shipped


def test_simulate_refuses_a_singular_mass_matrix_pointing_at_the_coordinate():
    result = CliRunner().invoke(main, ["simulate", "-"],
                                input="coordinates: [x, y]\nkinetic: 1/2*x_dot**2\n"
                                      "potential: y**2 + x**2\n")
    assert result.exit_code == 2
    assert result.output.startswith("lagsim: error: <stdin>:1:18: the mass matrix is singular: "
                                    "the velocity of y appears nowhere in the kinetic energy")


def test_an_unexpected_failure_is_one_line_without_traceback(monkeypatch, tmp_path):
    from lagsim.spec import system as spec

    monkeypatch.setenv("LAGSIM_CACHE", str(tmp_path))  # no validated spec kept from before
    def broken(*_args, **_kwargs):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(spec, "parse_spec", broken)
    result = CliRunner().invoke(main, ["derive", "pendulum"])
    assert result.exit_code == 1
    assert result.output == ("lagsim: error: internal error (ZeroDivisionError: division by "
                             "zero); this is a bug in lagsim: please report it with the output "
                             "of --debug\n")
    debug = CliRunner().invoke(main, ["--debug", "derive", "pendulum"])
    assert isinstance(debug.exception, ZeroDivisionError)


@pytest.mark.parametrize(("args", "line", "command"), [
    (("derive", "pendulum", "--form", "foo"),
     "lagsim: error: Invalid value for '--form': 'foo' is not one of 'lagrange',", "lagsim derive"),
    (("simulat",), "lagsim: error: No such command 'simulat'. Did you mean 'simulate'?",
     "lagsim"),
    (("simulate", "pendulum", "--formulat", "index1"),
     "lagsim: error: No such option '--formulat'. Did you mean '--formulation'?",
     "lagsim simulate"),
])
def test_usage_errors_are_in_lagsims_style(args, line, command):
    """Issue 13, one error style: click's usage errors are one 'lagsim: error:' line (with the
    choices or a 'did you mean'), then at most one line saying where help is; exit 2."""
    proc = run(*args)
    assert proc.returncode == 2
    first, second = proc.stderr.splitlines()
    assert first.startswith(line), first
    assert second == f"Try '{command} --help' for help."


def test_the_command_table_summaries_are_the_commands_own_first_sentences() -> None:
    """`lagsim --help` lists each command from the table; its summary is the first sentence of
    the command's own help (what click would list had it loaded the command)."""
    import click

    from lagsim.cli.group import COMMANDS, load_command

    for name, summary in COMMANDS.items():
        command = load_command(name)
        assert command.name == name
        own = command.get_short_help_str(limit=10_000)
        listed = click.Command(name, help=summary).get_short_help_str(limit=10_000)
        assert (name, listed) == (name, own)


def test_help_imports_no_command_module() -> None:
    """`lagsim --help` is built from the table (issue 31, "Start-up"): of lagsim only the group
    is imported (no command module, not lagsim.errors nor lagsim.cli.exits, which load when a
    command runs), and none of the libraries a command may need, dataclasses included (the
    table is plain text), nor shutil (the width of the help is lagsim.cli.group.help_width)."""
    heavy = ("symengine", "sympy", "numpy", "scipy", "yaml", "dataclasses",
             "importlib.resources", "click.shell_completion", "shutil")
    code = ("import sys\nfrom lagsim.cli import main\n"
            "try:\n    main(['--help'], prog_name='lagsim')\nexcept SystemExit:\n    pass\n"
            f"heavy = {heavy!r}\n"
            "print(sorted(m for m in sys.modules if m.startswith('lagsim.') or m in heavy))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "['lagsim.cli', 'lagsim.cli.group']"


@pytest.mark.parametrize("columns", [None, "30", "60", "79", "80", "81", "200", "0", "wide"])
def test_the_help_width_is_the_one_click_takes_by_itself(monkeypatch, columns) -> None:
    """lagsim.cli.group.help_width, found without shutil, is the width click's HelpFormatter
    takes from shutil.get_terminal_size for every $COLUMNS (unset, narrow, wide, invalid), and
    None while click's test runner forces its own."""
    import click

    from lagsim.cli.group import help_width

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert click.HelpFormatter(width=help_width()).width == click.HelpFormatter().width
    monkeypatch.setattr(click.formatting, "FORCED_WIDTH", 80)
    assert help_width() is None


def test_a_warm_simulate_imports_only_what_a_plain_run_needs(tmp_path: Path) -> None:
    """`lagsim simulate pendulum` with its model in the compile cache (issue 31, "Start-up"):
    no SymPy or scipy, no importlib.resources or zipfile (the bundled files are read from their
    package folders), no fractions or decimal, and neither the added columns (--invariants,
    --action) nor the feedback of --controller, which only the runs that ask for them import;
    nothing of the pictures (lagsim.viz, matplotlib) or of sweeps (dask); of the engines only
    those the driver asks before the C DOP853 loop takes the run: not the loop of impacts with
    its contacts (only a system with unilateral constraints runs there), nor the fixed-step
    methods' loops (only their names are asked), nor click's shell completion, nor tempfile
    with random (lagsim.output.io.make_temporary makes the file the CSV replaces), nor
    numpy.typing (annotations only); nothing of a build (subprocess, lagsim.numeric.factoring),
    nor the direct call of the right-hand side (its extension's build reads sysconfig), which
    the C loop does not call; neither the events of --stop-when and --section nor the
    sensitivities of --sensitivities; nor the engines after the C DOP853 loop in the driver's
    table (the C Radau loop, the Python loop with its aliasing watch and BLAS threads), nor the
    Jacobians of the implicit methods; nor the frames and rotations of bodies (a pendulum's
    mass is a point); nor PyYAML and the reader (the second run's spec comes from the
    validated-spec cache, lagsim.api.open_system)."""
    out = tmp_path / "pendulum.csv"
    args = ["simulate", "pendulum", "-o", str(out), "--force"]
    absent = ("sympy", "scipy", "importlib.resources", "zipfile", "fractions", "decimal",
              "lagsim.run.columns", "lagsim.symbolic.feedback", "matplotlib", "dask",
              "lagsim.viz", "lagsim.sweep", "lagsim.run.engines.impacts", "lagsim.run.contacts",
              "lagsim.run.engines.rattle", "lagsim.run.engines.variational",
              "click.shell_completion", "tempfile", "random", "numpy.typing", "sysconfig",
              "subprocess", "lagsim.numeric.factoring", "lagsim.run.events",
              "lagsim.run.sensitivity", "lagsim.run.engines.python", "lagsim.run.engines.cradau",
              "lagsim.run.aliasing", "lagsim.run.threads",
              "lagsim.numeric.jacobian", "lagsim.symbolic.bodies", "lagsim.symbolic.rotations",
              "lagsim.symbolic.vanishing", "yaml", "lagsim.spec.reader")
    code = ("import sys\nfrom lagsim.cli import main\n"
            f"try:\n    main({args!r}, prog_name='lagsim')\nexcept SystemExit as exc:\n"
            "    assert not exc.code, exc.code\n"
            f"print(sorted(m for m in {absent!r} if m in sys.modules))")
    for _ in range(2):  # the first run fills the compile cache if it is cold
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "[]"
    assert out.read_text().startswith("t,theta,theta_dot,energy\n")


def test_a_command_runs_with_the_young_generation_collected_less_often(monkeypatch) -> None:
    """While a command runs, the collector's first generation waits for
    lagsim.cli.group.YOUNG_GENERATION objects (not Python's 700), the older generations keep
    theirs, and the thresholds of before are back once it ends (a test runner's process is
    left as it was)."""
    import gc

    import click

    from lagsim.cli import group

    seen: list[tuple[int, ...]] = []
    command = click.Command("systems", callback=lambda: seen.append(gc.get_threshold()))
    monkeypatch.setattr(group, "load_command", lambda name: command)
    before = gc.get_threshold()
    result = CliRunner().invoke(main, ["systems"])
    assert result.exit_code == 0, result.output
    assert seen == [(group.YOUNG_GENERATION, *before[1:])]
    assert group.YOUNG_GENERATION > before[0]
    assert gc.get_threshold() == before


def test_a_command_runs_with_one_blas_thread_whatever_the_environment_says() -> None:
    """Before NumPy loads, the command sets one thread for every BLAS (issue 31: worker threads
    slow lagsim's small dense solves); a process that loaded NumPy already is left alone."""
    probe = ("import os, sys\n"
             "os.environ['OPENBLAS_NUM_THREADS'] = '4'\n"
             "if sys.argv[1] == 'late': import numpy\n"
             "from lagsim.cli.group import BLAS_THREADS, one_blas_thread\n"
             "one_blas_thread()\n"
             "print(*(os.environ.get(k) for k in BLAS_THREADS))\n")
    for when, expected in (("early", "1 1 1 1"), ("late", "4 None None None")):
        env = {k: v for k, v in os.environ.items()
               if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")}
        done = subprocess.run([sys.executable, "-c", probe, when], capture_output=True,
                              text=True, env=env, check=True)
        assert done.stdout.split() == expected.split(), when
