"""One rule for how a name is shown, in text, LaTeX and plot labels alike (issue 14).

A name's own underscores stay as written; only the ``_dot`` and ``_ddot`` suffixes of the
project's conventions (:mod:`lagsim.naming`: the velocity of ``x`` is ``x_dot``) become a dot or
two over the name; a part between underscores that is the name of a Greek letter, optionally
followed by digits, becomes that letter. Digits stay digits (no subscripts guessed):

=================  ============  ====================================
name               text          LaTeX
=================  ============  ====================================
``theta_dot``      θ̇             ``\\dot{\\theta}``
``theta1_ddot``    θ̈1            ``\\ddot{\\theta}1``
``lambda_roll_x``  λ_roll_x      ``\\lambda_{\\mathrm{roll\\_x}}``
``a_theta1``       a_θ1          ``a_{\\theta1}``
``x_1``            x_1           ``x_{1}``
``th1_dot``        tḣ1           ``\\dot{\\mathrm{th}}1``
=================  ============  ====================================

SymPy's printers guess instead (``theta1`` → θ₁, ``lambda_roll_x`` → λᵣₒₗₗ ₓ next to ``λ_roll_y``),
so :mod:`lagsim.symbolic.render` prints every symbol through :func:`text` and :func:`latex`.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from lagsim import naming

GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "zeta": "ζ",
    "eta": "η", "theta": "θ", "iota": "ι", "kappa": "κ", "lambda": "λ", "lam": "λ", "mu": "μ",
    "nu": "ν", "xi": "ξ", "omicron": "ο", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ",
    "upsilon": "υ", "phi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω",
    "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π",
    "Sigma": "Σ", "Upsilon": "Υ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
}
"""Greek letter names (and ``lam``, the spelling a Python keyword forces for λ)."""

_TEX_GREEK = {name: "\\" + ("lambda" if name == "lam" else name) for name in GREEK
              if name not in ("omicron",)}
_TEX_GREEK["omicron"] = "o"

_DOTS = {1: "\u0307", 2: "\u0308"}
_TEX_DOTS = {1: "\\dot", 2: "\\ddot"}
_PART = re.compile(r"([A-Za-z]+)(\d*)")


def _letters(part: str) -> tuple[str, str] | None:
    """``(letters, digits)`` of a part that is letters then digits, else None."""
    m = _PART.fullmatch(part)
    return (m[1], m[2]) if m else None


@functools.lru_cache(maxsize=4096)
def text(name: str) -> str:
    """The name as text (unicode, NFC): see the module's table."""
    base, dots = naming.dots(name)
    head, *rest = base.split("_")
    parts = _letters(head)
    if parts is None:
        shown = head + (_DOTS[dots] if dots else "")
    else:
        letters, digits = parts
        letters = GREEK.get(letters, letters)
        shown = letters + (_DOTS[dots] if dots else "") + digits
    for part in rest:
        p = _letters(part)
        shown += "_" + (GREEK.get(p[0], p[0]) + p[1] if p else part)
    return unicodedata.normalize("NFC", shown)


def _tex_escape(s: str) -> str:
    return s.replace("\\", r"\textbackslash{}").replace("_", r"\_").replace("&", r"\&") \
        .replace("%", r"\%").replace("$", r"\$").replace("#", r"\#").replace("{", r"\{") \
        .replace("}", r"\}")


@functools.lru_cache(maxsize=4096)
def latex(name: str) -> str:
    """The name as LaTeX (math mode): see the module's table."""
    base, dots = naming.dots(name)
    head, *rest = base.split("_")
    parts = _letters(head)
    if parts is None:
        core, digits = rf"\mathrm{{{_tex_escape(head)}}}", ""
    else:
        letters, digits = parts
        if letters in _TEX_GREEK:
            core = _TEX_GREEK[letters]
        elif len(letters) == 1:
            core = letters
        else:
            core = rf"\mathrm{{{letters}}}"
    out = (f"{_TEX_DOTS[dots]}{{{core}}}" if dots else core) + digits
    if rest:
        greek = [_letters(p) for p in rest]
        if len(rest) == 1 and greek[0] and greek[0][0] in _TEX_GREEK:
            out += f"_{{{_TEX_GREEK[greek[0][0]]}{greek[0][1]}}}"
        elif len(rest) == 1 and (len(rest[0]) == 1 or rest[0].isdigit()):
            out += f"_{{{rest[0]}}}"
        else:
            out += rf"_{{\mathrm{{{_tex_escape('_'.join(rest))}}}}}"
    return out
