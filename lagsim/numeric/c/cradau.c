/* Radau IIA of order 5 stepping an unconstrained system (formulation ode) in C (issue 9,
   "Stiff systems"): scipy.integrate.Radau's algorithm step for step (scipy/integrate/_ivp/
   radau.py: solve_collocation_system, predict_factor, Radau._step_impl, RadauDenseOutput;
   common.select_initial_step with order 3), with the constants of that module (printed
   exactly by lagsim/run/engines/cradau.py), the analytic Jacobian of lagsim.numeric.jacobian.RhsJacobian, and the
   checks and samples of lagsim.run.driver's Python loop (Guard.accepted with MassWatch,
   Samples.take). Model independent: the model's compiled dynamics and Jacobian come in as
   pointers. The complex system (MU_COMPLEX/h I - J) is factored with C99 complex arithmetic. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef void (*lagsim_fn)(const double *in, const double *p, double *out);

#include "status.h"

@CONSTANTS@

#define NEWTON_MAXITER 6
#define MIN_FACTOR 0.2
#define MAX_FACTOR 10.0

typedef struct {
    int nq, N;
    lagsim_fn dyn, jac;
    const double *p, *pj;
    double rtol, t_bound, newton_tol, mass_rtol, mass_scale;
    double *atol;
    /* scipy's Radau attributes */
    double t, t_old, h_abs, h_abs_old, error_norm_old;
    int has_old, has_sol, current_jac, lu_ok;
    double *y, *f, *y_old, *J, *LUr, *Z, *Q, *sol_y_old;
    double complex *LUc;
    int *pr, *pc;
    double sol_t_old, sol_h;
    /* lagsim.run.driver.Guard */
    double guard_h, regular_at;
    int unchecked, mass_every;
    long nfev, njev, nlu, nsteps;
    /* work */
    double *in, *dynv, *Mw, *Bw, *L, *Z0, *W, *F, *dW, *ynew, *fnew, *ytmp, *err, *ZE, *sc;
    double complex *fc;
} R;

/* --- rhs and Jacobian ---------------------------------------------------------------- */

@RUNTIME@

/* y' = [q̇, M⁻¹F] as the model library's lagsim_ode_rhs makes it (L D Lᵀ, else LU; a
   non-finite M gives NaN accelerations): 0, or 1 for a singular M. */
static int rhs(R *r, double t, const double *y, double *out)
{
    int nq = r->nq, i, k;
    r->nfev++;
    r->in[0] = t;
    memcpy(r->in + 1, y, (size_t)r->N * sizeof(double));
    r->dyn(r->in, r->p, r->dynv);
    memcpy(out, y + nq, (size_t)nq * sizeof(double));
    memcpy(out + nq, r->dynv + nq * nq, (size_t)nq * sizeof(double));
    for (i = 0; i < nq * nq; i++)
        if (!isfinite(r->dynv[i])) {
            for (k = nq; k < r->N; k++) out[k] = NAN;
            return 0;
        }
    return lagsim_solve(nq, r->dynv, out + nq, r->L);
}

/* J = ∂y'/∂y (lagsim.numeric.jacobian.RhsJacobian without constraints): q̈ = M⁻¹F, then
   [∂q̈/∂q, ∂q̈/∂q̇] = −M⁻¹ [∂R/∂q, ∂R/∂q̇] with R = M q̈ − F. 0, or 1 for a singular M. */
