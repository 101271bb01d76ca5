"""A warning, once per run, when the output samples are too far apart for the motion they
sample (issue 14: a pendulum of period 2 s sampled every 1000 s draws a random-looking curve).

The integrator resolves the motion whatever the output spacing, so its accepted steps show how
fast the system moves. A coordinate turns back where its velocity changes sign; a whole
oscillation has two turns. By the sampling theorem (Shannon; Nyquist) a signal needs more than
two samples per period, that is fewer than one turn between two samples; this watch counts the
turns of each coordinate at the ends of the accepted steps between two sample times and warns
when one interval holds :data:`TURNS` or more. The period it quotes is 2 × time / turns over
all the steps read so far.

It costs nothing while samples are denser than steps: the velocities are read only once an
interval has had more than :data:`QUIET_STEPS` steps, then every :data:`STRIDE` steps. A
velocity counts as turned only when it crosses from beyond a small threshold on one side to beyond
it on the other (1e-6 of the largest |q̇_i| seen, and of 1e-6 of the largest of all), so a
coordinate a constraint holds at zero, whose velocity is round-off, never counts.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from lagsim.spec.options import BY_NAME, FLAGS, Naming

TURNS = 2
"""Turns of one coordinate between two samples from which the run warns (one period)."""
QUIET_STEPS = 4
"""Accepted steps per sample interval below which the velocities are not read."""
STRIDE = 3
"""Once reading, the velocities are read every this many steps: an explicit method at lagsim's
tolerances takes tens of steps per period, so every third still sees each turn, at a third of
the cost (measured: a pendulum sampled twice in 400 s runs 1.2× as long as without the watch,
1.5× when reading every step)."""
_RELATIVE = 1e-6


class AliasWatch:
    """Counts turning points between output samples (see the module docstring).

    ``unpack(t, y) -> (q, q̇)`` reads a step's state, ``times`` are the sample times, ``names``
    the coordinates, ``say(message)`` prints the warning (the CLI's stderr)."""

    def __init__(self, unpack: Callable, times: np.ndarray, names: tuple[str, ...],
                 say: Callable[[str], None], qd0: np.ndarray, naming: Naming = FLAGS) -> None:
        self.unpack = unpack
        self.times = times
        self.names = names
        self.say = say
        self.naming = naming
        self.k = 1
        self.steps = 0
        n = len(names)
        self.sign = np.zeros(n)
        self.turns = np.zeros(n, dtype=int)
        self.top = np.abs(np.asarray(qd0, dtype=float))
        self.done = len(times) < 2 or n == 0
        self.reading = False
        self.since = 0.0
        self.total = np.zeros(n, dtype=int)

    def resume(self, t: float, done: bool) -> None:
        """Go on at t from a loop that watched the run so far (the reduced C loop handing over
        to the Python loop); ``done`` when it has warned already."""
        self.done = self.done or done
        self.k = min(int(np.searchsorted(self.times, t, side="right")), len(self.times) - 1)

    def accepted(self, t: float, y: np.ndarray) -> None:
        """After each accepted step ending at ``t`` with state ``y``."""
        if self.done:
            return
        self.steps += 1
        if self.steps > QUIET_STEPS and not self.reading:
            self.reading, self.since = True, t
        if self.reading and self.steps % STRIDE == 0:
            self._turns(t, y)
        if t < self.times[self.k]:
            return
        if self.turns.max() >= TURNS:
            self._warn(t)
            return
        self.k = min(int(np.searchsorted(self.times, t, side="right")), len(self.times) - 1)
        self.steps = 0
        self.turns[:] = 0

    def _turns(self, t: float, y: np.ndarray) -> None:
        qd = np.asarray(self.unpack(t, y)[1], dtype=float)
        speed = np.abs(qd)
        np.maximum(self.top, speed, out=self.top, where=np.isfinite(speed))
        threshold = _RELATIVE * np.maximum(self.top, _RELATIVE * self.top.max(initial=0.0))
        sign = np.where(qd > threshold, 1.0, np.where(qd < -threshold, -1.0, 0.0))
        flipped = (sign != 0.0) & (self.sign != 0.0) & (sign != self.sign)
        self.turns += flipped
        self.total += flipped
        self.sign = np.where(sign != 0.0, sign, self.sign)

    def _warn(self, t: float) -> None:
        self.done = True
        i = int(np.argmax(self.turns))
        self.say(message(float(self.times[self.k] - self.times[self.k - 1]), self.names[i],
                         int(self.turns[i]), 2.0 * (t - self.since) / self.total[i], self.naming))


def message(spacing: float, name: str, turns: int, period: float,
            naming: Naming = FLAGS) -> str:
    """The warning of a run whose samples ``spacing`` apart see ``name`` turn back ``turns``
    times between two of them (the Python loop's :class:`AliasWatch` and the C loop's); the
    options are written as ``naming`` writes them (the run's
    :attr:`lagsim.spec.options.SimulateOptions.naming`)."""
    return (f"warning: the samples are {spacing:.4g} apart, but {name} turns back {turns} "
            f"times between two of them (it swings with a period of about {period:.3g}): the "
            f"CSV aliases the motion; give {naming.give('dt', f'{period / 20:.2g}')} or more "
            f"{naming.name(BY_NAME['samples'])}")
