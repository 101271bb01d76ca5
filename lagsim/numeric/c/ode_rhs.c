/* The right-hand side y' = [q̇, q̈] of an unconstrained model, M(q) q̈ = F(q, q̇, t) (seed 001
   eq. 10.12-10.14), from the model's dynamics function (M row-major, then F); a non-finite
   entry of M gives q̈ = NaN, as numpy.linalg.solve would. 0, or 1 when M is singular.
   Slots filled by lagsim.numeric.ccompile: N, the coordinates; STATES = 2 n; IN = 1 + 2 n;
   MASS = n n; DYNAMICS = n n + n. */
int lagsim_ode_rhs(double t, const double *y, double *out, const double *p)
{
    double in[@IN@], dyn[@DYNAMICS@], L[@MASS@];
    int i;
    in[0] = t;
    memcpy(in + 1, y, @STATES@ * sizeof(double));
    dynamics(in, p, dyn);
    memcpy(out, y + @N@, @N@ * sizeof(double));
    memcpy(out + @N@, dyn + @MASS@, @N@ * sizeof(double));
    for (i = 0; i < @MASS@; i++)
        if (!isfinite(dyn[i])) {
            for (i = @N@; i < @STATES@; i++) out[i] = NAN;
            return 0;
        }
    return lagsim_solve(@N@, dyn, out + @N@, L);
}