static int jacobian(R *r, double t, const double *y)
{
    int nq = r->nq, N = r->N, i, j;
    double *x = r->in, *acc = r->Bw;
    r->njev++;
    x[0] = t;
    memcpy(x + 1, y, (size_t)N * sizeof(double));
    r->dyn(x, r->p, r->dynv);
    memcpy(r->Mw, r->dynv, (size_t)nq * nq * sizeof(double));
    memcpy(acc, r->dynv + nq * nq, (size_t)nq * sizeof(double));
    if (lagsim_lu_solve(nq, 1, r->Mw, acc) == 1) return 1;
    memcpy(x + 1 + N, acc, (size_t)nq * sizeof(double));
    r->jac(x, r->pj, r->ytmp);  /* [R_q (nq×nq), R_qd (nq×nq)] */
    for (i = 0; i < nq; i++)
        for (j = 0; j < nq; j++) {
            r->Bw[i * N + j] = r->ytmp[i * nq + j];
            r->Bw[i * N + nq + j] = r->ytmp[nq * nq + i * nq + j];
        }
    memcpy(r->Mw, r->dynv, (size_t)nq * nq * sizeof(double));
    if (lagsim_lu_solve(nq, N, r->Mw, r->Bw) == 1) return 1;
    memset(r->J, 0, (size_t)N * N * sizeof(double));
    for (i = 0; i < nq; i++) {
        r->J[i * N + nq + i] = 1.0;
        for (j = 0; j < N; j++) r->J[(nq + i) * N + j] = -r->Bw[i * N + j];
    }
    return 0;
}

/* --- LU of the Newton matrices (scipy.linalg.lu_factor / lu_solve) --------------------- */

static void lu_real(int n, double *A, int *piv)
{
    int i, j, k;
    for (k = 0; k < n; k++) {
        int p = k;
        double best = fabs(A[k * n + k]);
        for (i = k + 1; i < n; i++)
            if (fabs(A[i * n + k]) > best) { best = fabs(A[i * n + k]); p = i; }
        piv[k] = p;
        if (p != k)
            for (j = 0; j < n; j++) { double t = A[k * n + j]; A[k * n + j] = A[p * n + j];
                                      A[p * n + j] = t; }
        if (A[k * n + k] == 0.0) continue;  /* LAPACK: singular, factored on */
        for (i = k + 1; i < n; i++) {
            double f = A[i * n + k] /= A[k * n + k];
            for (j = k + 1; j < n; j++) A[i * n + j] -= f * A[k * n + j];
        }
    }
}

static void lu_real_solve(int n, const double *A, const int *piv, double *b)
{
    int i, j;
    for (i = 0; i < n; i++)
        if (piv[i] != i) { double t = b[i]; b[i] = b[piv[i]]; b[piv[i]] = t; }
    for (i = 0; i < n; i++)
        for (j = 0; j < i; j++) b[i] -= A[i * n + j] * b[j];
    for (i = n - 1; i >= 0; i--) {
        for (j = i + 1; j < n; j++) b[i] -= A[i * n + j] * b[j];
        b[i] /= A[i * n + i];
    }
}

static double cabs1(double complex z) { return fabs(creal(z)) + fabs(cimag(z)); }

static void lu_complex(int n, double complex *A, int *piv)
{
    int i, j, k;
    for (k = 0; k < n; k++) {
        int p = k;
        double best = cabs1(A[k * n + k]);
        for (i = k + 1; i < n; i++)
            if (cabs1(A[i * n + k]) > best) { best = cabs1(A[i * n + k]); p = i; }
        piv[k] = p;
        if (p != k)
            for (j = 0; j < n; j++) { double complex t = A[k * n + j];
                                      A[k * n + j] = A[p * n + j]; A[p * n + j] = t; }
        if (A[k * n + k] == 0.0) continue;
        for (i = k + 1; i < n; i++) {
            double complex f = A[i * n + k] /= A[k * n + k];
            for (j = k + 1; j < n; j++) A[i * n + j] -= f * A[k * n + j];
        }
    }
}

static void lu_complex_solve(int n, const double complex *A, const int *piv, double complex *b)
{
    int i, j;
    for (i = 0; i < n; i++)
        if (piv[i] != i) { double complex t = b[i]; b[i] = b[piv[i]]; b[piv[i]] = t; }
    for (i = 0; i < n; i++)
        for (j = 0; j < i; j++) b[i] -= A[i * n + j] * b[j];
    for (i = n - 1; i >= 0; i--) {
        for (j = i + 1; j < n; j++) b[i] -= A[i * n + j] * b[j];
        b[i] /= A[i * n + i];
    }
}

