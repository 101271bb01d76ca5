/* @P@.c: the model "@NAME@" exported by lagsim @VERSION@; the interface is in @P@.h. Generated
   code: M q_ddot = F + A^T lambda, A q_ddot = b (seed 001 eq. 10.12-10.14, §10.7) with
   @FORMULATION@. */
#include "@P@.h"
#include <math.h>
#include <string.h>

const char *const @P@_state_names[@P@_NY] = {@STATE_LIST@};
const char *const @P@_parameter_names[@P@_NP] = {@PARAMETER_LIST@};
const char *const @P@_output_names[@P@_NOUT] = {@OUTPUT_LIST@};
const double @P@_parameter_start[@P@_NP] = {@PARAMETER_VALUES@};
const double @P@_state_start[@P@_NY] = {@STATE_VALUES@};

@RUNTIME@
@FUNCTIONS@

#define N_ @N@
#define M_ @M@
#define MH_ @MH@
#define NPM_ @NPM@
static const int HOLONOMIC[MH_ + 1] = {@HOLONOMIC@};

#define UK_ @UK@
#if UK_
/* One-sided Jacobi (Hestenes) on the columns of X (n x m, row-major, overwritten): afterwards
   X's columns are u_k sigma_k and V (m x m) holds the right singular vectors, so that
   X = U Sigma V^T with small singular values to relative accuracy. sigma_k <= RCOND
   sigma_max counts as zero (lagsim.run.formulations.RCOND): s2[k] is sigma_k^2, or 0. */
#define RCOND 1e-12
static void hestenes(int n, int m, double *X, double *V, double *s2)
{
    int i, j, k, sweep;
    double top = 0.0;
    for (i = 0; i < m; i++) for (j = 0; j < m; j++) V[i * m + j] = i == j;
    for (sweep = 0; sweep < 60; sweep++) {
        int rotated = 0;
        for (j = 0; j < m; j++)
            for (k = j + 1; k < m; k++) {
                double a = 0.0, b = 0.0, g = 0.0, zeta, t, c, sn;
                for (i = 0; i < n; i++) {
                    a += X[i * m + j] * X[i * m + j];
                    b += X[i * m + k] * X[i * m + k];
                    g += X[i * m + j] * X[i * m + k];
                }
                if (g == 0.0 || fabs(g) <= 1e-15 * sqrt(a * b)) continue;
                rotated = 1;
                zeta = (b - a) / (2.0 * g);
                t = (zeta >= 0 ? 1.0 : -1.0) / (fabs(zeta) + sqrt(1.0 + zeta * zeta));
                c = 1.0 / sqrt(1.0 + t * t);
                sn = c * t;
                for (i = 0; i < n; i++) {
                    double xj = X[i * m + j], xk = X[i * m + k];
                    X[i * m + j] = c * xj - sn * xk;
                    X[i * m + k] = sn * xj + c * xk;
                }
                for (i = 0; i < m; i++) {
                    double vj = V[i * m + j], vk = V[i * m + k];
                    V[i * m + j] = c * vj - sn * vk;
                    V[i * m + k] = sn * vj + c * vk;
                }
            }
        if (!rotated) break;
    }
    for (k = 0; k < m; k++) {
        s2[k] = 0.0;
        for (i = 0; i < n; i++) s2[k] += X[i * m + k] * X[i * m + k];
        top = fmax(top, s2[k]);
    }
    for (k = 0; k < m; k++) if (!(sqrt(s2[k]) > RCOND * sqrt(top))) s2[k] = 0.0;
}

/* Udwadia-Kalaba (seed 004, lagsim.run.formulations.UdwadiaKalaba): M = L L^T, a = M^-1 F,
   B = A L^-T, z = B^+ (b - A a), q_ddot = a + L^-T z, lambda the least-norm solution of
   A^T lambda = L z; dependent constraint rows allowed. dyn: M, F, A, b; r: [F; b (adjusted)]. */
