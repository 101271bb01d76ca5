"""`lagsim systems --show NAME` and `lagsim new NAME -o FILE` (issue 14, "The showcase looks like
physics"): after `pip install` the bundled files sit in site-packages, so these two commands are
how a student reads one and starts from a copy."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from lagsim.cli import main
from lagsim.spec.system import bundled_systems, load_spec

SYSTEMS = Path(__file__).resolve().parents[1] / "systems"


def test_show_prints_the_bundled_file_byte_for_byte() -> None:
    result = CliRunner().invoke(main, ["systems", "--show", "double_pendulum"])
    assert result.exit_code == 0, result.output
    assert result.output == (SYSTEMS / "double_pendulum.yaml").read_text(encoding="utf-8")


def test_show_of_an_unknown_name_suggests_the_closest() -> None:
    result = CliRunner().invoke(main, ["systems", "--show", "pendlum"])
    assert result.exit_code == 2
    assert result.output.startswith("lagsim: error: --show: no bundled system 'pendlum' "
                                    "(did you mean 'pendulum'?)")
    assert result.output.count("\n") == 1


def test_the_list_aligns_every_summary_after_the_longest_name() -> None:
    result = CliRunner().invoke(main, ["systems"])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    names = bundled_systems()
    assert [line.split()[0] for line in lines] == names
    width = max(map(len, names)) + 2
    assert all(line[width - 2:width] == "  " and line[width] != " " for line in lines)
    assert all(len(line) <= 96 for line in lines)


def test_new_copies_a_system_and_names_it_after_the_file(tmp_path: Path) -> None:
    out = tmp_path / "my_pendulum.yaml"
    result = CliRunner().invoke(main, ["new", "double_pendulum", "-o", str(out)])
    assert result.exit_code == 0, result.output
    copy = yaml.safe_load(out.read_text(encoding="utf-8"))
    original = yaml.safe_load((SYSTEMS / "double_pendulum.yaml").read_text(encoding="utf-8"))
    assert copy.pop("name") == "my_pendulum" and original.pop("name") == "double_pendulum"
    assert copy == original
    spec = load_spec(out)
    assert spec.name == "my_pendulum" and spec.coordinates == ("theta1", "theta2")
    assert f"wrote {out}" in result.output


def test_new_keeps_an_existing_file_unless_forced(tmp_path: Path) -> None:
    out = tmp_path / "mine.yaml"
    out.write_text("name: mine  # edited by hand\n", encoding="utf-8")
    refused = CliRunner().invoke(main, ["new", "pendulum", "-o", str(out)])
    assert refused.exit_code == 2
    assert refused.output == (f"lagsim: error: -o: '{out}' exists; give --force to replace it, "
                              "or another file name\n")
    assert out.read_text(encoding="utf-8") == "name: mine  # edited by hand\n"
    forced = CliRunner().invoke(main, ["new", "pendulum", "-o", str(out), "--force"])
    assert forced.exit_code == 0, forced.output
    assert load_spec(out).coordinates == ("theta",)


def test_new_to_standard_output_is_the_bundled_file(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["new", "pendulum", "-o", "-"])
    assert result.exit_code == 0
    assert result.stdout == (SYSTEMS / "pendulum.yaml").read_text(encoding="utf-8")


def test_new_defaults_to_name_dot_yaml_in_the_current_folder(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["new", "kepler"])
    assert result.exit_code == 0, result.output
    assert load_spec(tmp_path / "kepler.yaml").name == "kepler"


def test_new_of_an_unknown_system_says_which_exist(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["new", "dubble_pendulum", "-o", str(tmp_path / "x.yaml")])
    assert result.exit_code == 2
    assert "no bundled system 'dubble_pendulum' (did you mean 'double_pendulum'?)" in result.output
    assert not (tmp_path / "x.yaml").exists()


def test_the_list_of_systems_cites_sources_by_short_name_not_by_file() -> None:
    """Issue 14: user-facing output carries no seed file names; the list shows the short names
    of docs/references.md (the bundled files themselves keep the file names for developers)."""
    import re

    listing = CliRunner().invoke(main, ["systems"])
    assert listing.exit_code == 0
    assert not re.search(r"\d{3}_[0-9a-f]{16}", listing.output)
    assert "double_pendulum_constrained  The double pendulum with constrained coordinates " \
           "([Lagrange]" in listing.output
