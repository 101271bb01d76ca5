"""Small systems written inline, shared by the tests of the forms and of their rendering."""

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
