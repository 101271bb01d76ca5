"""Printing the derive forms (lagsim.symbolic.render): text for terminals, LaTeX for papers, JSON
for scripts.

JSON is checked by reading every expression back with sympy.sympify and comparing it with the model
(lagsim.symbolic.model, seed 001 §10.6–10.7 quantities L, M, F, h, A, b) at random points to 1e-12.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
import sympy
from inline_systems import CONSTRAINED, FLAT, SINGULAR, SKATE

from lagsim.analysis.modes import rest_linearization
from lagsim.spec.system import load_spec, parse_spec
from lagsim.symbolic.forms import FORMS
from lagsim.symbolic.model import build_model, to_sympy
from lagsim.symbolic.render import display_symbols, render

DAMPED = """
name: damped
parameters: {m: 1.0, g: 9.81, r: 1.0, c: 0.2}
coordinates: [theta]
kinetic: 1/2*m*r**2*theta_dot**2
potential: -m*g*r*cos(theta)
forces:
  theta: -c*theta_dot
"""


AWKWARD = """
name: awkward
parameters: {I: 0.5, E: 2.0, m: 1.0}
coordinates: [beta, x1]
kinetic: 1/2*I*beta_dot**2 + 1/2*m*x1_dot**2
potential: E*(1 - cos(beta)) + 1/2*E*x1**2
"""

SYSTEMS = {"damped": DAMPED, "flat": FLAT, "skate": SKATE, "constrained": CONSTRAINED}
APPLICABLE = {
    "damped": ["lagrange", "matrix", "dae", "index1", "udwadia-kalaba"],
    "flat": list(FORMS),
    "skate": ["lagrange", "matrix", "dae", "index1", "udwadia-kalaba"],
    "constrained": list(FORMS),
}
CASES = [(s, f) for s, forms in APPLICABLE.items() for f in forms]


def model_of(text: str):
    return build_model(parse_spec(text, "<test>", "system"))


def read(s: str, doc: dict) -> sympy.Expr:
    """An expression string of the JSON, every declared name a plain symbol."""
    return sympy.sympify(s, locals={n: sympy.Symbol(n) for n in doc["symbols"]})


def read_equation(s: str, doc: dict) -> sympy.Expr:
    lhs, rhs = s.split(" = ")
    return read(lhs, doc) - read(rhs, doc)


def close(a: sympy.Expr, b: sympy.Expr, rng: random.Random, trials: int = 3) -> bool:
    """a = b at random points in (0.2, 1.4), relative tolerance 1e-12."""
    a, b = sympy.sympify(a), sympy.sympify(b)
    names = sorted(a.free_symbols | b.free_symbols, key=str)
    for _ in range(trials):
        point = {s: rng.uniform(0.2, 1.4) for s in names}
        va, vb = complex(a.evalf(30, subs=point)), complex(b.evalf(30, subs=point))
        if abs(va - vb) > 1e-12 * max(1.0, abs(va), abs(vb)):
            return False
    return True


def _form(model, name: str):
    """The form ``name`` of ``model``, given the equilibrium's linearization when it takes one
    (the ``rest`` input of the registry, found by analysis as ``derive`` finds it)."""
    kind = FORMS[name]
    inputs = {"rest": rest_linearization(model)} if "rest" in kind.inputs else {}
    return kind(model, False, **inputs)


@pytest.fixture(scope="module")
def built() -> dict:
    models = {name: model_of(text) for name, text in SYSTEMS.items()}
    forms = {(s, f): _form(models[s], f) for s, f in CASES}
    return {"models": models, "forms": forms}


def test_text_shows_dotted_velocities() -> None:
    """m r² θ̈ + g m r sin θ + c θ̇ = 0 reads with θ̇ and θ̈, not theta_dot."""
    model = model_of(DAMPED)
    out = render(FORMS["lagrange"](model, False), "text", model)
    assert "θ̇" in out and "θ̈" in out
    assert "theta_dot" not in out and "_ddot" not in out
    assert "Euler–Lagrange" in out and "[DAE Theorem 10.2]" in out and ".txt" not in out
    assert out.endswith("\n")


def test_latex_uses_dot_and_ddot() -> None:
    model = model_of(DAMPED)
    out = render(FORMS["lagrange"](model, False), "latex", model)
    assert r"\dot{\theta}" in out and r"\ddot{\theta}" in out
    assert "theta_{dot}" not in out and "theta_dot" not in out
    assert out.count(r"\begin{align}") == out.count(r"\end{align}") == 1
    assert r"\sin{\left(\theta \right)}" in out


def test_numbered_coordinate_keeps_its_digit() -> None:
    """x1_ddot prints as x, combining diaeresis, 1 (ẍ1) and \\ddot{x}1: digits stay digits by the
    one names rule (issue 14), no subscript guessed."""
    model = model_of(AWKWARD)
    text = render(FORMS["lagrange"](model, False), "text", model)
    latex = render(FORMS["lagrange"](model, False), "latex", model)
    assert "x\u03081" in unicodedata.normalize("NFD", text) and "\u03b2\u0308" in text
    assert "x1_ddot" not in text and "\u2081" not in text
    assert r"\ddot{x}1" in latex and r"\ddot{\beta}" in latex


@pytest.mark.parametrize(("system", "form"), CASES)
def test_every_form_renders_in_every_format(built: dict, system: str, form: str) -> None:
    model, f = built["models"][system], built["forms"][(system, form)]
    text = render(f, "text", model)
    assert f.title in text and f"[{form}]" in text
    latex = render(f, "latex", model)
    blocks = 1 if f.items else 0  # Udwadia–Kalaba without constraints: only a note (issue 14)
    assert latex.count(r"\begin{align}") == latex.count(r"\end{align}") == blocks
    typeset = "\n".join(line for line in latex.splitlines() if not line.startswith("%"))
    assert "_dot" not in typeset.replace(r"\dot", "")   # a % comment names items as labelled
    doc = json.loads(render(f, "json", model))
    assert doc["form"] == form and len(doc["items"]) == len(f.items)
    assert len(doc["equations"]) >= len(f.equations)


@pytest.mark.parametrize(("system", "form"), CASES)
def test_json_equations_round_trip(built: dict, system: str, form: str) -> None:
    """Every equation string "lhs = rhs" reads back as the form's equation, at random points."""
    model, f = built["models"][system], built["forms"][(system, form)]
    doc = json.loads(render(f, "json", model))
    rng = random.Random(11)
    expected = []
    for eq in f.equations:
        lhs = eq.lhs.doit() if isinstance(eq.lhs, sympy.MatMul) else eq.lhs
        if isinstance(lhs, sympy.MatrixBase):
            expected += [a - b for a, b in zip(lhs, eq.rhs)]
        else:
            expected.append(lhs - eq.rhs)
    assert len(doc["equations"]) == len(expected)
    for s, e in zip(doc["equations"], expected):
        assert close(read_equation(s, doc), e, rng), s