static int udwadia_kalaba(const double *dyn, const double *r, double *qdd, double *lam)
{
    double L[N_ * N_], Bt[N_ * M_], G[M_ * M_ + 1], res[M_ + 1], s2[M_ + 1], z[N_];
    const double *A = dyn + N_ * N_ + N_;
    int i, j, k;
    if (lagsim_cholesky(N_, dyn, L)) return 1;
    memcpy(qdd, r, N_ * sizeof(double));
    lagsim_cholesky_solve(N_, L, qdd);
    for (k = 0; k < M_; k++) {
        double col[N_];
        for (i = 0; i < N_; i++) {
            double acc = A[k * N_ + i];
            for (j = 0; j < i; j++) acc -= L[i * N_ + j] * col[j];
            col[i] = acc / L[i * N_ + i];
        }
        for (i = 0; i < N_; i++) Bt[i * M_ + k] = col[i];
        res[k] = r[N_ + k];
        for (i = 0; i < N_; i++) res[k] -= A[k * N_ + i] * qdd[i];
    }
    /* z = B^+ res = sum_k x_k (v_k . res) / sigma_k^2, X = B^T after Hestenes */
    hestenes(N_, M_, Bt, G, s2);
    for (i = 0; i < N_; i++) z[i] = 0.0;
    for (k = 0; k < M_; k++) {
        double dot = 0.0;
        if (s2[k] == 0.0) continue;
        for (j = 0; j < M_; j++) dot += G[j * M_ + k] * res[j];
        for (i = 0; i < N_; i++) z[i] += Bt[i * M_ + k] * dot / s2[k];
    }
    {
        double x[N_];
        for (i = N_ - 1; i >= 0; i--) {
            double acc = z[i];
            for (j = i + 1; j < N_; j++) acc -= L[j * N_ + i] * x[j];
            x[i] = acc / L[i * N_ + i];
        }
        for (i = 0; i < N_; i++) qdd[i] += x[i];
    }
    if (lam) {
        /* lambda = (A^T)^+ c = sum_k v_k (x_k . c) / sigma_k^2, X = A^T after Hestenes */
        double c[N_], X[N_ * M_];
        for (i = 0; i < N_; i++) {
            c[i] = 0.0;
            for (j = 0; j <= i; j++) c[i] += L[i * N_ + j] * z[j];
            for (k = 0; k < M_; k++) X[i * M_ + k] = A[k * N_ + i];
        }
        hestenes(N_, M_, X, G, s2);
        for (j = 0; j < M_; j++) lam[j] = 0.0;
        for (k = 0; k < M_; k++) {
            double dot = 0.0;
            if (s2[k] == 0.0) continue;
            for (i = 0; i < N_; i++) dot += X[i * M_ + k] * c[i];
            for (j = 0; j < M_; j++) lam[j] += G[j * M_ + k] * dot / s2[k];
        }
    }
    return 0;
}
#endif

/* q_ddot (and lambda when asked) at (t, y); stabilized: Baumgarte's b - 2 alpha phi_dot -
   beta^2 phi on holonomic rows, b - alpha (A q_dot + c) on velocity rows, alpha = p[NPM_],
   beta = p[NPM_ + 1] (lagsim.run.formulations.Baumgarte). */