/* LU_real = lu(MU_REAL/h I − J), LU_complex = lu(MU_COMPLEX/h I − J). */
static void factor(R *r, double h)
{
    int N = r->N, i;
    double mr = MU_REAL / h;
    double complex mc = (MU_COMPLEX_RE + MU_COMPLEX_IM * I) / h;
    for (i = 0; i < N * N; i++) {
        r->LUr[i] = -r->J[i];
        r->LUc[i] = -r->J[i];
    }
    for (i = 0; i < N; i++) {
        r->LUr[i * N + i] = mr * 1.0 - r->J[i * N + i];
        r->LUc[i * N + i] = mc * 1.0 - r->J[i * N + i];
    }
    lu_real(N, r->LUr, r->pr);
    lu_complex(N, r->LUc, r->pc);
    r->nlu += 2;
    r->lu_ok = 1;
}

/* common.norm: the RMS norm of x / scale (k values). */
static double rms(int k, const double *x, const double *scale, int period)
{
    int i;
    double s = 0.0;
    for (i = 0; i < k; i++) {
        double v = x[i] / scale[i % period];
        s += v * v;
    }
    return sqrt(s) / sqrt((double)k);
}

static int all_finite(int k, const double *v)
{
    int i;
    for (i = 0; i < k; i++)
        if (!isfinite(v[i])) return 0;
    return 1;
}

/* radau.solve_collocation_system: returns converged; *n_iter, Z (3×N), *rate (NAN: None);
   -1 for a singular mass matrix in the right-hand side. */
static int collocation(R *r, double t, const double *y, double h, const double *Z0,
                       const double *scale, int *n_iter, double *rate)
{
    int N = r->N, i, j, k;
    double mr = MU_REAL / h, dW_norm_old = NAN;
    double complex mc = (MU_COMPLEX_RE + MU_COMPLEX_IM * I) / h;
    double *W = r->W, *Z = r->Z, *F = r->F, *dW = r->dW;
    int converged = 0;
    *rate = NAN;
    for (i = 0; i < 3; i++)
        for (j = 0; j < N; j++)
            W[i * N + j] = TI[i * 3 + 0] * Z0[j] + TI[i * 3 + 1] * Z0[N + j]
                + TI[i * 3 + 2] * Z0[2 * N + j];
    memcpy(Z, Z0, (size_t)3 * N * sizeof(double));
    for (k = 0; k < NEWTON_MAXITER; k++) {
        double dW_norm;
        for (i = 0; i < 3; i++) {
            for (j = 0; j < N; j++) r->ytmp[j] = y[j] + Z[i * N + j];
            if (rhs(r, t + h * C[i], r->ytmp, F + i * N)) return -1;
        }
        if (!all_finite(3 * N, F)) break;
        for (j = 0; j < N; j++) {
            double fr = F[j] * TI[0] + F[N + j] * TI[1] + F[2 * N + j] * TI[2];
            double complex fz = F[j] * (TICR[0] + TICI[0] * I) + F[N + j] * (TICR[1] + TICI[1] * I)
                + F[2 * N + j] * (TICR[2] + TICI[2] * I);
            dW[j] = fr - mr * W[j];
            r->fc[j] = fz - mc * (W[N + j] + I * W[2 * N + j]);
        }
        lu_real_solve(N, r->LUr, r->pr, dW);
        lu_complex_solve(N, r->LUc, r->pc, r->fc);
        for (j = 0; j < N; j++) {
            dW[N + j] = creal(r->fc[j]);
            dW[2 * N + j] = cimag(r->fc[j]);
        }
        dW_norm = rms(3 * N, dW, scale, N);
        if (!isnan(dW_norm_old)) *rate = dW_norm / dW_norm_old;
        if (!isnan(*rate) && (*rate >= 1.0 || pow(*rate, NEWTON_MAXITER - k) / (1.0 - *rate)
                                              * dW_norm > r->newton_tol))
            break;
        for (i = 0; i < 3 * N; i++) W[i] += dW[i];
        for (i = 0; i < 3; i++)
            for (j = 0; j < N; j++)
                Z[i * N + j] = T[i * 3 + 0] * W[j] + T[i * 3 + 1] * W[N + j]
                    + T[i * 3 + 2] * W[2 * N + j];
        if (dW_norm == 0.0 || (!isnan(*rate) && *rate / (1.0 - *rate) * dW_norm < r->newton_tol)) {
            converged = 1;
            break;
        }
        dW_norm_old = dW_norm;
    }
    if (k == NEWTON_MAXITER) k--;
    *n_iter = k + 1;
    return converged;
}