@pytest.mark.parametrize("system", list(SYSTEMS))
def test_json_model_round_trip(built: dict, system: str) -> None:
    """L, M, F, h and each constraint's φ, A row and b read back equal to the model."""
    model = built["models"][system]
    doc = json.loads(render(built["forms"][(system, "lagrange")], "json", model))
    for key in ("name", "coordinates", "parameters", "lagrangian", "mass_matrix", "forcing",
                "energy", "constraints", "equations", "form", "items"):
        assert key in doc
    assert doc["coordinates"] == list(model.coordinates)
    assert doc["parameters"] == model.parameters
    rng = random.Random(5)
    assert close(read(doc["lagrangian"], doc), to_sympy(model.lagrangian), rng)
    assert close(read(doc["energy"], doc), to_sympy(model.energy), rng)
    M = to_sympy(model.mass_matrix)
    assert len(doc["mass_matrix"]) == model.n
    for i, row in enumerate(doc["mass_matrix"]):
        for j, s in enumerate(row):
            assert close(read(s, doc), M[i, j], rng)
    for s, e in zip(doc["forcing"], to_sympy(model.forcing), strict=True):
        assert close(read(s, doc), e, rng)
    assert [c["name"] for c in doc["constraints"]] == [c.name for c in model.constraints]
    for c_doc, c in zip(doc["constraints"], model.constraints):
        assert c_doc["kind"] == c.kind
        assert close(read(c_doc["expression"], doc), to_sympy(c.expression), rng)
        assert close(read(c_doc["b"], doc), to_sympy(c.rhs), rng)
        for s, a in zip(c_doc["A"], c.row, strict=True):
            assert close(read(s, doc), to_sympy(a), rng)


