"""Every `lagsim` command of README.md, run as the README writes it (issue 29: "test the
README's commands").

:func:`readme_commands` declares which lines those are: each line of a ```sh block whose first
word is ``lagsim`` (a ``\\`` continuation joined to it), pipelines and redirections included, in
README order. Each runs in one shared temporary folder (later commands read the files earlier
ones write, as a reader following the README would), through ``bash`` with ``lagsim`` replaced by
``sys.executable -m lagsim`` and this Python's bin folder first on PATH (so the README's
``python -c`` is the one that has numpy), HOME in the folder (``~/.config/...``).

Each command must exit 0; :data:`CHECKS` asserts what the README shows or states in a comment
(ω² = (g/l)(2 ∓ √2), S = 13/3, the output of `check knife_edge`, ...) and, for the others, a
closed form the output must meet (the pendulum's period 4K(sin²(θ₀/2))/√(g/l), seed 001 §10.7;
the projectile's action). The two animations and the 1000-run sweep are marked ``slow``.

Inputs the README names but no ``lagsim`` command of it writes: ``seed.yaml`` (written from the
README's own ``cat > seed.yaml`` block, as a reader runs it) and ``starts.csv`` (four rows of
docs/poincare.py's starts at one energy).
"""

from __future__ import annotations

import csv
import importlib.util
import json
import math
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from scipy.special import ellipk

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
G = 9.81
"""g of every bundled system used below (l = m = 1 in each)."""


def readme_commands(text: str) -> list[str]:
    """The README's commands: every line of a ```sh block whose first word is ``lagsim``,
    continuation lines (``\\`` at the end) joined, in order."""
    out = []
    for block in re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M):
        for line in re.sub(r"\\\n\s*", "", block).splitlines():
            if line.split(maxsplit=1)[:1] == ["lagsim"]:
                out.append(line.strip())
    return out


def readme_heredoc(name: str) -> str:
    """The file a ```sh block of the README writes with ``cat > NAME <<'EOF'``."""
    match = re.search(rf"^cat > {re.escape(name)} <<'EOF'\n(.*?)^EOF$", README, re.S | re.M)
    assert match, f"README writes no {name}"
    return match.group(1)


def readme_output_after(command: str) -> str:
    """The plain ``` block that follows the ```sh block holding ``command``."""
    start = README.index("\n```\n", README.index(command)) + 5
    match = re.compile(r"^```\n(.*?)^```", re.S | re.M).search(README, start)
    assert match
    return match.group(1)


COMMANDS = readme_commands(README)
SLOW = ("lagsim animate ", "--runs 1000")
"""Commands marked slow (each takes 20–60 s): the two animations and the 1000-run sweep."""


def shell_line(command: str) -> str:
    """``command`` with each ``lagsim`` that starts a pipeline stage run by this Python."""
    return re.sub(r"(^|\|\s*)lagsim\b", lambda m: f"{m.group(1)}{sys.executable} -m lagsim",
                  command)


def rows(text: str) -> tuple[list[str], np.ndarray]:
    lines = [line for line in text.splitlines() if line]
    return lines[0].split(","), np.array([[float(x) for x in line.split(",")]
                                          for line in lines[1:]])


def column(text: str, name: str) -> np.ndarray:
    header, data = rows(text)
    return data[:, header.index(name)]


def quarter_period(theta0: float) -> float:
    """Time from rest at θ₀ to θ = 0 of the pendulum (g, l = 1): K(sin²(θ₀/2))/√(g/l)."""
    return float(ellipk(math.sin(theta0 / 2) ** 2)) / math.sqrt(G)


def is_image(path: Path) -> None:
    magic = {".png": b"\x89PNG", ".svg": b"<?xml", ".pdf": b"%PDF", ".gif": b"GIF8"}
    assert path.read_bytes()[:4] == magic[path.suffix][:4], path


def check_stop_when(out: str, _err: str, _folder: Path) -> None:
    t, theta, _rate, _energy = (float(x) for x in out.split(","))
    assert abs(theta) < 1e-9
    assert t == pytest.approx(quarter_period(math.pi / 6), rel=1e-7)


def check_first_negative(out: str, _err: str, _folder: Path) -> None:
    first = math.ceil(quarter_period(math.pi / 6) / 0.01) * 0.01
    assert float(out) == pytest.approx(first, abs=1e-12)