/* radau.predict_factor; has_old: h_abs_old and error_norm_old are not None. */
static double predict_factor(double h_abs, double h_abs_old, double error_norm,
                             double error_norm_old, int has_old)
{
    double multiplier = (!has_old || error_norm == 0.0)
        ? 1.0 : h_abs / h_abs_old * pow(error_norm_old / error_norm, 0.25);
    return (multiplier < 1.0 ? multiplier : 1.0) * pow(error_norm, -0.25);
}

/* RadauDenseOutput(t_old, t, y_old, Q) at s. */
static void dense(const R *r, double s, double *out)
{
    int N = r->N, j;
    double x = (s - r->sol_t_old) / r->sol_h, p1 = x, p2 = p1 * x, p3 = p2 * x;
    for (j = 0; j < N; j++)
        out[j] = (r->Q[j * 3] * p1 + r->Q[j * 3 + 1] * p2 + r->Q[j * 3 + 2] * p3)
            + r->sol_y_old[j];
}

/* Radau._step_impl: 0 accepted, RUN_SMALL, RUN_SINGULAR. */
static int step(R *r)
{
    int N = r->N, i, j, rejected = 0, accepted = 0, n_iter = 0, has_old, recompute;
    double t = r->t, *y = r->y, *f = r->f, h_abs, h_abs_old, error_norm_old, h, t_new;
    double min_step = 10.0 * fabs(nextafter(t, INFINITY) - t), rate = NAN, error_norm = 0.0;
    double safety = 0.0, factor_;
    if (r->h_abs < min_step) {
        h_abs = min_step;
        has_old = 0;
        h_abs_old = error_norm_old = 0.0;
    } else {
        h_abs = r->h_abs;
        has_old = r->has_old;
        h_abs_old = r->h_abs_old;
        error_norm_old = r->error_norm_old;
    }
    while (!accepted) {
        int converged;
        if (h_abs < min_step) return RUN_SMALL;
        h = h_abs;
        t_new = t + h;
        if (t_new - r->t_bound > 0) t_new = r->t_bound;
        h = t_new - t;
        h_abs = fabs(h);
        if (!r->has_sol)
            memset(r->Z0, 0, (size_t)3 * N * sizeof(double));
        else
            for (i = 0; i < 3; i++) {
                dense(r, t + h * C[i], r->ytmp);
                for (j = 0; j < N; j++) r->Z0[i * N + j] = r->ytmp[j] - y[j];
            }
        for (j = 0; j < N; j++) r->sc[j] = r->atol[j] + fabs(y[j]) * r->rtol;
        converged = 0;
        while (!converged) {
            if (!r->lu_ok) factor(r, h);
            converged = collocation(r, t, y, h, r->Z0, r->sc, &n_iter, &rate);
            if (converged < 0) return RUN_SINGULAR;
            if (!converged) {
                if (r->current_jac) break;
                if (jacobian(r, t, y)) return RUN_SINGULAR;
                r->current_jac = 1;
                r->lu_ok = 0;
            }
        }
        if (!converged) {
            h_abs *= 0.5;
            r->lu_ok = 0;
            continue;
        }
        for (j = 0; j < N; j++) {
            r->ynew[j] = y[j] + r->Z[2 * N + j];
            r->ZE[j] = (r->Z[j] * E[0] + r->Z[N + j] * E[1] + r->Z[2 * N + j] * E[2]) / h;
            r->err[j] = f[j] + r->ZE[j];
        }
        lu_real_solve(N, r->LUr, r->pr, r->err);
        for (j = 0; j < N; j++) {
            double a = fabs(y[j]), b = fabs(r->ynew[j]);
            r->sc[j] = r->atol[j] + (a > b ? a : b) * r->rtol;
        }
        error_norm = rms(N, r->err, r->sc, N);
        safety = 0.9 * (2 * NEWTON_MAXITER + 1) / (2 * NEWTON_MAXITER + n_iter);
        if (rejected && error_norm > 1.0) {
            for (j = 0; j < N; j++) r->ytmp[j] = y[j] + r->err[j];
            if (rhs(r, t, r->ytmp, r->err)) return RUN_SINGULAR;
            for (j = 0; j < N; j++) r->err[j] += r->ZE[j];
            lu_real_solve(N, r->LUr, r->pr, r->err);
            error_norm = rms(N, r->err, r->sc, N);
        }
        if (error_norm > 1.0) {
            double fa = predict_factor(h_abs, h_abs_old, error_norm, error_norm_old, has_old);
            double g = safety * fa;
            h_abs *= g > MIN_FACTOR ? g : MIN_FACTOR;
            r->lu_ok = 0;
            rejected = 1;
        } else {
            accepted = 1;
        }
    }
    recompute = n_iter > 2 && rate > 1e-3;
    factor_ = predict_factor(h_abs, h_abs_old, error_norm, error_norm_old, has_old);
    factor_ = safety * factor_;
    if (factor_ > MAX_FACTOR) factor_ = MAX_FACTOR;
    if (!recompute && factor_ < 1.2)
        factor_ = 1.0;
    else
        r->lu_ok = 0;
    if (rhs(r, t_new, r->ynew, r->fnew)) return RUN_SINGULAR;
    if (recompute) {
        if (jacobian(r, t_new, r->ynew)) return RUN_SINGULAR;
        r->current_jac = 1;
    } else {
        r->current_jac = 0;
    }
    r->h_abs_old = r->h_abs;
    r->error_norm_old = error_norm;
    r->has_old = 1;
    r->h_abs = h_abs * factor_;
    memcpy(r->y_old, y, (size_t)N * sizeof(double));
    r->t_old = t;
    r->t = t_new;
    memcpy(r->y, r->ynew, (size_t)N * sizeof(double));
    memcpy(r->f, r->fnew, (size_t)N * sizeof(double));
    /* _compute_dense_output: Q = Zᵀ P (N×3) */
    for (j = 0; j < N; j++)
        for (i = 0; i < 3; i++)
            r->Q[j * 3 + i] = r->Z[j] * P[i] + r->Z[N + j] * P[3 + i] + r->Z[2 * N + j] * P[6 + i];
    memcpy(r->sol_y_old, r->y_old, (size_t)N * sizeof(double));
    r->sol_t_old = r->t_old;
    r->sol_h = r->t - r->t_old;
    r->has_sol = 1;
    r->nsteps++;
    return 0;
}