def test_json_plain_names_read_back_without_locals(built: dict) -> None:
    """With ordinary names plain sympify suffices: theta_dot and lambda_rod come back as symbols."""
    model = built["models"]["flat"]
    doc = json.loads(render(built["forms"][("flat", "dae")], "json", model))
    first = doc["equations"][0]
    lhs, rhs = (sympy.sympify(side) for side in first.split(" = "))
    assert sympy.Symbol("lambda_rod") in (lhs - rhs).free_symbols
    assert sympy.simplify(lhs - rhs - (sympy.Symbol("m") * sympy.Symbol("x_ddot")
                                       - sympy.Symbol("lambda_rod") * sympy.Symbol("x"))) == 0


def test_json_names_sympy_would_misread_come_back_with_symbols_key() -> None:
    """I, E and beta are the user's symbols; plain sympify would read I as √−1, hence "symbols"."""
    model = model_of(AWKWARD)
    doc = json.loads(render(FORMS["lagrange"](model, False), "json", model))
    assert {"I", "E", "beta", "beta_dot", "x1_ddot"} <= set(doc["symbols"])
    assert sympy.sympify("I") == sympy.I
    rng = random.Random(3)
    assert close(read(doc["lagrangian"], doc), to_sympy(model.lagrangian), rng)
    beta, I, E = sympy.symbols("beta I E")
    eq = read_equation(doc["equations"][0], doc)
    assert sympy.simplify(eq - (I * sympy.Symbol("beta_ddot") + E * sympy.sin(beta))) == 0


def test_several_forms_in_one_document(built: dict) -> None:
    model = built["models"]["flat"]
    forms = [built["forms"][("flat", f)] for f in ("lagrange", "index1")]
    doc = json.loads(render(forms, "json", model))
    assert [f["form"] for f in doc["forms"]] == ["lagrange", "index1"]
    assert doc["form"] == "lagrange"
    text = render(forms, "text", model)
    assert "Euler–Lagrange equations" in text and "index-1 augmented system" in text
    assert render(forms, "latex", model).count(r"\begin{align}") == 2


def test_warnings_reach_every_format() -> None:
    text = SINGULAR
    model = model_of(text)
    form = FORMS["lagrange"](model, False)
    assert "warning: the mass matrix is singular: the velocity of z" in render(form, "text", model)
    assert "% warning: the mass matrix is singular" in render(form, "latex", model)
    assert "velocity of z" in json.loads(render(form, "json", model))["warnings"][0]


def test_unknown_format_is_refused() -> None:
    model = model_of(DAMPED)
    with pytest.raises(ValueError, match="unknown format 'html'"):
        render(FORMS["lagrange"](model, False), "html", model)


# --- long items print line by line (issue 8 §5) -------------------------------------------------

BENCH = Path(__file__).resolve().parents[1] / "bench"
_SUPER = {ch: str(d) for d, ch in enumerate("⁰¹²³⁴⁵⁶⁷⁸⁹")}


def _read_linear(text: str, model) -> sympy.Expr:
    """A line of the linear text format read back with the plain names (θ̇1 → theta1_dot)."""
    shown = display_symbols(model)
    display = {shown_name: str(plain) for plain, shown_name in shown.items()}
    text = "".join(f"**{_SUPER[ch]}" if ch in _SUPER else ch for ch in text)
    pattern = "|".join(re.escape(p) for p in sorted(display, key=len, reverse=True))
    text = re.sub(rf"(?<!\w)({pattern})(?![\w\u0300-\u036f])", lambda m: display[m[1]], text)
    text = text.replace("⋅", "*").replace("^", "**")
    return sympy.sympify(text, locals={str(n): n for n in shown})


def _entries(block: str) -> list[tuple[str, str]]:
    """``[i] expr`` / ``[i, j] expr`` lines of a long item, continuation lines joined."""
    out: list[list[str]] = []
    for line in block.splitlines():
        if line.startswith("["):
            index, _, rest = line.partition("] ")
            out.append([index + "]", rest])
        elif line.startswith("    ") and out:
            out[-1][1] += " " + line.strip()
    return [(i, e) for i, e in out]


def test_long_items_print_line_by_line_and_read_back_equal() -> None:
    """messy3's M (its largest matrix) prints one line per non-zero entry, with θ̇-style names,
    and each line reads back equal to the model's entry at random points (1e-12)."""
    from lagsim.spec.system import load_spec
    from lagsim.symbolic.model import tidy_model

    model = tidy_model(build_model(load_spec(BENCH / "derive_messy3.yaml")))
    form = FORMS["matrix"](model, False)
    text = render(form, "text", model)
    block = text.split("\nC(q, q̇):\n")[0].split("\nM(q):\n")[1]
    assert block.startswith("(3×3; entries not listed are 0)")
    entries = _entries(block)
    M = to_sympy(model.mass_matrix)
    nonzero = [(i, j) for i in range(3) for j in range(3) if M[i, j] != 0]
    assert [e[0] for e in entries] == [f"[{i + 1}, {j + 1}]" for i, j in nonzero]
    rng = random.Random(8)
    for (i, j), (_, expr) in zip(nonzero, entries):
        assert close(_read_linear(expr, model), M[i, j], rng), expr
    assert "φ̇" in text and "phi_dot" not in text and "**" not in text


