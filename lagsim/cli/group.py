"""The ``lagsim`` group: its options, and the table of its commands, each loaded only when run
(pip's ``commands_dict``; click's documentation, "Lazily Loading Subcommands"), so that
``lagsim --help`` lists them from the table without importing one."""

from __future__ import annotations

import gc
import importlib
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from lagsim import __version__

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem

COMMANDS = {
    "action": ("The action S = ∫ L dt of FILE along a path, a simulated run, or the "
               "stationary path."),
    "animate": ("Animate the masses of a system: dots, rods, a fading trail, a clock and "
                "gravity."),
    "cache": "Show or clear the compile cache of compiled models.",
    "check": ("Report what FILE is: coordinates, constraints, rank and degrees of "
              "freedom, redundant constraints, whether each velocity constraint is "
              "holonomic (Frobenius' test) and what is conserved (energy, cyclic and "
              "Noether momenta)."),
    "completion": "Print the completion script of lagsim for SHELL (bash, zsh or fish).",
    "derive": "Print the equations of motion of FILE in the chosen form.",
    "equilibria": ("List the equilibria of FILE: rest states with F(q, 0) + Aᵀλ = 0 and "
                   "the constraints."),
    "export": ("Export FILE as standalone C (--c DIR) or as an FMI 2.0 or 3.0 FMU "
               "(--fmu [--fmi 3]), to run it in other tools."),
    "fit": "Fit parameters and initial values of FILE to the columns of DATA.csv.",
    "lqr": ("Design a linear-quadratic regulator of FILE's inputs about an equilibrium: "
            "the gain K, the closed-loop eigenvalues and controllability."),
    "lyapunov": ("Print the Lyapunov exponents of FILE's motion from its initial state "
                 "(tangent dynamics with periodic QR)."),
    "modes": ("Print the small oscillations of FILE about an equilibrium or a steady "
              "motion."),
    "new": "Copy the bundled system NAME into a file of your own, as a starting point.",
    "plot": ("Draw the trajectory, constraint drift and energy drift of a CSV, or of a "
             "system."),
    "schema": "Print the JSON Schema (draft 2020-12) of the system file, for editors.",
    "simulate": "Integrate FILE and write the trajectory as CSV.",
    "sweep": ("Simulate FILE once for every combination of the swept values, on this "
              "machine's cores or a Dask cluster, and write one row per run: the values, "
              "the final state, the largest constraint residuals, the energy drift (or, "
              "when h is not conserved, its change), the stop time of --stop-when and "
              "each --summary."),
    "systems": "List the bundled systems, with the first line of each description.",
}
"""The commands of ``lagsim``, by name, with their summaries: the line ``lagsim --help`` lists,
the first sentence of the command's own help (tests/test_cli.py holds them to it). Command
``name`` is ``command`` of the module ``lagsim.cli.commands.<name>``."""


def load_command(name: str) -> click.Command:
    """The command ``name`` of :data:`COMMANDS`, its module imported now."""
    module = f"lagsim.cli.commands.{name}"
    command = importlib.import_module(module).command
    if not isinstance(command, click.Command):
        raise TypeError(f"{module}.command is not a click command")
    return command


def _summary(name: str, limit: int = 45) -> str:
    """The summary of command ``name`` shortened to ``limit`` as click shortens a help text."""
    return click.Command(name, help=COMMANDS[name]).get_short_help_str(limit)


def help_width() -> int | None:
    """The width of help text that click's ``HelpFormatter`` takes by itself: the columns of
    :func:`shutil.get_terminal_size` (``$COLUMNS``, else the terminal of ``sys.__stdout__``,
    else 80), at most 80, less 2, at least 50; found without importing shutil, which imports
    zlib, bz2 and lzma (a twentieth of ``lagsim --help``, issue 31). None when click's test
    runner forces a width (``click.formatting.FORCED_WIDTH``): click decides then.
    tests/test_cli.py holds it to click's own."""
    if click.formatting.FORCED_WIDTH is not None:
        return None
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        stdout = sys.__stdout__
        try:
            columns = (os.get_terminal_size(stdout.fileno()).columns if stdout is not None
                       else 0) or 80
        except (ValueError, OSError):
            columns = 80
    return max(min(columns, 80) - 2, 50)


BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                "BLIS_NUM_THREADS")
"""The variables by which the BLAS libraries NumPy may load take their number of threads."""