/* MassWatch.__call__: the Cholesky factor's smallest pivot against SINGULAR_RTOL times the
   largest diagonal entry of M (now or at the start). */
static int mass_regular(R *r, double t, const double *y)
{
    int nq = r->nq, i;
    double weakest = INFINITY, dmx = -INFINITY;
    r->in[0] = t;
    memcpy(r->in + 1, y, (size_t)r->N * sizeof(double));
    r->dyn(r->in, r->p, r->dynv);
    if (lagsim_cholesky(nq, r->dynv, r->L)) weakest = 0.0;
    else
        for (i = 0; i < nq; i++)
            if (r->L[i * nq + i] < weakest) weakest = r->L[i * nq + i];
    for (i = 0; i < nq; i++)
        if (r->dynv[i * nq + i] > dmx) dmx = r->dynv[i * nq + i];
    return weakest * weakest > r->mass_rtol * (r->mass_scale > dmx ? r->mass_scale : dmx);
}

void lagsim_radau_free(void *h)
{
    R *r = (R *)h;
    void **parts[] = {(void **)&r->atol, (void **)&r->y, (void **)&r->f, (void **)&r->y_old,
                      (void **)&r->J, (void **)&r->LUr, (void **)&r->Z, (void **)&r->Q,
                      (void **)&r->sol_y_old, (void **)&r->LUc, (void **)&r->pr,
                      (void **)&r->pc, (void **)&r->in, (void **)&r->dynv, (void **)&r->Mw,
                      (void **)&r->Bw, (void **)&r->L, (void **)&r->Z0, (void **)&r->W,
                      (void **)&r->F, (void **)&r->dW, (void **)&r->ynew, (void **)&r->fnew,
                      (void **)&r->ytmp, (void **)&r->err, (void **)&r->ZE, (void **)&r->sc,
                      (void **)&r->fc};
    size_t i;
    if (!r) return;
    for (i = 0; i < sizeof parts / sizeof parts[0]; i++) free(*parts[i]);
    free(r);
}