def test_small_items_keep_the_pretty_layout() -> None:
    """The pendulum's equation is SymPy's two-dimensional layout, as before."""
    model = model_of(DAMPED)
    out = render(FORMS["lagrange"](model, False), "text", model)
    assert "\n2\n" not in out and any(line.strip().startswith("2") for line in out.splitlines())
    assert "⋅" in out and "[1]" not in out


def test_debug_says_what_was_printed_untidied() -> None:
    """Issue 16 §4's u, v mass with v − 0.21: the Udwadia–Kalaba closed form is over its budget;
    the pieces are printed with a note, and --debug names the skipped step on stderr."""
    path = str(BENCH / "derive_uk2.yaml")
    plain = subprocess.run([sys.executable, "-m", "lagsim", "derive", path, "--form",
                            "udwadia-kalaba"], capture_output=True, text=True, check=False)
    debug = subprocess.run([sys.executable, "-m", "lagsim", "--debug", "derive", path, "--form",
                            "udwadia-kalaba"], capture_output=True, text=True, check=False)
    assert plain.returncode == debug.returncode == 0
    assert plain.stdout == debug.stdout
    assert "note: the closed form would exceed its budget" in plain.stdout
    assert "untidied" not in plain.stderr
    lines = [x for x in debug.stderr.splitlines() if "untidied" in x]
    assert lines and all(x.startswith("lagsim: debug: udwadia-kalaba form printed untidied: ")
                         for x in lines)
    assert any("closed form skipped" in x and "operations > 300" in x for x in lines)


def test_wrapped_lines_join_back_and_keep_groups_whole() -> None:
    """Breaks fall before a binary + or −, never inside sin(…) or a short group, lines fit the
    width where a break allows it, and the lines joined give the text back."""
    from lagsim.symbolic.render import _wrap

    text = " + ".join(f"a{i}⋅sin(θ₁ - θ₂)/((L + x)⋅(L - x))" for i in range(6))
    lines = _wrap(text, 60)
    assert len(lines) > 1 and all(len(x) <= 60 for x in lines)
    assert " ".join(x.strip() for x in lines) == text
    assert all(x.count("(") == x.count(")") for x in lines)


# --- one names rule (issue 14): text, LaTeX and plot labels ---------------------------------

NAMES = """
name: names
parameters: {m: 1.0, g: 9.81, l1: 1.0}
coordinates: [theta1, x, y]
kinetic: 1/2*m*(l1**2*theta1_dot**2 + x_dot**2 + y_dot**2)
potential: -m*g*l1*cos(theta1) + m*g*y
constraints:
  - name: roll_x
    holonomic: x - l1*sin(theta1)
  - name: roll_y
    velocity: y_dot
  - name: string1
    holonomic: y - 0*x
"""


@pytest.mark.parametrize(("name", "text", "tex"), [
    ("theta_dot", "θ̇", r"\dot{\theta}"),
    ("theta1_ddot", "θ̈1", r"\ddot{\theta}1"),
    ("lambda_roll_x", "λ_roll_x", r"\lambda_{\mathrm{roll\_x}}"),
    ("lambda_string1", "λ_string1", r"\lambda_{\mathrm{string1}}"),
    ("a_theta1", "a_θ1", r"a_{\theta1}"),
    ("a_y", "a_y", "a_{y}"),
    ("x_1_dot", "ẋ_1", r"\dot{x}_{1}"),
    ("phi", "φ", r"\phi"),
])
def test_one_names_rule(name: str, text: str, tex: str) -> None:
    """A name's own underscores stay; only _dot/_ddot become dots; Greek names become letters;
    digits stay digits (no subscript guesses such as λᵣₒₗₗ ₓ or aₜₕₑₜₐ₁)."""
    from lagsim.symbolic import names

    assert names.text(name) == unicodedata.normalize("NFC", text)
    assert names.latex(name) == tex


