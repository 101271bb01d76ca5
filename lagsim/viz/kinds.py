"""The kinds of ``lagsim plot``, each with what it draws: declared once, here, for the plotting
code (:mod:`lagsim.plot`), the ``--kind`` choices and ``lagsim plot --help`` (a module without
numerics, so that building the command line stays fast)."""

from __future__ import annotations

from collections.abc import Mapping

from lagsim.spec import choices

KIND_HELP: Mapping[str, str] = {
    "overview": "stacked panels sharing t: coordinates, velocities, constraint drift |residual| "
                "(log), energy drift (log), multipliers lambda; each one the CSV has. For a "
                "system that does not conserve h (forces, explicit t): the energy balance h - h0 "
                "against the work W of those forces instead of a drift",
    "time": "--columns (or --y) against --x (default t); default columns: the coordinates",
    "phase": "each coordinate against its velocity, start (circle) and end (square) marked",
    "drift": "constraint drift on log axes: |phi| (position level) and the velocity level",
    "energy": "the energy h(t) and its drift |h - h0|, relative to |h0| when that is a scale; "
              "h - h0 and the work W, then |h - h0 - W|, when h is not conserved",
    "forces": "the multipliers lambda_<c> (the constraint forces) against t",
    "invariants": "the relative drift |I - I0| / |I0| of each conserved quantity that `lagsim "
                  "check` finds (log); simulates with --invariants, or computes them for a CSV "
                  "given with --system",
    "lyapunov": "the running estimate of each Lyapunov exponent against t, from the CSV of "
                "`lagsim lyapunov --trace`, with 0 marked: converged when the lines flatten",
    "sweep": "a sweep's table (lagsim sweep): --y against the swept --x, a line for one swept "
             "value, a heat map for a grid of two, coloured points for random draws; chosen by "
             "itself for a table whose first column is run",
    "poincare": "Poincaré sections: --y against --x at the crossings of simulate --section, of "
                "one CSV, a folder of runs (sweep --save-trajectories) or a system",
    "path": "the masses' paths in the plane gravity points down in (or --view's), equal "
            "axes, gravity's arrow (needs the system: a system INPUT, or --system); on 3-D "
            "axes seen from --view for a system with 3-D bodies: each body's principal axes "
            "and box of equal inertia, the path of its symmetry axis's tip, the origin and "
            "gravity",
}
"""Each plot kind and what it draws, in the order ``--help`` lists them."""

KINDS: tuple[str, ...] = choices.PLOT_KINDS
"""The kinds, declared in :mod:`lagsim.spec.choices` (:data:`KIND_HELP` names the same ones)."""

SWEEP_KINDS: tuple[str, ...] = ("sweep", "poincare")
"""The kinds :mod:`lagsim.viz.sweep_figures` draws (from a sweep's table or sections); the others
are :mod:`lagsim.plot`'s (:data:`FIGURE_KINDS`)."""

FIGURE_KINDS: tuple[str, ...] = tuple(k for k in KINDS if k not in SWEEP_KINDS)