/* ints: [nq, mass_every]; dc: [rtol, t_bound, newton_tol, mass_rtol, mass_scale]. */
void *lagsim_radau_new(const int *ints, const double *dc, const double *atol, void *dyn,
                       void *jac, const double *p, const double *pj)
{
    R *r = (R *)calloc(1, sizeof(R));
    int nq, N;
    size_t d = sizeof(double);
    if (!r) return NULL;
    nq = r->nq = ints[0];
    N = r->N = 2 * nq;
    r->mass_every = ints[1];
    r->rtol = dc[0]; r->t_bound = dc[1]; r->newton_tol = dc[2];
    r->mass_rtol = dc[3]; r->mass_scale = dc[4];
    r->dyn = (lagsim_fn)dyn; r->jac = (lagsim_fn)jac; r->p = p; r->pj = pj;
    r->atol = malloc(N * d); r->y = malloc(N * d); r->f = malloc(N * d);
    r->y_old = malloc(N * d); r->J = malloc((size_t)N * N * d); r->LUr = malloc((size_t)N * N * d);
    r->Z = malloc(3 * N * d); r->Q = malloc(3 * N * d); r->sol_y_old = malloc(N * d);
    r->LUc = malloc((size_t)N * N * sizeof(double complex));
    r->pr = malloc(N * sizeof(int)); r->pc = malloc(N * sizeof(int));
    r->in = malloc((1 + N + nq) * d); r->dynv = malloc((nq * nq + nq + 1) * d);
    r->Mw = malloc((nq * nq + 1) * d); r->Bw = malloc(((size_t)nq * N + nq + 1) * d);
    r->L = malloc((nq * nq + 1) * d); r->Z0 = malloc(3 * N * d); r->W = malloc(3 * N * d);
    r->F = malloc(3 * N * d); r->dW = malloc(3 * N * d); r->ynew = malloc(N * d);
    r->fnew = malloc(N * d); r->ytmp = malloc((2 * nq * nq + N + 1) * d);
    r->err = malloc(N * d); r->ZE = malloc(N * d); r->sc = malloc(N * d);
    r->fc = malloc(N * sizeof(double complex));
    if (!r->atol || !r->y || !r->f || !r->y_old || !r->J || !r->LUr || !r->Z || !r->Q
        || !r->sol_y_old || !r->LUc || !r->pr || !r->pc || !r->in || !r->dynv || !r->Mw
        || !r->Bw || !r->L || !r->Z0 || !r->W || !r->F || !r->dW || !r->ynew || !r->fnew
        || !r->ytmp || !r->err || !r->ZE || !r->sc || !r->fc) {
        lagsim_radau_free(r);
        return NULL;
    }
    memcpy(r->atol, atol, N * d);
    return r;
}

/* Radau.__init__ at (t0, y0): f, the first step (common.select_initial_step, order 3, or
   first_step when > 0), J. 0, or RUN_SINGULAR. */