def test_names_print_one_way_in_text_latex_and_json() -> None:
    """Every multiplier and velocity prints by the one rule in text (pretty and line-by-line)
    and LaTeX; JSON keeps the plain names."""
    model = model_of(NAMES)
    form = FORMS["lagrange"](model, False)
    text = render(form, "text", model) + render(form, "text", model, width=0)
    for shown in ("λ_roll_x", "λ_roll_y", "λ_string1", "θ̈1", "ẍ"):
        assert unicodedata.normalize("NFC", shown) in text, shown
    for guess in ("ᵣₒₗₗ", "λₛ", "θ₁", "λ_{", "_dot"):
        assert guess not in text, guess
    latex = render(form, "latex", model)
    for shown in (r"\lambda_{\mathrm{roll\_x}}", r"\lambda_{\mathrm{roll\_y}}",
                  r"\lambda_{\mathrm{string1}}", r"\ddot{\theta}1"):
        assert shown in latex, shown
    doc = json.loads(render(form, "json", model))
    assert "lambda_roll_x" in " ".join(doc["equations"])


def _calls_closed(line: str) -> bool:
    """Whether every function call opened on the line (sin(, cos(, sqrt() closes on it."""
    for m in re.finditer(r"(sin|cos|sqrt|tan|exp|log)\(", line):
        depth = 0
        for ch in line[m.end() - 1:]:
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if depth == 0:
                break
        if depth:
            return False
    return True


def test_text_wraps_between_terms_only_and_width_zero_does_not_wrap() -> None:
    """Text to a pipe wraps at the given width only between terms, never inside sin(…); with
    width 0 each equation stays on one line."""
    model = build_model(load_spec(BENCH / "derive_messy3.yaml"))
    form = FORMS["lagrange"](model, False)
    narrow = render(form, "text", model, width=60)
    for line in narrow.splitlines():
        assert _calls_closed(line), line
    wrapped = [line for line in narrow.splitlines() if line.startswith("    + ")
               or line.startswith("    - ")]
    assert wrapped
    flat = render(form, "text", model, width=0)
    assert not any(line.startswith("    + ") or line.startswith("    - ")
                   for line in flat.splitlines())


def test_form_all_of_a_two_coordinate_system_is_a_page() -> None:
    """Issue 14: `--form all` of the polar free mass (2 coordinates, no constraints) prints
    each item once (later forms refer back), a zero τ as one line, no Udwadia–Kalaba pieces:
    the forms of the equations of motion well under 100 lines, with Hamilton's about 150 (it
    was 3,000 lines for such a system)."""
    from lagsim.api import derive_forms, open_system

    model, forms = derive_forms(open_system("free_mass_polar"), "all")
    assert [f.name for f in forms] == ["lagrange", "matrix", "dae", "index1", "hamilton"]
    motion = render(forms[:-1], "text", model, width=80)
    assert len(motion.splitlines()) < 100
    text = render(forms, "text", model, width=80)
    assert len(text.splitlines()) < 150
    assert "as in [lagrange] above" in text and "τ: 0 (2×1)" in text
    alone = render(FORMS["udwadia-kalaba"](model, False), "text", model)
    assert len(alone.strip().splitlines()) == 3 and "no constraints" in alone


@pytest.mark.parametrize(("args", "words"), [
    (["--budget", "nan"], "nan is not a number of seconds"),
    (["--budget", "-1"], "--budget"),
    (["--width", "-3"], "--width"),
])
def test_derive_refuses_a_bad_budget_or_width(args: list[str], words: str) -> None:
    """A budget or width that is not a number in range is a usage error: one line, exit 2."""
    from click.testing import CliRunner

    from lagsim.cli import main

    result = CliRunner().invoke(main, ["derive", "pendulum", *args])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("lagsim: error: ") and words in result.stderr


def test_derive_width_zero_prints_each_equation_on_one_line() -> None:
    """`derive --width 0` through the command line: no continuation lines."""
    from click.testing import CliRunner

    from lagsim.cli import main

    result = CliRunner().invoke(main, ["derive", str(BENCH / "derive_messy3.yaml"),
                                       "--width", "0"])
    assert result.exit_code == 0, result.output

    def continued(text: str) -> bool:
        return any(line.startswith(("    + ", "    - ")) for line in text.splitlines())

    assert not continued(result.stdout)
    narrow = CliRunner().invoke(main, ["derive", str(BENCH / "derive_messy3.yaml"),
                                       "--width", "50"])
    assert continued(narrow.stdout)