def check_udwadia_kalaba(out: str, _err: str, _folder: Path) -> None:
    lines = out.splitlines()
    assert len(lines) == 3 and lines[0].startswith("t,x,y,")
    assert np.array_equal(column(out, "lambda_rod"), column(out, "lambda_rod_again"))


def check_equilibria(out: str, _err: str, _folder: Path) -> None:
    assert "(4 found " in out.splitlines()[0]
    stable = out.split("4. stable")[1]
    assert "theta1 = 0\n" in stable and "theta2 = 0\n" in stable
    assert out.count("unstable") == 3


def check_modes(out: str, _err: str, _folder: Path) -> None:
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("mode "))
    assert header.split()[:9] == ["mode", "ω_n", "(rad/s)", "f_n", "(Hz)", "ω_d", "(rad/s)",
                                  "ζ", "ω²"]
    table = [line.split() for line in lines if re.match(r"\s+[12]\s", line)]
    omega_sq = [float(r[5]) for r in table]
    assert omega_sq == pytest.approx([G * (2 - math.sqrt(2)), G * (2 + math.sqrt(2))],
                                     rel=1e-8)
    assert [float(r[1]) for r in table] == pytest.approx(np.sqrt(omega_sq), rel=1e-8)
    assert [float(r[4]) for r in table] == [0.0, 0.0]


def check_modes_inverted(out: str, _err: str, _folder: Path) -> None:
    doc = json.loads(out)
    assert sorted(m["omega_squared"] for m in doc["modes"]) == pytest.approx(
        [-G * (2 + math.sqrt(2)), -G * (2 - math.sqrt(2))], rel=1e-8)
    assert {m["kind"] for m in doc["modes"]} == {"unstable"}


def check_kepler(out: str, _err: str, _folder: Path) -> None:
    doc = json.loads(out)
    start = doc["start"]
    r, r_dot, th_dot = start["q"]["r"], start["q_dot"]["r"], start["q_dot"]["theta"]
    energy = 0.5 * (r_dot**2 + r**2 * th_dot**2) - 1 / r
    assert {i["name"]: i["value"] for i in doc["invariants"]} == pytest.approx(
        {"energy": energy, "p_theta": r**2 * th_dot}, rel=1e-12)


def check_stationary(out: str, err: str, _folder: Path) -> None:
    exact = 0.5 - G**2 / 24
    s = float(re.search(r"S = (\S+) ", err).group(1))
    assert s == pytest.approx(exact, rel=1e-9)
    assert column(out, "x")[-1] == pytest.approx(1.0, abs=1e-12)


def check_period(_out: str, _err: str, folder: Path) -> None:
    with open(folder / "period.csv", newline="") as fh:
        table = list(csv.DictReader(fh))
    assert len(table) == 50
    for row in table:
        assert not row["error"]
        assert float(row["period"]) == pytest.approx(4 * quarter_period(float(row["theta0"])),
                                                     rel=1e-8)


