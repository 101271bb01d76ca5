"""``lagsim completion``: the shell's completion script (issue 13, "Shell completion";
the completers are :mod:`lagsim.cli.completion`)."""

from __future__ import annotations

import click
from click.shell_completion import BashComplete, FishComplete, ShellComplete, ZshComplete

SHELLS: dict[str, type[ShellComplete]] = {"bash": BashComplete, "zsh": ZshComplete,
                                          "fish": FishComplete}
"""The shells of click's completion mechanism that ``lagsim completion`` prints a script for."""


@click.command("completion")
@click.argument("shell", type=click.Choice(tuple(SHELLS)))
@click.pass_context
def command(ctx: click.Context, shell: str) -> None:
    """Print the completion script of lagsim for SHELL (bash, zsh or fish).

    \b
    bash: eval "$(lagsim completion bash)" in ~/.bashrc
    zsh:  eval "$(lagsim completion zsh)" in ~/.zshrc, after compinit
    fish: lagsim completion fish > ~/.config/fish/completions/lagsim.fish
    """
    root = ctx.find_root().command
    click.echo(SHELLS[shell](root, {}, "lagsim", "_LAGSIM_COMPLETE").source())
