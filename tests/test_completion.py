"""Shell completion through click's mechanism (issue 13, "Shell completion").

The completions are asked for the way the shell scripts ask (``_LAGSIM_COMPLETE=bash_complete``
with ``COMP_WORDS`` and ``COMP_CWORD`` in a subprocess), in this process through click's
``BashComplete``, and once through bash itself with the script ``lagsim completion bash``
prints. The bundled names come from the registry ``lagsim systems`` lists
(:func:`lagsim.spec.system.bundled_systems`); the choices from the click options.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.shell_completion import BashComplete
from click.testing import CliRunner

from lagsim.cli import main
from lagsim.cli.commands.derive import form_choices
from lagsim.cli.completion import complete_choices
from lagsim.spec.system import bundled_systems
from lagsim.viz.kinds import KINDS

LAGSIM = [sys.executable, "-m", "lagsim"]


def complete(line: str, shell: str = "bash") -> list[tuple[str, str]]:
    """(type, value) of each completion offered for ``line``, asked for in a subprocess as the
    shell script asks; a trailing blank asks for the next word, else the last word is
    completed."""
    words = line.split()
    cword = len(words) if line.endswith(" ") else len(words) - 1
    env = {**os.environ, "_LAGSIM_COMPLETE": f"{shell}_complete",
           "COMP_WORDS": line, "COMP_CWORD": str(cword)}
    result = subprocess.run(LAGSIM, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    if shell == "zsh":
        lines = result.stdout.splitlines()
        return [(lines[i], lines[i + 1]) for i in range(0, len(lines), 3)]
    return [tuple(item.split(",", 1)) for item in result.stdout.splitlines()]  # type: ignore


def values(line: str) -> list[str]:
    """The words offered for ``line``, asked for in this process (what the protocol above
    carries)."""
    words = shlex.split(line)
    args, incomplete = (words[1:], "") if line.endswith(" ") else (words[1:-1], words[-1])
    offered = BashComplete(main, {}, "lagsim", "_LAGSIM_COMPLETE").get_completions(args,
                                                                                 incomplete)
    return [item.value for item in offered if item.type == "plain"]


def test_a_system_name_completes_from_the_bundled_ones() -> None:
    offered = complete("lagsim derive pend")
    assert offered[0] == ("file", "pend")
    assert [v for _, v in offered[1:]] == ["pendulum", "pendulum_constrained",
                                            "pendulum_natural", "pendulum_redundant",
                                            "pendulum_stop"]
    assert values("lagsim derive pend") == [v for _, v in offered[1:]]
    assert [n for n in bundled_systems() if n.startswith("pend")] == [v for _, v in offered[1:]]


@pytest.mark.parametrize(("line", "expected"), [
    ("lagsim simulate sk", ["skate"]),
    ("lagsim plot dou", ["double_pendulum", "double_pendulum_constrained"]),
    ("lagsim animate spr", ["spring_pendulum"]),
])
def test_every_system_argument_completes_names(line: str, expected: list[str]) -> None:
    assert values(line) == expected


def test_no_matching_name_leaves_the_files_to_the_shell() -> None:
    assert complete("lagsim simulate ./my") == [("file", "./my")]


def test_zsh_gets_names_and_files_alike() -> None:
    assert complete("lagsim derive kep", "zsh") == [("file", "kep"), ("plain", "kepler")]


@pytest.mark.parametrize(("line", "expected"), [
    ("lagsim derive --form u", ["udwadia-kalaba"]),
    ("lagsim derive pendulum --form ", list(form_choices())),
    ("lagsim derive --format l", ["latex"]),
    ("lagsim plot --kind ", list(KINDS)),
    ("lagsim plot --kind p", ["phase", "path", "poincare"]),
    ("lagsim completion ", ["bash", "zsh", "fish"]),
    ("lagsim sch", ["schema"]),
    ("lagsim s", ["schema", "simulate", "sweep", "systems"]),
    ("lagsim simulate --method dop", ["DOP853"]),
    ("lagsim simulate pendulum --formulation u", ["udwadia-kalaba"]),
    ("lagsim plot --stabilize ", ["none", "baumgarte", "projection"]),
])
def test_choices_complete(line: str, expected: list[str]) -> None:
    assert sorted(values(line)) == sorted(expected)


@pytest.mark.parametrize(("shell", "marks"), [
    ("bash", ["_LAGSIM_COMPLETE=bash_complete", "complete -o nosort -F _lagsim_completion lagsim"]),
    ("zsh", ["#compdef lagsim", "_LAGSIM_COMPLETE=zsh_complete", "compdef _lagsim_completion"]),
    ("fish", ["_LAGSIM_COMPLETE=fish_complete", "complete --no-files --command lagsim"]),
])
def test_completion_prints_the_script(shell: str, marks: list[str]) -> None:
    result = CliRunner().invoke(main, ["completion", shell])
    assert result.exit_code == 0, result.output
    for mark in marks:
        assert mark in result.output


def test_completion_of_an_unknown_shell_is_refused() -> None:
    result = CliRunner().invoke(main, ["completion", "tcsh"])
    assert result.exit_code == 2
    assert "'tcsh' is not one of 'bash', 'zsh', 'fish'" in result.output


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_the_bash_script_completes_in_bash(tmp_path: Path) -> None:
    """bash sources the printed script and runs its function as a TAB would."""
    script = tmp_path / "lagsim-completion.bash"
    script.write_text(CliRunner().invoke(main, ["completion", "bash"]).output)
    program = tmp_path / "bin" / "lagsim"
    program.parent.mkdir()
    program.write_text(f"#!/bin/sh\nexec {shlex.join(LAGSIM)} \"$@\"\n")
    program.chmod(0o755)
    driver = (f"source {shlex.quote(str(script))}\n"
              "COMP_WORDS=(lagsim derive pendulum_n); COMP_CWORD=2\n"
              "_lagsim_completion lagsim 2>/dev/null\n"
              "printf '%s\\n' \"${COMPREPLY[@]}\"\n"
              "COMP_WORDS=(lagsim derive --form ma); COMP_CWORD=3\n"
              "COMPREPLY=(); _lagsim_completion lagsim\n"
              "printf '%s\\n' \"${COMPREPLY[@]}\"\n")
    env = {**os.environ, "PATH": f"{program.parent}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(["bash", "-c", driver], env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["pendulum_natural", "matrix"]


def test_choices_checked_later_complete_without_regard_to_case() -> None:
    """What ``--method`` will offer through :func:`complete_choices` (the loader folds case)."""
    from lagsim.run.integrate import METHODS

    asked = []

    def methods() -> tuple[str, ...]:
        asked.append(1)
        return tuple(METHODS)

    command = click.Command("run", params=[
        click.Option(["--method"], shell_complete=complete_choices(methods))])
    assert asked == []
    shell = BashComplete(command, {}, "run", "_RUN_COMPLETE")
    assert [i.value for i in shell.get_completions(["--method"], "dop")] == ["DOP853"]
    assert [i.value for i in shell.get_completions(["--method"], "R")] == ["RK45", "RK23", "Radau",
                                                                         "rattle"]
    assert [i.value for i in shell.get_completions(["--method"], "")] == list(METHODS)
    assert len(asked) == 3