static int accelerations(double t, const double *y, const double *p, int stabilized,
                         double *qdd, double *lam)
{
    double in[1 + 2 * N_], dyn[N_ * N_ + N_ + M_ * N_ + M_ + 1];
    double K[(N_ + M_) * (N_ + M_)], r[N_ + M_], L[N_ * N_];
    int i, j;
    in[0] = t;
    memcpy(in + 1, y, 2 * N_ * sizeof(double));
    dynamics(in, p, dyn);
    for (i = 0; i < N_ * N_; i++)
        if (!isfinite(dyn[i])) {
            for (j = 0; j < N_; j++) qdd[j] = NAN;
            return 0;
        }
    if (M_ == 0) {
        memcpy(qdd, dyn + N_ * N_, N_ * sizeof(double));
        return lagsim_solve(N_, dyn, qdd, L);
    }
    {
        const double *Mq = dyn, *F = dyn + N_ * N_, *A = F + N_, *b = A + M_ * N_;
        memset(K, 0, sizeof K);
        for (i = 0; i < N_; i++) {
            for (j = 0; j < N_; j++) K[i * (N_ + M_) + j] = Mq[i * N_ + j];
            for (j = 0; j < M_; j++) {
                K[i * (N_ + M_) + N_ + j] = -A[j * N_ + i];
                K[(N_ + j) * (N_ + M_) + i] = A[j * N_ + i];
            }
            r[i] = F[i];
        }
        for (j = 0; j < M_; j++) r[N_ + j] = b[j];
        if (stabilized) {
            double vel[M_ * N_ + M_ + 1], ph[MH_ + MH_ * N_ + 1];
            double alpha = p[NPM_], beta = p[NPM_ + 1];
            velocity(in, p, vel);
            for (j = 0; j < M_; j++) {
                double w = vel[M_ * N_ + j];
                for (i = 0; i < N_; i++) w += vel[j * N_ + i] * y[N_ + i];
                r[N_ + j] -= alpha * w;
            }
            if (MH_ > 0) {
                phi(in, p, ph);
                for (j = 0; j < MH_; j++) {
                    int row = HOLONOMIC[j];
                    const double *ar = vel + row * N_;
                    double w = vel[M_ * N_ + row];
                    for (i = 0; i < N_; i++) w += ar[i] * y[N_ + i];
                    r[N_ + row] -= alpha * w + beta * beta * ph[j];
                }
            }
        }
#if UK_
        return udwadia_kalaba(dyn, r, qdd, lam);
#else
        if (lagsim_lu_solve(N_ + M_, 1, K, r) == 1) return 1;
        memcpy(qdd, r, N_ * sizeof(double));
        if (lam) memcpy(lam, r + N_, M_ * sizeof(double));
#endif
    }
    return 0;
}

int @P@_rhs(double t, const double *y, const double *p, double *dy)
{
    memcpy(dy, y + N_, N_ * sizeof(double));
    return accelerations(t, y, p, 1, dy + N_, 0);
}

int @P@_outputs(double t, const double *y, const double *p, double *out)
{
    double in[1 + 2 * N_], qdd[N_];
    int code = 0;
    in[0] = t;
    memcpy(in + 1, y, 2 * N_ * sizeof(double));
    observe(in, p, out);
    memmove(out + @NPOS@ + M_, out + @NPOS@, sizeof(double));
    if (M_ > 0) code = accelerations(t, y, p, 0, qdd, out + @NPOS@);
    return code;
}

/* J = dy'/dy from the symbolic derivatives of the residual R = [M q_ddot - F - A^T lambda;
   A q_ddot - b] (lagsim.numeric.jacobian): K d(q_ddot, lambda)/dx = -dR/dx for x = q, q_dot,
   K = [[M, -A^T], [A, 0]], Baumgarte's gains entering the constraint rows. */
int @P@_jacobian(double t, const double *y, const double *p, double *J)
{
    double in[1 + 2 * N_], dyn[N_ * N_ + N_ + M_ * N_ + M_ + 1];
    double K[(N_ + M_) * (N_ + M_)], K2[(N_ + M_) * (N_ + M_)], z[N_ + M_];
    double x[1 + 3 * N_ + M_], d[2 * (N_ + M_) * N_ + M_ * N_ + 1];
    double D[(N_ + M_) * 2 * N_];
    int i, j, k;
    if (accelerations(t, y, p, 1, z, z + N_)) return 1;
    in[0] = t;
    memcpy(in + 1, y, 2 * N_ * sizeof(double));
    dynamics(in, p, dyn);
    x[0] = t;
    memcpy(x + 1, y, 2 * N_ * sizeof(double));
    memcpy(x + 1 + 2 * N_, z, (N_ + M_) * sizeof(double));
    jacobian(x, p, d);
    {
        const double *Mq = dyn, *A = dyn + N_ * N_ + N_;
        const double *Rq = d, *Rqd = d + (N_ + M_) * N_, *wq = d + 2 * (N_ + M_) * N_;
        double alpha = M_ ? p[NPM_] : 0.0, beta = M_ ? p[NPM_ + 1] : 0.0;
        memset(K, 0, sizeof K);
        for (i = 0; i < N_; i++) {
            for (j = 0; j < N_; j++) K[i * (N_ + M_) + j] = Mq[i * N_ + j];
            for (k = 0; k < M_; k++) {
                K[i * (N_ + M_) + N_ + k] = -A[k * N_ + i];
                K[(N_ + k) * (N_ + M_) + i] = A[k * N_ + i];
            }
        }
        for (i = 0; i < N_ + M_; i++)
            for (j = 0; j < N_; j++) {
                D[i * 2 * N_ + j] = -Rq[i * N_ + j];
                D[i * 2 * N_ + N_ + j] = -Rqd[i * N_ + j];
            }
        for (k = 0; k < M_; k++) {
            double gain = alpha;
            for (j = 0; j < MH_; j++) if (HOLONOMIC[j] == k) gain = 2.0 * alpha;
            for (j = 0; j < N_; j++) {
                D[(N_ + k) * 2 * N_ + j] -= gain * wq[k * N_ + j];
                D[(N_ + k) * 2 * N_ + N_ + j] -= gain * A[k * N_ + j];
            }
        }
        if (MH_ > 0 && beta != 0.0) {
            double ph[MH_ + MH_ * N_ + 1];
            phi(in, p, ph);
            for (j = 0; j < MH_; j++)
                for (i = 0; i < N_; i++)
                    D[(N_ + HOLONOMIC[j]) * 2 * N_ + i] -= beta * beta * ph[MH_ + j * N_ + i];
        }
        memcpy(K2, K, sizeof K);
        if (lagsim_lu_solve(N_ + M_, 2 * N_, K2, D) == 1) return 1;
    }
    memset(J, 0, 4 * N_ * N_ * sizeof(double));
    for (i = 0; i < N_; i++) J[i * 2 * N_ + N_ + i] = 1.0;
    memcpy(J + 2 * N_ * N_, D, 2 * N_ * N_ * sizeof(double));
    return 0;
}