def check_parquet(_out: str, _err: str, folder: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet", reason="the README says: needs lagsim[parquet]")
    table = pq.read_table(folder / "dp.parquet").to_pydict()
    assert len(table["run"]) == 1000 and not any(table["error"])
    assert 1.0 <= min(table["theta20"]) and max(table["theta20"]) <= 2.0


def check_sections(_out: str, _err: str, folder: Path) -> None:
    runs = sorted((folder / "sections").glob("run_*.csv"))
    assert len(runs) == len(starts())
    for run in runs:
        text = run.read_text()
        assert np.abs(column(text, "theta1")).max() < 1e-8
        assert (column(text, "theta1_dot") > 0).all()


def check_rattle(_out: str, _err: str, folder: Path) -> None:
    text = (folder / "long.csv").read_text()
    assert len(text.splitlines()) == 2002
    assert np.abs(column(text, "residual_rod")).max() < 1e-13


def check_steady_precession(out: str, _err: str, _folder: Path) -> None:
    """The heavy top at θ = 0.5, ψ̇ = 30 (m = 1, g = 9.81, l = 0.5, I1 = 0.2, I3 = 0.3): φ̇ is
    the slow root of (I1' − I3) cos θ φ̇² − I3 ψ̇ φ̇ + m g l = 0 and the nutation frequency
    √(U_eff''/I1') (Goldstein §5.7; tests/test_steady_modes.py), here by a central difference
    of U_eff, good to 1e-6."""
    I1p, I3, mgl, th, psd = 0.45, 0.3, 4.905, 0.5, 30.0
    phd = min(np.roots([(I1p - I3) * math.cos(th), -I3 * psd, mgl]), key=abs).real
    p_psi = I3 * (psd + phd * math.cos(th))
    p_phi = I1p * phd * math.sin(th) ** 2 + p_psi * math.cos(th)

    def u_eff(x: float) -> float:
        return (p_phi - p_psi * math.cos(x)) ** 2 / (2 * I1p * math.sin(x) ** 2) + mgl * math.cos(x)

    h = 1e-4
    omega = math.sqrt((u_eff(th + h) - 2 * u_eff(th) + u_eff(th - h)) / h ** 2 / I1p)
    shown = float(out.split("phi_dot = ")[1].split(",")[0])
    assert abs(shown - phd) < 1e-11
    rows = [line.split() for line in out.splitlines() if line.strip().startswith("1 ")]
    assert rows and abs(float(rows[0][1]) - omega) < 1e-6 * omega


def check_fmu(_out: str, _err: str, folder: Path) -> None:
    import zipfile

    with zipfile.ZipFile(folder / "a01.fmu") as fmu:
        names = set(fmu.namelist())
        assert 'fmiVersion="2.0"' in fmu.read("modelDescription.xml").decode()
    assert {"sources/a01_pendulum.c", "sources/fmu.c"} <= names


def contains(*pieces: str) -> Callable[[str, str, Path], None]:
    def check(out: str, _err: str, _folder: Path) -> None:
        for piece in pieces:
            assert piece in out
    return check


def image(name: str) -> Callable[[str, str, Path], None]:
    return lambda _out, _err, folder: is_image(folder / name)


CHECKS: dict[str, Callable[[str, str, Path], None]] = {
    "lagsim simulate pendulum --t-end 10 | lagsim plot": image("pendulum.png"),
    "lagsim derive double_pendulum  ": contains(
        "l1⋅l2⋅m2⋅θ̇2²⋅sin(θ1 - θ2) = 0", "- l1⋅l2⋅m2⋅θ̇1²⋅sin(θ1 - θ2) = 0"),
    "lagsim derive pendulum_natural --form index1": contains(
        "[[M, −Aᵀ], [A, 0]] [q̈; λ] = [F; b]"),
    "lagsim derive double_pendulum_constrained": contains("L̃:", "λ_string1 =", "λ_string2 ="),
    "lagsim derive pendulum --form matrix --format latex": contains(
        r"M(q) &= \begin{bmatrix}l^{2} m\end{bmatrix}"),
    "lagsim derive skate --format json": lambda out, _e, _f: (
        out.strip() == "[['m', '0', '0'], ['0', 'm', '0'], ['0', '0', 'J']]" or pytest.fail(out)),
    "lagsim simulate pendulum_natural --t-end 20 --formulation index1 --stabilize projection":
        lambda _o, _e, folder: np.testing.assert_array_less(
            np.abs(column((folder / "p.csv").read_text(), "residual_rod")), 1e-13),
    "lagsim simulate pendulum_natural --t-end 20 --formulation index1 --stabilize none":
        lambda _o, _e, folder: np.testing.assert_array_less(
            1e-13, np.abs(column((folder / "none.csv").read_text(), "residual_rod")).max()),
    "lagsim simulate pendulum_redundant": check_udwadia_kalaba,
    "lagsim simulate sho_table": lambda out, _e, _f: np.testing.assert_allclose(
        column(out, "energy"), 0.5 * 4 * 0.2**2, rtol=1e-7),
    "lagsim simulate pendulum --stop-when theta": check_stop_when,
    "lagsim simulate double_pendulum --t-end 20 | lagsim plot": image("dp.png"),
    "lagsim plot pendulum_natural --kind drift": image("drift.svg"),
    "lagsim plot p.csv --kind path": image("path.pdf"),
    "lagsim plot pendulum_natural --kind time": image("circle.png"),
    "lagsim plot double_pendulum --kind phase": image("phase.png"),
    "lagsim plot none.csv p.csv": image("drift.png"),
    "lagsim animate double_pendulum": image("dp.gif"),
    "lagsim animate pendulum": image("long.gif"),
    "lagsim simulate pendulum | awk": check_first_negative,
    "lagsim simulate pendulum_natural | python": lambda out, _e, _f: (
        float(out) < 1e-12 or pytest.fail(out)),
    "lagsim check knife_edge": lambda out, _e, _f: (
        out == readme_output_after("lagsim check knife_edge ") or pytest.fail(out)),
    "lagsim check rod_two_particles": contains(
        "integrates to the holonomic constraint (1/2)*(x1 - x2)**2 + (1/2)*(y1 - y2)**2 = 0.5"),
    "lagsim check kepler": check_kepler,
    "lagsim simulate kepler --invariants": image("inv.png"),
    "lagsim equilibria double_pendulum": check_equilibria,
    "lagsim modes double_pendulum  ": check_modes,
    "lagsim modes double_pendulum --at": check_modes_inverted,
    "lagsim modes slider_crank": image("modes.png"),
    "lagsim derive pendulum_natural --form linear": contains("⎣-9.81  0.0⎦"),
    "lagsim modes heavy_top --steady": check_steady_precession,
    "lagsim derive double_pendulum --form hamilton": contains("H = ", "p_θ1 = "),
    "lagsim action seed.yaml": contains("S = 13/3"),
    "lagsim simulate pendulum --action": contains("S ≈ "),
    "lagsim action free_mass_cartesian": check_stationary,
    "lagsim simulate pendulum_natural --method rattle": check_rattle,
    "lagsim simulate spherical_pendulum": lambda out, _e, _f: (
        len(out.splitlines()) == 1002 or pytest.fail(out[:200])),
    "lagsim sweep pendulum": check_period,
    "lagsim plot period.csv": image("period.png"),
    "lagsim sweep double_pendulum --random": check_parquet,
    "lagsim sweep double_pendulum --table": check_sections,
    "lagsim plot sections/": image("poincare.png"),
    "lagsim export double_pendulum --c": lambda _o, _e, folder: (
        "#define double_pendulum_NY 4 " in (folder / "dp_c/double_pendulum.h").read_text()
        and (folder / "dp_c/main.c").exists() or pytest.fail("no C export")),
    "lagsim export a01_pendulum --fmu": check_fmu,
    "lagsim completion fish": lambda _o, _e, folder: (
        "complete --no-files --command lagsim"
        in (folder / "home/.config/fish/completions/lagsim.fish").read_text()
        or pytest.fail("no fish completion")),
}
"""A prefix of a README command → what its output must show (stdout, stderr, folder)."""


def starts() -> list[tuple[float, float, float]]:
    """The first four of docs/poincare.py's starts (θ2, θ̇1, θ̇2) at θ1 = 0, energy −15."""
    spec = importlib.util.spec_from_file_location("poincare", ROOT / "docs" / "poincare.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.starts()[:4]


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """One folder for the whole README, with the inputs it names but does not write."""
    path = tmp_path_factory.mktemp("readme")
    (path / "home" / ".config" / "fish" / "completions").mkdir(parents=True)
    (path / "seed.yaml").write_text(readme_heredoc("seed.yaml"), encoding="utf-8")
    (path / "starts.csv").write_text("theta1,theta2,theta1_dot,theta2_dot\n" + "".join(
        f"0,{a!r},{b!r},{c!r}\n" for a, b, c in starts()), encoding="utf-8")
    return path


def check_for(command: str) -> Callable[[str, str, Path], None]:
    found = [check for prefix, check in CHECKS.items() if command.startswith(prefix)]
    assert len(found) == 1, f"{len(found)} checks for README command {command!r}"
    return found[0]


def test_every_command_has_one_check():
    for command in COMMANDS:
        check_for(command)
    assert len(COMMANDS) == len(CHECKS)


@pytest.mark.parametrize("command", [
    pytest.param(c, marks=[pytest.mark.slow] if any(s in c for s in SLOW) else [], id=c[:60])
    for c in COMMANDS])
def test_readme_command(command, folder):
    env = dict(os.environ, HOME=str(folder / "home"),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    result = subprocess.run(shell_line(command), shell=True, executable="/bin/bash", cwd=folder,
                            env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    check_for(command)(result.stdout, result.stderr, folder)
