"""Small systems written inline, shared by the tests (and by benches, through ``sys.path``).

Where tests need one system with other names or start values, the system is written once
without them (``NATURAL_PENDULUM``, ...) and :func:`named` adds the ``name:`` line before and
the ``initial:``/``simulate:`` lines after, so each test's text is as it was written inline.
"""


def named(name: str, body: str, rest: str = "") -> str:
    """The text of a system: ``name: NAME``, then ``body``, then ``rest`` (its ``initial:`` and
    ``simulate:`` lines)."""
    return f"\nname: {name}\n{body}{rest}"


FLAT = """
name: flat
parameters: {m: 1.0, L: 1.0}
coordinates: [x, y]
kinetic: 1/2*m*(x_dot**2 + y_dot**2)
constraints:
  - name: rod
    holonomic: 1/2*(x**2 + y**2 - L**2)
"""

SKATE = """
name: skate
parameters: {m: 1.0, J: 0.1}
coordinates: [x, y, psi]
kinetic: 1/2*m*(x_dot**2 + y_dot**2) + 1/2*J*psi_dot**2
constraints:
  - name: skate
    velocity: x_dot*sin(psi) - y_dot*cos(psi)
"""

CONSTRAINED = """
name: constrained
parameters: {m: 1.0, g: 9.81, l: 1.0}
coordinates: [theta, beta, z]
masses:
  bob:
    mass: m
    position: [(l + beta)*cos(theta), (l + beta)*sin(theta), z]
gravity: [g, 0, 0]
constraints:
  - name: string
    holonomic: beta
  - name: plane
    holonomic: z
"""


SINGULAR = """
parameters: {m: 1.0, k: 1.0}
coordinates: [x, z]
kinetic: 1/2*m*x_dot**2
potential: 1/2*k*(x**2 + z**2)
"""


NATURAL_PENDULUM = """\
parameters: {m: 1.0, g: 9.81, l: 1.0}
coordinates: [x, y]
masses:
  bob: {mass: m, position: [x, y]}
gravity: [0, -g]
constraints:
  - name: rod
    holonomic: x**2 + y**2 - l**2
"""
"""The pendulum of seed 001 (Example 10.5) in natural coordinates (x, y): a point mass on a rod
of length l, φ = x² + y² − l² = 0."""

A01 = named("a01", NATURAL_PENDULUM, "initial: {x: l, y: 0, x_dot: 0, y_dot: 0}\n")
"""IFToMM A01: the pendulum in natural coordinates released from the horizontal."""

DOUBLE_PENDULUM_CARTESIAN = """\
parameters: {m1: 1.0, m2: 1.0, l1: 1.0, l2: 1.0, g: 9.81}
coordinates: [x1, y1, x2, y2]
masses:
  a: {mass: m1, position: [x1, y1]}
  b: {mass: m2, position: [x2, y2]}
gravity: [0, -g]
constraints:
  - name: rod1
    holonomic: x1**2 + y1**2 - l1**2
  - name: rod2
    holonomic: (x2 - x1)**2 + (y2 - y1)**2 - l2**2
"""
"""The double pendulum in the Cartesian coordinates of its two bobs, one rod each."""

SPHERICAL_PENDULUM_CARTESIAN = """\
parameters: {m: 1.0, g: 9.81, l: 1.0}
coordinates: [x, y, z]
masses:
  bob: {mass: m, position: [x, y, z]}
gravity: [0, 0, -g]
constraints:
  - name: rod
    holonomic: x**2 + y**2 + z**2 - l**2
"""
"""The spherical pendulum in Cartesian coordinates, φ = x² + y² + z² − l² = 0."""

SPHERICAL_CARTESIAN = named(
    "spherical_cartesian", SPHERICAL_PENDULUM_CARTESIAN,
    "initial: {x: l*sin(1), y: 0, z: -l*cos(1), x_dot: 0, y_dot: 3*l*sin(1), z_dot: 0}\n")
"""Released at θ = 1 rad with the azimuthal speed 3 l sin 1: it swings and turns."""