double @P@_constraint_residual(double t, const double *y, const double *p)
{
    double in[1 + 2 * N_], vel[M_ * N_ + M_ + 1], ph[MH_ + MH_ * N_ + 1], worst = 0.0;
    double big = 0.0;
    int i, j;
    in[0] = t;
    memcpy(in + 1, y, 2 * N_ * sizeof(double));
    for (i = 0; i < 2 * N_; i++) big = fmax(big, fabs(y[i]));
    if (M_ == 0) return 0.0;
    velocity(in, p, vel);
    if (MH_ > 0) phi(in, p, ph);
    for (j = 0; j < M_; j++) {
        double w = vel[M_ * N_ + j], row = 0.0;
        for (i = 0; i < N_; i++) {
            w += vel[j * N_ + i] * y[N_ + i];
            row = fmax(row, fabs(vel[j * N_ + i]));
        }
        worst = fmax(worst, fabs(w) / (1.0 + row * (1.0 + big)));
    }
    for (j = 0; j < MH_; j++) {
        double row = 0.0;
        for (i = 0; i < N_; i++) row = fmax(row, fabs(ph[MH_ + j * N_ + i]));
        worst = fmax(worst, fabs(ph[j]) / (1.0 + row * (1.0 + big)));
    }
    return worst;
}

int @P@_event(double t, const double *y, const double *p, double *g)
{
#if @NEVENT@
    double in[1 + 2 * N_ + M_], qdd[N_];
    int code = 0;
    in[0] = t;
    memcpy(in + 1, y, 2 * N_ * sizeof(double));
    if (M_ > 0) code = accelerations(t, y, p, 0, qdd, in + 1 + 2 * N_);
    indicator(in, p, g);
    return code;
#else
    (void)t; (void)y; (void)p; (void)g;
    return 0;
#endif
}

static int lagsim_ode_rhs(double t, const double *y, double *out, const double *p)
{
    return @P@_rhs(t, y, p, out);
}

#define lagsim_dop853_step @P@_dop853_step
#define DOP853_STAGES @STAGES@
@DOP853@