int lagsim_radau_start(void *h, double t0, const double *y0, double first_step)
{
    R *r = (R *)h;
    int N = r->N, j;
    r->t = t0;
    memcpy(r->y, y0, N * sizeof(double));
    if (rhs(r, t0, r->y, r->f)) return RUN_SINGULAR;
    if (first_step > 0.0) {
        r->h_abs = first_step;
    } else {
        double interval = fabs(r->t_bound - t0), d0, d1, d2, h0, h1;
        if (interval == 0.0) {
            r->h_abs = 0.0;
        } else {
            for (j = 0; j < N; j++) r->sc[j] = r->atol[j] + fabs(r->y[j]) * r->rtol;
            d0 = rms(N, r->y, r->sc, N);
            d1 = rms(N, r->f, r->sc, N);
            h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
            if (h0 > interval) h0 = interval;
            for (j = 0; j < N; j++) r->ytmp[j] = r->y[j] + h0 * r->f[j];
            if (rhs(r, t0 + h0, r->ytmp, r->fnew)) return RUN_SINGULAR;
            for (j = 0; j < N; j++) r->ynew[j] = r->fnew[j] - r->f[j];
            d2 = rms(N, r->ynew, r->sc, N) / h0;
            if (d1 <= 1e-15 && d2 <= 1e-15)
                h1 = 1e-6 > h0 * 1e-3 ? 1e-6 : h0 * 1e-3;
            else
                h1 = pow(0.01 / (d1 > d2 ? d1 : d2), 1.0 / 4.0);
            r->h_abs = 100 * h0;
            if (h1 < r->h_abs) r->h_abs = h1;
            if (interval < r->h_abs) r->h_abs = interval;
        }
    }
    r->has_old = 0;
    r->has_sol = 0;
    r->lu_ok = 0;
    r->current_jac = 1;
    r->guard_h = INFINITY;
    r->regular_at = t0;
    r->unchecked = 0;
    if (jacobian(r, t0, r->y)) return RUN_SINGULAR;
    return 0;
}

/* Accepted steps until t_bound or max_steps: after each, Guard.accepted (finite state, the
   mass matrix every mass_every steps or when the step falls below half the last) and
   Samples.take (rows [q, q̇] at times[*k...] up to the step's end, from its dense output).
   Each step's (t, y) goes to trace (max_steps rows of 1 + N) for lagsim.run.aliasing.AliasWatch.
   res out: t, when, regular_at, nfev, nsteps, h_abs, njev, nlu and the steps of this call
   (taken). */
int lagsim_radau_run(void *h, const double *times, int ntimes, int *k, double *rows,
                     int max_steps, lagsim_result *res, double *last, double *trace)
{
    R *r = (R *)h;
    int N = r->N, code = RUN_MORE, taken = 0;
    double when = r->t;
    while (taken < max_steps) {
        double hs;
        if (r->t == r->t_bound) { code = RUN_DONE; break; }
        code = step(r);
        if (code) { when = r->t; break; }
        when = r->t;
        if (!all_finite(N, r->y)) { code = RUN_NONFINITE; break; }
        hs = r->t - r->t_old;
        r->unchecked++;
        if (r->unchecked >= r->mass_every || hs < 0.5 * r->guard_h) {
            r->unchecked = 0;
            if (!mass_regular(r, r->t, r->y)) { code = RUN_MASS; r->guard_h = hs; break; }
            r->regular_at = r->t;
        }
        r->guard_h = hs;
        trace[taken * (1 + N)] = r->t;
        memcpy(trace + taken * (1 + N) + 1, r->y, N * sizeof(double));
        taken++;
        while (*k < ntimes && times[*k] <= r->t) {
            if (times[*k] == r->t) memcpy(rows + (size_t)*k * N, r->y, N * sizeof(double));
            else dense(r, times[*k], rows + (size_t)*k * N);
            (*k)++;
        }
        code = r->t - r->t_bound >= 0 ? RUN_DONE : RUN_MORE;
        if (code == RUN_DONE) break;
    }
    res->t = r->t; res->when = when; res->regular_at = r->regular_at; res->nfev = r->nfev;
    res->nsteps = r->nsteps; res->h_abs = r->h_abs; res->njev = r->njev; res->nlu = r->nlu;
    res->taken = taken;
    memcpy(last, r->y, N * sizeof(double));
    return code;
}