def one_blas_thread() -> None:
    """One BLAS thread for the command's process and the processes it starts (a sweep's
    workers), whatever the environment says, when NumPy is not loaded yet (then lagsim owns the
    process). lagsim's dense solves are of n ≤ a few hundred: BLAS worker threads only wake up
    and contend for the cores (issue 31: the 32-chain's run is faster with one), and a sweep
    already runs one process per core."""
    if "numpy" not in sys.modules:
        os.environ.update(dict.fromkeys(BLAS_THREADS, "1"))


YOUNG_GENERATION = 10_000
"""The threshold of the garbage collector's first generation while a command runs (Python's
default is 700; ``gc.set_threshold``). A command's imports make tens of thousands of objects
that live as long as the process (modules, classes, functions); at 700 the collector went
through them 68 times during a warm ``lagsim simulate pendulum``, ≈ 2 % of its instructions
and more of its time (issue 31, "Start-up"). Cycles are still collected, 14 times less often;
the older generations keep their thresholds."""


@contextmanager
def spaced_collections() -> Iterator[None]:
    """:data:`YOUNG_GENERATION` as the first generation's threshold, the previous one put back
    after."""
    before = gc.get_threshold()
    gc.set_threshold(YOUNG_GENERATION, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


class LagsimGroup(click.Group):
    """The group of :data:`COMMANDS`, lazily loaded, with lagsim's errors and exit codes
    (:mod:`lagsim.cli.exits`)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return load_command(cmd_name) if cmd_name in COMMANDS else None

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        """click's, with the table's names as the suggestions of an unknown command (click
        8.4's NoSuchCommand, which has the ``command_name``)."""
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as exc:
            missing = getattr(exc, "command_name", None)
            if missing is None:
                raise
            raise click.exceptions.NoSuchCommand(missing, possibilities=sorted(COMMANDS),
                                                 ctx=ctx) from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands and their summaries, from the table (no command module is imported),
        shortened as click shortens a command's help."""
        limit = formatter.width - 6 - max(map(len, COMMANDS))
        rows = [(name, _summary(name, limit)) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[CompletionItem]:
        """The commands starting with ``incomplete``, with their summaries from the table, then
        the group's options."""
        from click.shell_completion import CompletionItem

        results = [CompletionItem(name, help=_summary(name))
                   for name in self.list_commands(ctx) if name.startswith(incomplete)]
        results.extend(click.Command.shell_complete(self, ctx, incomplete))
        return results

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """``--debug`` anywhere before a ``--`` counts as the group's (``lagsim derive x
        --debug`` as well as ``lagsim --debug derive x``)."""
        end = args.index("--") if "--" in args else len(args)
        if "--debug" in args[:end]:
            args = ["--debug", *(a for a in args[:end] if a != "--debug"), *args[end:]]
        return super().parse_args(ctx, args)

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        """click's, with the width of help text found without shutil (:func:`help_width`); the
        commands' contexts inherit it."""
        if parent is None and extra.get("terminal_width") is None:
            extra["terminal_width"] = help_width()
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as exc:
            from lagsim.cli.exits import UsageError

            raise exc if isinstance(exc, UsageError) else UsageError(exc) from None

    def invoke(self, ctx: click.Context) -> Any:
        one_blas_thread()
        with spaced_collections():
            return self._invoke(ctx)

    def _invoke(self, ctx: click.Context) -> Any:
        # lagsim's errors, SymEngine and the numerics load here, not when `lagsim --help` is
        # built.
        from lagsim.cli.exits import handled, signals_interrupt, stdout_present, warnings_routed
        from lagsim.errors import DEBUG
        from lagsim.numeric import stages
        from lagsim.spec.options import FLAGS, WORDING
        from lagsim.symbolic.expansion import signals_end_process

        debugging = DEBUG.set(bool(ctx.params.get("debug")))
        wording = WORDING.set(FLAGS)
        try:
            with signals_interrupt(), stdout_present(), warnings_routed(ctx), \
                    signals_end_process(), stages.shown():
                return handled(ctx, lambda: super(LagsimGroup, self).invoke(ctx))
        finally:
            WORDING.reset(wording)
            DEBUG.reset(debugging)


@click.group(cls=LagsimGroup, context_settings={"help_option_names": ["-h", "--help"]},
             epilog="\b\nExample:\n  lagsim simulate pendulum --t-end 10 | lagsim plot -o p.png")
@click.version_option(__version__, prog_name="lagsim")
@click.option("--debug", is_flag=True, help="Show tracebacks and symbolic-engine fallbacks "
              "(also accepted after the command: lagsim derive FILE --debug).")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """Derive and simulate the equations of motion of constrained mechanical systems.

    FILE is a YAML system file, the name of a bundled system (see `lagsim systems`), or - for
    standard input.
    """
    ctx.obj = {"debug": debug}
