/* lag(t, q, v) = (Lq, Lv, Lqq, Lqv, Lvv, tau, tau_q, tau_v); con(t, q) = (phi, G, phi_t).
   State x = (q, p, v).
   Placeholders: FS_N_REAL and FS_M_REAL, the model's n and m (filled by
   lagsim.run.engines.variational.Variational.prepare); FS_N, FS_M, FS_STATE, FS_ROW, FS_EPS and FS_MAXIT are
   defined before this text (lagsim.run.engines.rattle._build_c). Returns 0 or a STEP_ code. */
#include "status.h"

static int fs_step(double t, double h, const double *x, double *y, const double *aux,
                   const double *p)
{
    const int n = FS_N_REAL, m = FS_M_REAL, K = FS_N_REAL + FS_M_REAL;
    const double *q = x, *pk = x + FS_N_REAL, *v = x + 2 * FS_N_REAL;
    double in[1 + 2 * FS_N], L[5 * FS_N * FS_N + 5 * FS_N], cg[2 * FS_M + FS_M * FS_N];
    double Gk[FS_M * FS_N], J[(FS_N + FS_M) * (FS_N + FS_M)], r[FS_N + FS_M], lam[FS_M];
    double P[FS_N], vb[FS_N];
    double *q1 = y, *p1 = y + FS_N_REAL, *v1 = y + 2 * FS_N_REAL;
    const double *Lq = L, *Lv = L + n, *Lqq = L + 2 * n, *Lqv = L + 2 * n + n * n;
    const double *Lvv = L + 2 * n + 2 * n * n, *tau = L + 2 * n + 3 * n * n;
    const double *tq = L + 3 * n + 3 * n * n, *tv = L + 3 * n + 4 * n * n;
    int i, j, a, it, done = 0;
    (void)aux;
    if (m > 0) {
        in[0] = t;
        memcpy(in + 1, q, n * sizeof(double));
        con(in, p, cg);
        memcpy(Gk, cg + m, m * n * sizeof(double));
    }
    for (i = 0; i < n; i++) { vb[i] = v[i]; q1[i] = q[i] + h * v[i]; }
    for (a = 0; a < m; a++) lam[a] = 0.0;
    for (it = 0; !done; it++) {
        double step, size;
        if (it > FS_MAXIT) return STEP_NEWTON;
        in[0] = t + 0.5 * h;
        for (i = 0; i < n; i++) {
            in[1 + i] = q[i] + 0.5 * h * vb[i];
            in[1 + n + i] = vb[i];
        }
        lag(in, p, L);
        for (i = 0; i < n; i++) {
            double s = pk[i] + 0.5 * h * (Lq[i] + tau[i]) - Lv[i];
            for (a = 0; a < m; a++) s += 0.5 * h * Gk[a * n + i] * lam[a];
            r[i] = -s;
            for (j = 0; j < n; j++)
                J[i * K + j] = 0.25 * h * (Lqq[i * n + j] + tq[i * n + j])
                               + 0.5 * (Lqv[i * n + j] - Lqv[j * n + i] + tv[i * n + j])
                               - Lvv[i * n + j] / h;
            for (a = 0; a < m; a++) J[i * K + n + a] = 0.5 * h * Gk[a * n + i];
        }
        if (m > 0) {
            in[0] = t + h;
            memcpy(in + 1, q1, n * sizeof(double));
            con(in, p, cg);
            for (a = 0; a < m; a++) {
                r[n + a] = -cg[a];
                for (j = 0; j < n; j++) J[(n + a) * K + j] = cg[m + a * n + j];
                for (j = 0; j < m; j++) J[(n + a) * K + n + j] = 0.0;
            }
        }
        if (lagsim_lu_solve(K, 1, J, r)) return STEP_SINGULAR;
        for (i = 0; i < n; i++) { vb[i] += r[i] / h; q1[i] = q[i] + h * vb[i]; }
        for (a = 0; a < m; a++) lam[a] += r[n + a];
        step = fs_maxabs(n, r);
        size = 1.0 + fs_maxabs(n, q1);
        if (!isfinite(step)) return STEP_NONFINITE;
        done = it > 0 && step <= 1e-14 * size;
    }
    in[0] = t + 0.5 * h;
    for (i = 0; i < n; i++) {
        in[1 + i] = q[i] + 0.5 * h * vb[i];
        in[1 + n + i] = vb[i];
    }
    lag(in, p, L);
    for (i = 0; i < n; i++) {
        P[i] = 0.5 * h * (Lq[i] + tau[i]) + Lv[i];
        v1[i] = vb[i];
    }
    if (m > 0) {
        in[0] = t + h;
        memcpy(in + 1, q1, n * sizeof(double));
        con(in, p, cg);
    }
    for (a = 0; a < m; a++) lam[a] = 0.0;
    for (it = 0, done = 0; !done; it++) {
        double step;
        if (it > FS_MAXIT) return STEP_NEWTON;
        in[0] = t + h;
        memcpy(in + 1, q1, n * sizeof(double));
        memcpy(in + 1 + n, v1, n * sizeof(double));
        lag(in, p, L);
        for (i = 0; i < n; i++) {
            double s = Lv[i] - P[i];
            for (a = 0; a < m; a++) s -= 0.5 * h * cg[m + a * n + i] * lam[a];
            r[i] = -s;
            for (j = 0; j < n; j++) J[i * K + j] = Lvv[i * n + j];
            for (a = 0; a < m; a++) J[i * K + n + a] = -0.5 * h * cg[m + a * n + i];
        }
        for (a = 0; a < m; a++) {
            double s = cg[m + m * n + a];
            for (j = 0; j < n; j++) { s += cg[m + a * n + j] * v1[j];
                                      J[(n + a) * K + j] = cg[m + a * n + j]; }
            for (j = 0; j < m; j++) J[(n + a) * K + n + j] = 0.0;
            r[n + a] = -s;
        }
        if (lagsim_lu_solve(K, 1, J, r)) return STEP_SINGULAR;
        for (i = 0; i < n; i++) v1[i] += r[i];
        for (a = 0; a < m; a++) lam[a] += r[n + a];
        step = fs_maxabs(n, r);
        if (!isfinite(step)) return STEP_NONFINITE;
        done = step <= 1e-14 * (1.0 + fs_maxabs(n, v1));
    }
    in[0] = t + h;
    memcpy(in + 1, q1, n * sizeof(double));
    memcpy(in + 1 + n, v1, n * sizeof(double));
    lag(in, p, L);
    memcpy(p1, Lv, n * sizeof(double));
    return 0;
}
