/* One RATTLE step (Andersen 1983) from x = (q, v) at t to y = (q, v) at t + h.
   aux: M^-1 (n-by-n). kick(t, q, v) = f + tau; con(t, q) = (phi, G).
   Placeholders: FS_N_REAL and FS_M_REAL, the model's n and m (filled by
   lagsim.run.engines.rattle.Rattle.prepare); FS_N, FS_M, FS_STATE, FS_ROW, FS_EPS and FS_MAXIT are
   defined before this text (lagsim.run.engines.rattle._build_c). Returns 0 or a STEP_ code. */
#include "status.h"

static int fs_step(double t, double h, const double *x, double *y, const double *aux,
                   const double *p)
{
    const int n = FS_N_REAL, m = FS_M_REAL;
    const double *q = x, *v = x + FS_N_REAL, *Mi = aux;
    double in[1 + 2 * FS_N], f[FS_N], vh[FS_N], qt[FS_N], B[FS_N * FS_M], G0[FS_M * FS_N];
    double cg[FS_M + FS_M * FS_N], lam[FS_M], J[FS_M * FS_M], r[FS_M], vs[FS_N];
    double *q1 = y, *v1 = y + FS_N_REAL;
    int i, j, a, b, it;
    in[0] = t;
    memcpy(in + 1, x, 2 * n * sizeof(double));
    kick(in, p, f);
    for (i = 0; i < n; i++) {
        double s = 0.0;
        for (j = 0; j < n; j++) s += Mi[i * n + j] * f[j];
        vh[i] = v[i] + 0.5 * h * s;
        qt[i] = q[i] + h * vh[i];
        q1[i] = qt[i];
    }
    if (m > 0) {
        double prev = INFINITY;
        memcpy(in + 1, q, n * sizeof(double));
        con(in, p, cg);
        memcpy(G0, cg + m, m * n * sizeof(double));
        for (i = 0; i < n; i++)
            for (a = 0; a < m; a++) {
                double s = 0.0;
                for (j = 0; j < n; j++) s += Mi[i * n + j] * G0[a * n + j];
                B[i * m + a] = 0.5 * h * h * s;
            }
        for (a = 0; a < m; a++) lam[a] = 0.0;
        in[0] = t + h;
        for (it = 0;; it++) {
            double err, scale;
            memcpy(in + 1, q1, n * sizeof(double));
            con(in, p, cg);
            err = fs_maxabs(m, cg);
            scale = 1.0 + fs_maxabs(m * n, cg + m) * (1.0 + fs_maxabs(n, q1));
            if (!isfinite(err)) return STEP_NONFINITE;
            if (err <= 4e-16 * scale) break;
            if (it >= FS_MAXIT || (it > 4 && err >= prev)) {
                if (err <= 1e-12 * scale) break;
                return STEP_NEWTON;
            }
            prev = err;
            for (a = 0; a < m; a++)
                for (b = 0; b < m; b++) {
                    double s = 0.0;
                    for (i = 0; i < n; i++) s += cg[m + a * n + i] * B[i * m + b];
                    J[a * m + b] = s;
                }
            for (a = 0; a < m; a++) r[a] = -cg[a];
            if (lagsim_lu_solve(m, 1, J, r)) return STEP_SINGULAR;
            for (a = 0; a < m; a++) lam[a] += r[a];
            for (i = 0; i < n; i++) {
                double s = qt[i];
                for (a = 0; a < m; a++) s += B[i * m + a] * lam[a];
                q1[i] = s;
            }
        }
        for (i = 0; i < n; i++) {
            double s = 0.0;
            for (a = 0; a < m; a++) s += B[i * m + a] * lam[a];
            vh[i] += s / h;
        }
    }
    in[0] = t + h;
    memcpy(in + 1, q1, n * sizeof(double));
    for (i = 0; i < n; i++) in[1 + n + i] = 2.0 * vh[i] - v[i];
    kick(in, p, f);
    for (i = 0; i < n; i++) {
        double s = 0.0;
        for (j = 0; j < n; j++) s += Mi[i * n + j] * f[j];
        vs[i] = vh[i] + 0.5 * h * s;
    }
    if (m > 0) {
        /* cg holds (phi, G) at q1 */
        double MG[FS_N * FS_M];
        for (i = 0; i < n; i++)
            for (a = 0; a < m; a++) {
                double s = 0.0;
                for (j = 0; j < n; j++) s += Mi[i * n + j] * cg[m + a * n + j];
                MG[i * m + a] = s;
            }
        for (a = 0; a < m; a++) {
            double s = 0.0;
            for (i = 0; i < n; i++) s += cg[m + a * n + i] * vs[i];
            r[a] = -2.0 / h * s;
            for (b = 0; b < m; b++) {
                double u = 0.0;
                for (i = 0; i < n; i++) u += cg[m + a * n + i] * MG[i * m + b];
                J[a * m + b] = u;
            }
        }
        if (lagsim_lu_solve(m, 1, J, r)) return STEP_SINGULAR;
        for (i = 0; i < n; i++) {
            double s = 0.0;
            for (a = 0; a < m; a++) s += MG[i * m + a] * r[a];
            vs[i] += 0.5 * h * s;
        }
    }
    memcpy(v1, vs, n * sizeof(double));
    return 0;
}
