"""bench/goals.py judges issue 31's goals right and can run every bench it names; no timing here.

- the table written from saved figures says held, held narrowly (within 5 % of the threshold),
  missed narrowly, missed, not measured and not known where the figures put each goal, for a goal
  with an upper bound (≤), one with a lower bound (≥) and two ratios, and a ratio that is only a
  lower bound (a peer stopped at its timeout);
- the table replaces only the block between the markers of RESULTS.md and README.md, and
  bench/run.py's rewrite of RESULTS.md keeps it;
- every part is a bench in bench/ whose ``main`` parses the part's flags (full and quick forms)
  with ``--json``, and the same check rejects a flag the bench does not have;
- every ratio a goal reads is a name its bench records (a ``ratios.record`` call whose name,
  an f-string, matches it with any text in the place of each ``{...}``).
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from bench import goals

HELD = 4
"""The column of the table that says whether a goal held."""


def goal(name: str) -> goals.Goal:
    return next(g for g in goals.GOALS if g.name == name)


def part_run(ratios: dict[str, float], lower_bounds: tuple[str, ...] = (),
             load: float = 0.3) -> dict:
    return {"command": "x.py", "started": "2026-12-04 09:00", "commit": "abc1234",
            "seconds": 1.0, "load_before": [load, 0.2, 0.1], "load_after": [load, 0.2, 0.1],
            "exit": 0, "ratios": ratios, "lower_bounds": list(lower_bounds)}


def held_column(block: str) -> dict[str, str]:
    """Goal text → its held cell, from a generated block."""
    rows = [line for line in block.splitlines() if line.startswith("| ") and "---" not in line]
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in rows[1:]]
    return {c[0]: c[HELD] for c in cells}


@pytest.mark.parametrize(("value", "expected"), [
    (1.40, "yes"), (1.45, "yes, narrowly"), (1.55, "no, narrowly"), (1.80, "no")])
def test_at_most_goal_held_by_its_ratio(value: float, expected: str) -> None:
    g = goal("per-run-1e-10")
    assert not g.at_least and g.threshold == 1.5
    saved = {"parts": {"per-run": part_run({g.ratios[0][1]: value})}}
    assert held_column(goals.block(saved))[g.text] == expected


def test_ratios_beside_a_goal_are_shown_not_judged() -> None:
    g = goal("per-run-1e-10")
    (label, beside), = g.beside
    saved = {"parts": {"per-run": part_run({g.ratios[0][1]: 1.4, beside: 5.0})}}
    block = goals.block(saved)
    assert held_column(block)[g.text] == "yes"
    assert f"1.40 (≤ 1.5); {label} 5.00" in block


@pytest.mark.parametrize(("wall", "cpu", "expected"), [
    (0.90, 0.80, "yes"), (0.69, 0.90, "yes, narrowly"), (0.90, 0.65, "no, narrowly"),
    (0.60, 0.66, "no"), (0.50, 0.90, "no")])
def test_at_least_goal_needs_every_ratio(wall: float, cpu: float, expected: str) -> None:
    g = goal("build-8")
    assert g.at_least and g.threshold == pytest.approx(2 / 3)
    (_, wall_name), (_, cpu_name) = g.ratios
    saved = {"parts": {"build-8": part_run({wall_name: wall, cpu_name: cpu})}}
    assert held_column(goals.block(saved))[g.text] == expected


def test_lower_bound_decides_only_when_past_the_threshold() -> None:
    g = goal("build-32")
    name = g.ratios[0][1]
    bound = {"parts": {"build-32": part_run({name: 3.0}, (name,))}}
    assert held_column(goals.block(bound))[g.text] == "yes"
    assert "> 3.00" in goals.block(bound)
    short = {"parts": {"build-32": part_run({name: 0.5}, (name,))}}
    assert held_column(goals.block(short))[g.text].startswith("not known")


def test_missing_ratio_or_part_is_not_measured_and_a_loaded_quiet_goal_says_so() -> None:
    rhs, sweep = goal("rhs-32"), goal("sweep-cluster")
    saved = {"parts": {"peers": part_run({rhs.ratios[0][1]: 3.0}),
                       "sweep-cluster": part_run({sweep.ratios[0][1]: 1.7}, load=2.5)}}
    held = held_column(goals.block(saved))
    assert held[rhs.text] == "not measured"
    assert held[goal("startup-help").text] == "not measured"
    assert held[sweep.text] == "yes (not quiet: load ≥ 1)"


def test_from_json_rewrites_only_the_block(tmp_path: Path) -> None:
    g = goal("api-loop")
    saved = tmp_path / "goals.json"
    saved.write_text(json.dumps({"parts": {"api-loop": part_run({g.ratios[0][1]: 1.2})}}))
    results, readme = tmp_path / "RESULTS.md", tmp_path / "README.md"
    results.write_text("# results\n\nbody\n")
    readme.write_text(f"# readme\n\n{goals.BEGIN}\nold table\n{goals.END}\n\n## after\n")
    assert goals.main(["--from-json", str(saved), "--results", str(results),
                       "--readme", str(readme)]) == 0
    for path, head, tail in ((results, "# results\n\nbody\n\n", ""),
                             (readme, "# readme\n\n", "\n## after\n")):
        text = path.read_text()
        assert text.startswith(head + goals.BEGIN) and text.endswith(goals.END + "\n" + tail)
        assert held_column(text)[g.text] == "no"
        assert "old table" not in text
    rewritten = goals.keep_block(results.read_text(), "# results, measured again\n")
    assert rewritten.startswith("# results, measured again\n\n" + goals.BEGIN)
    assert held_column(rewritten)[g.text] == "no"


def test_every_goal_names_a_part_and_only_known_names_are_taken() -> None:
    assert len({g.name for g in goals.GOALS}) == len(goals.GOALS)
    assert {g.part for g in goals.GOALS} == {p.name for p in goals.PARTS}
    parts, chosen = goals.chosen("peers,startup-help")
    assert [p.name for p in parts] == ["startup", "peers"]
    assert {g.name for g in chosen} == {"rhs-32", "rhs-64", "trajectory-32", "startup-help"}
    with pytest.raises(SystemExit, match="no part or goal nonsense"):
        goals.chosen("nonsense")


@pytest.mark.parametrize("part", goals.PARTS, ids=lambda p: p.name)
def test_each_part_runs_a_bench_that_takes_its_flags(part: goals.Part) -> None:
    assert (goals.HERE / part.script).is_file()
    for quick in (False, True):
        if quick and part.quick is None:
            continue
        parsed = goals.parses(part.script, part.arguments(quick))
        assert parsed.json == Path("/dev/null")


def test_the_flag_check_rejects_a_flag_the_bench_lacks() -> None:
    with pytest.raises(SystemExit) as stopped:
        goals.parses("build.py", ("--sizes", "8", "--no-such-flag"))
    assert stopped.value.code == 2


def recorded_names(script: str) -> list[re.Pattern[str]]:
    """The names ``bench/SCRIPT`` passes to ``ratios.record``, each as a pattern in which every
    ``{...}`` of an f-string matches any text."""
    tree = ast.parse((goals.HERE / script).read_text(encoding="utf-8"))
    patterns = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "record" and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "ratios"):
            name = node.args[0]
            parts = name.values if isinstance(name, ast.JoinedStr) else [name]
            patterns.append(re.compile("".join(
                re.escape(p.value) if isinstance(p, ast.Constant) else ".+" for p in parts)))
    return patterns


@pytest.mark.parametrize("goal", goals.GOALS, ids=lambda g: g.name)
def test_each_ratio_a_goal_reads_is_recorded_by_its_bench(goal: goals.Goal) -> None:
    patterns = recorded_names(goals.part_named(goal.part).script)
    assert patterns
    for _, name in (*goal.ratios, *goal.beside):
        assert any(p.fullmatch(name) for p in patterns), name
