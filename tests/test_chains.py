"""The chain generator (lagsim.spec.chains): structure of the YAML and the mechanics it encodes.

Checked without lagsim's model: the kinetic energy of the point masses, T = 1/2 sum m |r_k'|^2,
gives the chain's mass matrix M_ij = m l^2 (n - max(i, j) + 1) cos(th_i - th_j) (for n = 2 the
double pendulum of seed 002 §23.8 with m1 = m2), gravity [0, -g] gives
U = -m g l sum_i (n - i + 1) cos(th_i), and the natural-coordinate start (seed 001 §10.7)
satisfies every rod constraint.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy
import yaml

from lagsim.cli.chains import main
from lagsim.spec.chains import PARAMETERS, chain_yaml, natural_positions


def _sym(expr: str, names: list[str]) -> sympy.Expr:
    table = {name: sympy.Symbol(name) for name in [*names, *PARAMETERS]}
    return sympy.sympify(expr, locals=table)


@pytest.mark.parametrize("n", [1, 2, 5, 32])
def test_minimal_structure(n: int) -> None:
    doc = yaml.safe_load(chain_yaml(n))
    assert doc["name"] == f"chain_{n}"
    assert set(doc) == {
        "name",
        "description",
        "parameters",
        "coordinates",
        "masses",
        "gravity",
        "initial",
        "simulate",
    }
    assert doc["parameters"] == {"m": 1.0, "l": 1.0, "g": 9.81}
    assert doc["coordinates"] == [f"th{k}" for k in range(1, n + 1)]
    assert list(doc["masses"]) == [f"p{k}" for k in range(1, n + 1)]
    masses = doc["masses"].values()
    assert all(len(mass["position"]) == 2 and mass["mass"] == "m" for mass in masses)
    assert doc["gravity"] == [0, "-g"]
    assert doc["initial"] == {
        **{f"th{k}": 0.5 for k in range(1, n + 1)},
        **{f"th{k}_dot": 0 for k in range(1, n + 1)},
    }
    assert doc["simulate"] == {"t_end": 10}


@pytest.mark.parametrize("n", [1, 3, 16])
def test_natural_structure(n: int) -> None:
    doc = yaml.safe_load(chain_yaml(n, natural=True))
    assert doc["name"] == f"chain_{n}_natural"
    assert len(doc["coordinates"]) == 2 * n
    assert doc["coordinates"][:2] == ["x1", "y1"]
    assert [c["name"] for c in doc["constraints"]] == [f"rod{k}" for k in range(1, n + 1)]
    assert all(set(c) == {"name", "holonomic"} for c in doc["constraints"])
    assert doc["masses"][f"p{n}"]["position"] == [f"x{n}", f"y{n}"]
    assert len(doc["initial"]) == 4 * n
    assert all(doc["initial"][f"{c}_dot"] == 0 for c in doc["coordinates"])


@pytest.mark.parametrize("n", [1, 2, 8, 32])
@pytest.mark.parametrize("angle", [0.5, 1.3, -2.0])
def test_natural_start_satisfies_every_rod(n: int, angle: float) -> None:
    doc = yaml.safe_load(chain_yaml(n, natural=True, angle=angle))
    names = doc["coordinates"]
    values = {sympy.Symbol(k): v for k, v in doc["initial"].items() if not k.endswith("_dot")}
    values.update({sympy.Symbol(k): v for k, v in doc["parameters"].items()})
    for constraint in doc["constraints"]:
        residual = float(_sym(constraint["holonomic"], names).subs(values))
        assert abs(residual) < 1e-14, (constraint["name"], residual)


@pytest.mark.parametrize("n", [1, 4, 12])
def test_natural_start_is_the_minimal_start(n: int) -> None:
    """The natural initial positions are the minimal chain's bob positions at all angles 0.5."""
    minimal = yaml.safe_load(chain_yaml(n))
    natural = yaml.safe_load(chain_yaml(n, natural=True))
    at = {sympy.Symbol(k): v for k, v in minimal["initial"].items()}
    at.update({sympy.Symbol(k): v for k, v in minimal["parameters"].items()})
    for k, mass in enumerate(minimal["masses"].values(), start=1):
        x, y = (float(_sym(e, minimal["coordinates"]).subs(at)) for e in mass["position"])
        assert x == pytest.approx(natural["initial"][f"x{k}"], abs=1e-14)
        assert y == pytest.approx(natural["initial"][f"y{k}"], abs=1e-14)


def test_natural_positions_closed_form() -> None:
    positions = natural_positions(5, 0.0)
    assert positions == [(0.0, -float(k)) for k in range(1, 6)]
    x, y = natural_positions(3, math.pi / 2)[-1]
    assert x == pytest.approx(3.0, abs=1e-15) and y == pytest.approx(0.0, abs=1e-15)


@pytest.mark.parametrize("n", [1, 2, 5])
def test_masses_give_the_chain_mass_matrix_and_potential(n: int) -> None:
    doc = yaml.safe_load(chain_yaml(n))
    names = doc["coordinates"]
    q = sympy.Matrix([sympy.Symbol(c) for c in names])
    m, l, g = (sympy.Symbol(p) for p in ("m", "l", "g"))
    mass_matrix = sympy.zeros(n, n)
    potential = sympy.Integer(0)
    for mass in doc["masses"].values():
        r = sympy.Matrix([_sym(e, names) for e in mass["position"]])
        jac = r.jacobian(q)
        mass_matrix += m * jac.T * jac
        potential += -m * (sympy.Matrix([0, -g]).dot(r))
    rng = np.random.default_rng(5)
    params = {m: 1.3, l: 0.7, g: 9.81}
    for _ in range(3):
        th = rng.uniform(-math.pi, math.pi, n)
        at = {**params, **dict(zip(q, th, strict=True))}
        got = np.array(mass_matrix.subs(at).evalf(), dtype=float)
        i, j = np.indices((n, n))
        want = 1.3 * 0.7**2 * (n - np.maximum(i, j)) * np.cos(th[i] - th[j])
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
        u_want = -1.3 * 9.81 * 0.7 * sum((n - k) * math.cos(th[k]) for k in range(n))
        assert float(potential.subs(at)) == pytest.approx(u_want, abs=1e-12)


def test_main_writes_file(tmp_path) -> None:
    out = tmp_path / "c.yaml"
    assert main(["3", "--natural", "--angle", "0.25", "-o", str(out)]) == 0
    doc = yaml.safe_load(out.read_text())
    assert doc["name"] == "chain_3_natural"
    assert doc["initial"]["x1"] == math.sin(0.25)


def test_rejects_empty_chain() -> None:
    with pytest.raises(ValueError, match="at least one link"):
        chain_yaml(0)
    with pytest.raises(SystemExit):
        main(["0"])