MOVING_PIVOT_PENDULUM = NATURAL_PENDULUM.replace("l: 1.0}", "l: 1.0, A: 0.1, w: 3.0}").replace(
    "x**2 + y**2 - l**2", "(x - A*sin(w*t))**2 + y**2 - l**2")
"""The natural pendulum whose pivot moves as A sin(ω t) along x: a rheonomic constraint."""

HARMONIC_OSCILLATOR = """\
parameters: {m: 2.0, k: 8.0}
coordinates: [x]
kinetic: 1/2*m*x_dot**2
potential: 1/2*k*x**2
"""
"""m ẍ = −k x: ω = √(k/m) = 2."""

STIFF = """\
name: stiff_damped_elastic_pendulum
parameters: {m: 1.0, g: 9.81, l0: 1.0, K: 1.0e8, c: 2.0e4}
coordinates: [r, theta]
kinetic: m/2*(r_dot**2 + r**2*theta_dot**2)
potential: -m*g*r*cos(theta) + K/2*(r - l0)**2
dissipation: 1/2*c*r_dot**2
initial: {r: 1.0, theta: 0.3}
"""
"""A pendulum on a stiff, critically damped spring (ζ = c / (2√(K m)) = 1): the radial mode's
eigenvalues are about −10⁴, the swing's about ±3i, so explicit methods step at 10⁻⁴ s."""


CUSP = """name: cusp
coordinates: [x, y]
kinetic: 1/2*(x_dot**2 + y_dot**2)
constraints:
  - name: curve
    holonomic: y**2 - x**3
initial: {x: 1.0, y: -1.0, x_dot: -1.0, y_dot: 1.5}
simulate: {t_end: 3}
"""
"""A point on the cusp y² = x³, started so that it runs into the cusp at the origin, where φ_q
= (−3x², 2y) vanishes: the reduced formulation must stop there (issue 16 §2)."""


FALL = """name: fall
coordinates: [x, y]
kinetic: 1/2*(x_dot**2 + y_dot**2)
potential: -1/x
constraints:
  - name: slant
    holonomic: y - x
initial:
  x: 1
  y: 1
"""
"""A point on the slant y = x in the potential −1/x: it falls into x = 0, where the force is not
finite, and the run must fail there alike in every loop."""


SPRING_SKATE = """
name: spring_skate
parameters: {m: 1.5, J: 0.1, k: 6.0}
coordinates: [x, y, psi]
kinetic: 1/2*m*(x_dot**2 + y_dot**2) + 1/2*J*psi_dot**2
potential: 1/2*k*(x**2 + y**2)
constraints:
  - name: skate
    velocity: x_dot*sin(psi) - y_dot*cos(psi)
initial: {x: 0.1}
"""
"""The skate (ẋ sin ψ − ẏ cos ψ = 0) held by a spring k on x and y."""

SECANT = """name: secant
parameters: {m: 1.0}
coordinates: [q1, q2]
kinetic: 1/2*m*(q1_dot**2 + q2_dot**2)
constraints:
  - name: c
    velocity: (1 + q2**2)*q1_dot + cos(q1)*q2_dot
initial: {q1: 0.3, q2: 0.2}
"""
"""A velocity constraint with the real first integral ½ log((1 + sin q1)/(1 − sin q1)) +
atan q2 (issue 29)."""


PENDULUM_AGAINST_A_WALL = """\
parameters: {m: 1.0, g: 9.81, l: 1.0, alpha: pi/12, e: 0.7}
coordinates: [x, y]
kinetic: 1/2*m*(x_dot**2 + y_dot**2)
potential: m*g*y
constraints:
  - {name: rod, holonomic: (x**2 + y**2 - l**2)/2}
  - {name: wall, unilateral: l*sin(alpha) - x, restitution: e}
"""
"""The pendulum in Cartesian coordinates, its rod a holonomic constraint, against the wall
x ≤ l sin α with restitution e (bundled pendulum_stop with the rod kept as a constraint)."""

CONSTRAINED_STOP = named("constrained_stop", PENDULUM_AGAINST_A_WALL,
                         "initial: {x: -0.8660254037844386, y: -0.5}\n")
"""Released from 30° on the other side of the wall, which stands at α = 15°."""