/* scipy.integrate._ivp.common.select_initial_step for DOP853 (error estimator order 7). */
static double first_step(double t, const double *y, const double *f, double rtol, double atol,
                         double span, const double *p)
{
    double y1[2 * N_], f1[2 * N_], d0 = 0, d1 = 0, d2 = 0, h0, h1;
    int i;
    for (i = 0; i < 2 * N_; i++) {
        double s = atol + fabs(y[i]) * rtol;
        d0 += (y[i] / s) * (y[i] / s);
        d1 += (f[i] / s) * (f[i] / s);
    }
    d0 = sqrt(d0 / (2 * N_));
    d1 = sqrt(d1 / (2 * N_));
    h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    if (h0 > span) h0 = span;
    for (i = 0; i < 2 * N_; i++) y1[i] = y[i] + h0 * f[i];
    if (lagsim_ode_rhs(t + h0, y1, f1, p)) return h0;
    for (i = 0; i < 2 * N_; i++) {
        double s = atol + fabs(y[i]) * rtol;
        d2 += ((f1[i] - f[i]) / s) * ((f1[i] - f[i]) / s);
    }
    d2 = sqrt(d2 / (2 * N_)) / h0;
    h1 = (d1 <= 1e-15 && d2 <= 1e-15) ? fmax(1e-6, h0 * 1e-3)
         : pow(0.01 / fmax(d1, d2), 1.0 / 8.0);
    return fmin(fmin(100 * h0, h1), span);
}

int @P@_integrate(double *t, double *y, double t_end, const double *p, double rtol,
                  double atol, double *h)
{
    double f[2 * N_], K[(DOP853_STAGES + 1) * 2 * N_], y_new[2 * N_], f_new[2 * N_];
    double tol[2 * N_];
    lagsim_step res;
    int i, code;
    if (!(t_end > *t)) return 0;
    for (i = 0; i < 2 * N_; i++) tol[i] = atol;
    if (lagsim_ode_rhs(*t, y, f, p)) return 1;
    if (!(*h > 0)) *h = first_step(*t, y, f, rtol, atol, t_end - *t, p);
    while (*t < t_end) {
        res.h_abs = *h;
        code = @P@_dop853_step(*t, y, f, t_end, 1.0, rtol, tol, INFINITY, K, y_new, f_new,
                               &res, p);
        if (code) return code == RUN_SMALL ? 3 : 1;
        *t = res.t_new;
        *h = res.h_abs;
        memcpy(y, y_new, sizeof y_new);
        memcpy(f, f_new, sizeof f_new);
    }
    return 0;
}

/* @P@_integrate that stops where the --stop-when expression changes sign: the crossing is
   bracketed by the accepted steps and located by bisection, each trial point integrated afresh
   from the step's start, to the spacing of the numbers. *stopped is 1 when it stopped. */
int @P@_integrate_until(double *t, double *y, double t_end, const double *p, double rtol,
                        double atol, double *h, int *stopped)
{
    double g0, g1, y0[2 * N_], ya[2 * N_];
    int code;
    *stopped = 0;
    if (@P@_NEVENT == 0) return @P@_integrate(t, y, t_end, p, rtol, atol, h);
    if (@P@_event(*t, y, p, &g0)) return 1;
    while (*t < t_end) {
        double t0 = *t, h0, lo, hi, step = *h;
        memcpy(y0, y, sizeof y0);
        h0 = step > 0 ? step : 0.0;
        /* one accepted step: integrate to t_end but with the step size capped by one step */
        {
            double target = step > 0 ? fmin(t_end, *t + step) : t_end;
            code = @P@_integrate(t, y, target, p, rtol, atol, h);
            if (code) return code;
        }
        if (@P@_event(*t, y, p, &g1)) return 1;
        if (g0 == 0.0 || g0 * g1 > 0.0 || (g1 == 0.0 && g0 == 0.0)) { g0 = g1; continue; }
        lo = t0;
        hi = *t;
        while (hi - lo > 4.0 * fabs(nextafter(hi, INFINITY) - hi)) {
            double mid = 0.5 * (lo + hi), tm = t0, hm = h0, gm;
            memcpy(ya, y0, sizeof ya);
            if (@P@_integrate(&tm, ya, mid, p, rtol, atol, &hm)) return 1;
            if (@P@_event(tm, ya, p, &gm)) return 1;
            if (gm == 0.0) { lo = hi = mid; break; }
            if (g0 * gm < 0.0) hi = mid; else lo = mid;
        }
        {
            double tm = t0, hm = h0;
            memcpy(y, y0, sizeof y0);
            if (@P@_integrate(&tm, y, hi, p, rtol, atol, &hm)) return 1;
            *t = tm;
        }
        *stopped = 1;
        return 0;
    }
    return 0;
}
