"""Shell completion of the arguments that name a system (issue 13, "Shell completion").

click's mechanism drives completion for bash, zsh and fish (``lagsim completion SHELL`` prints
the script); options with a :class:`click.Choice` complete their values by themselves. Here the
FILE arguments complete the bundled systems' names, from the registry ``lagsim systems`` reads
(:func:`lagsim.spec.system.bundled_systems`), and paths; :func:`complete_choices` completes an
option
whose choices are checked later, by the stage that reads it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem

Completer = Callable[[click.Context, click.Parameter, str], "list[CompletionItem]"]
"""A ``shell_complete`` callback. click.shell_completion is imported when completing only, not
by a command's run (issue 31, "Start-up")."""


def complete_system(_ctx: click.Context, _param: click.Parameter, incomplete: str
                    ) -> list[CompletionItem]:
    """The bundled systems whose names start with ``incomplete``, and the shell's own path
    completion.

    The path item comes first: bash's script (click's) empties its list on a path item, so
    placed first it offers the names when some match and the files when none does; zsh and fish
    offer both.
    """
    from click.shell_completion import CompletionItem

    from lagsim.spec.system import bundled_systems

    names = [CompletionItem(name) for name in bundled_systems() if name.startswith(incomplete)]
    return [CompletionItem(incomplete, type="file"), *names]


def complete_choices(names: Callable[[], Iterable[str]]) -> Completer:
    """A completer of the values ``names()`` returns (called only when completing, so a
    registry behind it is imported only then), matched without regard to case as the options
    of a run are (``dop`` offers ``DOP853``). For an option that is text on the command line and
    a choice once validated, such as ``--method``: ``shell_complete=complete_choices(...)``."""
    def complete(_ctx: click.Context, _param: click.Parameter, incomplete: str
                 ) -> list[CompletionItem]:
        from click.shell_completion import CompletionItem

        return [CompletionItem(name) for name in names()
                if name.lower().startswith(incomplete.lower())]
    return complete
