/* @P@.h: the model "@NAME@" exported by lagsim @VERSION@ (lagsim export). Standalone C99: no
   Python and no lagsim at run time; build with  cc -O2 -c @P@.c  (link with -lm).

   Layouts (every array is a plain double array, indices fixed below):
     y[@P@_NY]      the state: the coordinates q, then their velocities q_dot
                    (@STATE_NAMES@)
     p[@P@_NP]      the parameters, the file's values in @P@_parameter_start
                    (@PARAMETER_NAMES@); @INPUTS@
     out[@P@_NOUT]  the outputs: each mass's position, the multipliers lambda_<c> and the
                    energy h = q_dot . dL/dq_dot - L (@OUTPUT_NAMES@)
   @CONSTRAINTS@
   Every function is reentrant (no global state) and returns 0, or 1 when a linear system of
   the step is singular (the mass matrix, or the constraints' matrix). */
#ifndef @GUARD@
#define @GUARD@

#include <stddef.h>

#define @P@_N @N@       /* coordinates */
#define @P@_M @M@       /* constraint rows */
#define @P@_NY @NY@      /* states */
#define @P@_NP @NP@      /* parameters */
#define @P@_NOUT @NOUT@    /* outputs */

/* Each entry's index: @P@_Y_<state>, @P@_P_<parameter>, @P@_OUT_<output>. */
@INDICES@

extern const char *const @P@_state_names[@P@_NY];
extern const char *const @P@_parameter_names[@P@_NP];
extern const char *const @P@_output_names[@P@_NOUT];
extern const double @P@_parameter_start[@P@_NP];
extern const char *const @P@_constraint_names[@P@_M + 1];
/* The start state at t = @T0@ with the file's parameters (on the constraints: lagsim's
   consistent start). */
extern const double @P@_state_start[@P@_NY];
/* The start state as the file gives it, before it is moved onto the constraints: the values of
   'initial:' (1 where @P@_state_given is 1), 0 for the others (a quaternion left out at the
   identity). @P@_consistent_start of it gives @P@_state_start. */
extern const double @P@_state_initial[@P@_NY];
extern const unsigned char @P@_state_given[@P@_NY];
/* 1 for each parameter the file defines from others (I: m*l**2): @P@_derive computes it. */
extern const unsigned char @P@_parameter_derived[@P@_NP];
/* Set the parameters the file defines from others (@DERIVED_NAMES@) from the others in p, as
   lagsim simulate --set re-reads them: call after changing a parameter. */
void @P@_derive(double *p);
/* y = the start state as the file gives it at the parameters p: @P@_state_initial with the
   initial values the file writes as expressions in parameters (@DEFINED_NAMES@) evaluated at p
   (call @P@_derive first). With constraints, @P@_consistent_start then moves it onto them. */
void @P@_initial(const double *p, double *y);
/* Move y onto the constraints as lagsim simulate's consistent start does
   (lagsim.run.start.consistent_start): the states with given[i] = 1 are kept where the
   constraints allow, the others computed (by Gauss-Newton in the metric of the mass matrix,
   the velocities by the least-change solution of A q_dot + c = 0); given values move only by
   the least change the others cannot take up; unset coordinates at a singular point of the
   constraints fall to the side the force at rest points to. 0; 1 when the mass matrix is
   singular at y; 2 when no consistent state is found, or no force at rest picks the side of a
   singular point (give those coordinates). On failure why (size chars) says which
   constraints. */
int @P@_consistent_start(double t, double *y, const double *p, const unsigned char *given,
                         char *why, size_t size);

/* dy = y' = [q_dot, q_ddot] at time t. */
int @P@_rhs(double t, const double *y, const double *p, double *dy);
/* The outputs at (t, y). */
int @P@_outputs(double t, const double *y, const double *p, double *out);
/* J = dy'/dy (@P@_NY x @P@_NY, row-major) of @P@_rhs, from the symbolic derivatives of the
   equations of motion (the Jacobian lagsim's implicit methods use). */
int @P@_jacobian(double t, const double *y, const double *p, double *J);
/* The largest constraint residual (phi of each holonomic row, A q_dot + c of each row) over
   1 + max|row| (1 + max|y|): a start is on the constraints below @P@_TOLERANCE, lagsim's
   test (lagsim.run.start.TOLERANCE). 0 without constraints. */
#define @P@_TOLERANCE @TOLERANCE@
double @P@_constraint_residual(double t, const double *y, const double *p);
/* The event indicator: g = the --stop-when expression (@STOP_WHEN@) at (t, y), where a run
   stops when g changes sign (@P@_NEVENT is 1 with one, 0 without; the FMU's Model Exchange event indicator; @P@_integrate_until stops at it). */
#define @P@_NEVENT @NEVENT@
int @P@_event(double t, const double *y, const double *p, double *g);
/* Advance (t, y) to t_end with DOP853 (scipy's algorithm and coefficients, the steps lagsim's
   C loop takes) at the tolerances rtol, atol; *h is the step size to try (0: chosen as scipy
   does) and becomes the next one. 0, 1 (singular), 3 (the step size fell below the spacing
   of the numbers) or 4 (--stabilize projection: the projection onto the constraints did not
   converge). @STABILIZER@ */
int @P@_integrate(double *t, double *y, double t_end, const double *p, double rtol,
                  double atol, double *h);

/* @P@_integrate stopping at the --stop-when crossing (where g changes sign, located by
   bisection to the spacing of the numbers): *stopped 1 then, with (t, y) there. */
int @P@_integrate_until(double *t, double *y, double t_end, const double *p, double rtol,
                        double atol, double *h, int *stopped);

#endif
