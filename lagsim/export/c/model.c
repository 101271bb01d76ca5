/* @P@.c: the model "@NAME@" exported by lagsim @VERSION@; the interface is in @P@.h. Generated
   code: M q_ddot = F + A^T lambda, A q_ddot = b (seed 001 eq. 10.12-10.14, §10.7) with
   @FORMULATION@. */
#include "@P@.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

const char *const @P@_state_names[@P@_NY] = {@STATE_LIST@};
const char *const @P@_parameter_names[@P@_NP] = {@PARAMETER_LIST@};
const char *const @P@_output_names[@P@_NOUT] = {@OUTPUT_LIST@};
const char *const @P@_constraint_names[@P@_M + 1] = {@CONSTRAINT_LIST@};
const unsigned char @P@_state_given[@P@_NY] = {@STATE_GIVEN@};
const double @P@_state_initial[@P@_NY] = {@STATE_INITIAL@};
const double @P@_parameter_start[@P@_NP] = {@PARAMETER_VALUES@};
const double @P@_state_start[@P@_NY] = {@STATE_VALUES@};
const unsigned char @P@_parameter_derived[@P@_NP] = {@PARAMETER_DERIVED@};

@RUNTIME@
@FUNCTIONS@

static const int DERIVED[@ND@ + 1] = {@DERIVED@};
static const int DEFINED[@NI@ + 1] = {@DEFINED@};

void @P@_derive(double *p)
{
    double v[@ND@ + 1];
    int k;
    derived_values(NULL, p, v);
    for (k = 0; k < @ND@; k++) p[DERIVED[k]] = v[k];
}

void @P@_initial(const double *p, double *y)
{
    double v[@NI@ + 1];
    int k;
    memcpy(y, @P@_state_initial, sizeof(double) * @P@_NY);
    initial_values(NULL, p, v);
    for (k = 0; k < @NI@; k++) y[DEFINED[k]] = v[k];
}

#define N_ @N@
#define M_ @M@
#define MH_ @MH@
#define NPM_ @NPM@
static const int HOLONOMIC[MH_ + 1] = {@HOLONOMIC@};

/* One-sided Jacobi (Hestenes) on the columns of X (n x m, row-major, overwritten): afterwards
   X's columns are u_k sigma_k and V (m x m) holds the right singular vectors, so that
   X = U Sigma V^T with small singular values to relative accuracy; s2[k] is sigma_k^2. */
static void jacobi(int n, int m, double *X, double *V, double *s2)
{
    int i, j, k, sweep;
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
    }
}

#define UK_ @UK@
#if UK_
/* jacobi, then sigma_k <= RCOND sigma_max counts as zero (lagsim.run.formulations.RCOND):
   s2[k] is sigma_k^2, or 0. */
#define RCOND 1e-12
static void hestenes(int n, int m, double *X, double *V, double *s2)
{
    double top = 0.0;
    int k;
    jacobi(n, m, X, V, s2);
    for (k = 0; k < m; k++) top = fmax(top, s2[k]);
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

/* The consistent start of lagsim.run.start.consistent_start (seed 003; seed 001 §10.6-10.7),
   rules 1 to 5: given values kept where the constraints allow, unset ones solved for by damped
   Gauss-Newton in the metric of M's block on them (M at the state as given), falling off a
   singular point to the side the force at rest points to, given ones moved only by the least
   change the unset ones cannot take up. Singular values below
   START_CUTOFF times the largest of the whole constraint matrix in the metric are cut. */
#define START_CUTOFF @CUTOFF@
#define START_TOL @P@_TOLERANCE
#define NM_ (M_ > N_ ? M_ : N_)

/* W = L^-1 with M[idx, idx] = L L^T (k x k): 0, or 1 when that block is not positive
   definite. */
static int inverse_factor(const double *Mq, const int *idx, int k, double *W)
{
    double B[N_ * N_ + 1], L[N_ * N_ + 1];
    int i, j, l;
    for (i = 0; i < k; i++) for (j = 0; j < k; j++) B[i * k + j] = Mq[idx[i] * N_ + idx[j]];
    if (k && lagsim_cholesky(k, B, L)) return 1;
    for (j = 0; j < k; j++)
        for (i = 0; i < k; i++) {
            double s = i == j;
            for (l = j; l < i; l++) s -= L[i * k + l] * W[l * k + j];
            W[i * k + j] = i < j ? 0.0 : s / L[i * k + i];
        }
    return 0;
}

/* X (r x k): B = J[:, idx] W^T, J with N_ columns. */
static void metric_rows(const double *J, int r, const int *idx, int k, const double *W,
                        double *X)
{
    int i, a, b;
    for (i = 0; i < r; i++)
        for (a = 0; a < k; a++) {
            double s = 0.0;
            for (b = 0; b <= a; b++) s += J[i * N_ + idx[b]] * W[a * k + b];
            X[i * k + a] = s;
        }
}

/* Singular values squared (s2, r of them) of B (r x k) and X = B^T = U Sigma V^T after
   Hestenes' sweeps (X k x r, V r x r). */
static void singular(const double *B, int r, int k, double *X, double *V, double *s2)
{
    int i, a;
    for (i = 0; i < r; i++) for (a = 0; a < k; a++) X[a * r + i] = B[i * k + a];
    jacobi(k, r, X, V, s2);
}

/* The largest singular value of B (r x k). */
static double largest(const double *B, int r, int k)
{
    double X[NM_ * NM_ + 1], V[NM_ * NM_ + 1], s2[NM_ + 1], top = 0.0;
    int c;
    if (!r || !k) return 0.0;
    singular(B, r, k, X, V, s2);
    for (c = 0; c < r; c++) top = fmax(top, s2[c]);
    return sqrt(top);
}

/* delta (k) of least norm in the metric (W^T W)^-1 with B W^-T delta = rhs in the least-squares
   sense, B = J W^T given (r x k): delta = W^T B^+ rhs, singular values <= START_CUTOFF ref cut
   (lagsim.run.start._least_change). */
static void least_change(const double *B, int r, int k, const double *W, const double *rhs,
                         double ref, double *delta)
{
    double X[NM_ * NM_ + 1], V[NM_ * NM_ + 1], s2[NM_ + 1], z[N_ + 1];
    int a, b, c;
    for (a = 0; a < k; a++) delta[a] = 0.0;
    if (!r || !k) return;
    singular(B, r, k, X, V, s2);
    for (a = 0; a < k; a++) z[a] = 0.0;
    for (c = 0; c < r; c++) {
        double dot = 0.0;
        if (!(sqrt(s2[c]) > START_CUTOFF * ref)) continue;
        for (b = 0; b < r; b++) dot += V[b * r + c] * rhs[b];
        for (a = 0; a < k; a++) z[a] += X[a * r + c] * dot / s2[c];
    }
    for (b = 0; b < k; b++)
        for (a = b; a < k; a++) delta[b] += W[a * k + b] * z[a];
}

typedef struct {
    int nf, ng, free[N_ + 1], given[N_ + 1];
    double W[N_ * N_ + 1], WF[N_ * N_ + 1], WG[N_ * N_ + 1];
} split_t;

static int split_new(const double *Mq, const unsigned char *given, split_t *s)
{
    int i, all[N_ + 1];
    s->nf = s->ng = 0;
    for (i = 0; i < N_; i++) {
        all[i] = i;
        if (given[i]) s->given[s->ng++] = i; else s->free[s->nf++] = i;
    }
    return inverse_factor(Mq, all, N_, s->W) || inverse_factor(Mq, s->free, s->nf, s->WF)
           || inverse_factor(Mq, s->given, s->ng, s->WG);
}

static double reference(const split_t *s, const double *J, int r)
{
    double B[NM_ * N_ + 1];
    int all[N_ + 1], i;
    for (i = 0; i < N_; i++) all[i] = i;
    metric_rows(J, r, all, N_, s->W, B);
    return largest(B, r, N_);
}

/* Rules 2 and 4: the least M_FF-change of the unset values toward J delta = rhs. */
static void free_step(const split_t *s, const double *J, int r, const double *rhs, double *delta)
{
    double B[NM_ * N_ + 1], d[N_ + 1];
    int a;
    memset(delta, 0, N_ * sizeof(double));
    metric_rows(J, r, s->free, s->nf, s->WF, B);
    least_change(B, r, s->nf, s->WF, rhs, reference(s, J, r), d);
    for (a = 0; a < s->nf; a++) delta[s->free[a]] = d[a];
}

/* Rule 5: the given values move by the least M_GG-change that leaves a residual the unset
   values can take up (projected off the range of the unset columns); the unset values then take
   their least-change solution. */
static void given_step(const split_t *s, const double *J, int r, const double *rhs,
                       double *delta)
{
    double ref = reference(s, J, r), B[NM_ * N_ + 1], X[NM_ * NM_ + 1], V[NM_ * NM_ + 1];
    double s2[NM_ + 1], P[NM_ * NM_ + 1], PJ[NM_ * N_ + 1], Pr[NM_ + 1], d[N_ + 1];
    double rest[NM_ + 1];
    int i, j, a, c;
    memset(delta, 0, N_ * sizeof(double));
    for (i = 0; i < r; i++) for (j = 0; j < r; j++) P[i * r + j] = i == j;
    metric_rows(J, r, s->free, s->nf, s->WF, B);
    if (s->nf && r) {
        singular(B, r, s->nf, X, V, s2);
        for (c = 0; c < r; c++)
            if (sqrt(s2[c]) > START_CUTOFF * ref)
                for (i = 0; i < r; i++)
                    for (j = 0; j < r; j++) P[i * r + j] -= V[i * r + c] * V[j * r + c];
    }
    for (i = 0; i < r; i++) {
        Pr[i] = 0.0;
        for (j = 0; j < r; j++) Pr[i] += P[i * r + j] * rhs[j];
        for (a = 0; a < N_; a++) {
            PJ[i * N_ + a] = 0.0;
            for (j = 0; j < r; j++) PJ[i * N_ + a] += P[i * r + j] * J[j * N_ + a];
        }
    }
    metric_rows(PJ, r, s->given, s->ng, s->WG, B);
    least_change(B, r, s->ng, s->WG, Pr, ref, d);
    for (a = 0; a < s->ng; a++) delta[s->given[a]] = d[a];
    for (i = 0; i < r; i++) {
        rest[i] = rhs[i];
        for (a = 0; a < s->ng; a++) rest[i] -= J[i * N_ + s->given[a]] * d[a];
    }
    metric_rows(J, r, s->free, s->nf, s->WF, B);
    least_change(B, r, s->nf, s->WF, rest, ref, d);
    for (a = 0; a < s->nf; a++) delta[s->free[a]] = d[a];
}

/* Which rows of res (J's rows, r of them, at values v) are not met (lagsim.run.start._unmet);
   the count. */
static int unmet(const double *res, const double *J, int r, const double *v, unsigned char *bad)
{
    double big = 0.0;
    int i, j, count = 0;
    for (j = 0; j < N_; j++) big = fmax(big, fabs(v[j]));
    for (i = 0; i < r; i++) {
        double row = 0.0;
        for (j = 0; j < N_; j++) row = fmax(row, fabs(J[i * N_ + j]));
        bad[i] = !(fabs(res[i]) <= START_TOL * (1.0 + row * (1.0 + big)));
        count += bad[i];
    }
    return count;
}

/* phi (MH_) and phi_q (MH_ x N_) at (t, q). */
static void holonomic_rows(double t, const double *q, const double *p, double *ph, double *J)
{
    double in[1 + 2 * N_], out[MH_ + MH_ * N_ + 1];
    in[0] = t;
    memcpy(in + 1, q, N_ * sizeof(double));
    memset(in + 1 + N_, 0, N_ * sizeof(double));
    phi(in, p, out);
    memcpy(ph, out, MH_ * sizeof(double));
    memcpy(J, out + MH_, MH_ * N_ * sizeof(double));
}

static double norm(const double *x, int r)
{
    double s = 0.0;
    int i;
    for (i = 0; i < r; i++) s += x[i] * x[i];
    return sqrt(s);
}

/* Damped Gauss-Newton on phi(q) = 0 (lagsim.run.start._descend): each step from step(phi_q,
   -phi), halved until |phi| decreases; stops when no step decreases it or the step is at
   rounding level. */
static void descend(double t, double *q, const double *p, const split_t *s, int given)
{
    double ph[MH_ + 1], J[MH_ * N_ + 1], rhs[MH_ + 1], delta[N_], trial[N_];
    double pt[MH_ + 1], Jt[MH_ * N_ + 1];
    int it, k, i;
    holonomic_rows(t, q, p, ph, J);
    for (it = 0; it < 50; it++) {
        double size, big, scale = 1.0, before;
        int any = 0, finite = 1, found = 0;
        for (i = 0; i < MH_; i++) any |= ph[i] != 0.0;
        if (!any) break;
        for (i = 0; i < MH_; i++) rhs[i] = -ph[i];
        if (given) given_step(s, J, MH_, rhs, delta); else free_step(s, J, MH_, rhs, delta);
        any = 0;
        for (i = 0; i < N_; i++) { finite &= isfinite(delta[i]); any |= delta[i] != 0.0; }
        if (!finite || !any) break;
        before = norm(ph, MH_);
        for (k = 0; k < 60; k++) {
            int ok = 1;
            for (i = 0; i < N_; i++) trial[i] = q[i] + scale * delta[i];
            holonomic_rows(t, trial, p, pt, Jt);
            for (i = 0; i < MH_; i++) ok &= isfinite(pt[i]);
            if (ok && norm(pt, MH_) < before) { found = 1; break; }
            scale /= 2;
        }
        if (!found) break;
        memcpy(q, trial, N_ * sizeof(double));
        memcpy(ph, pt, sizeof pt);
        memcpy(J, Jt, sizeof Jt);
        size = big = 0.0;
        for (i = 0; i < N_; i++) {
            size = fmax(size, fabs(scale * delta[i]));
            big = fmax(big, fabs(q[i]));
        }
        if (size <= 4e-16 * (1.0 + big)) break;
    }
}

/* |phi(q + s d)| (infinite when not finite). */
static double phi_along(double t, const double *q, const double *d, double s, const double *p)
{
    double x[N_], ph[MH_ + 1], J[MH_ * N_ + 1], v;
    int i;
    for (i = 0; i < N_; i++) x[i] = q[i] + s * d[i];
    holonomic_rows(t, x, p, ph, J);
    v = norm(ph, MH_);
    return isfinite(v) ? v : INFINITY;
}

/* q + s d at the least |phi| along the ray s > 0 (lagsim.run.start._fall): s doubled from
   NUDGE (1 + max|q|) while |phi| falls, then golden-section search on the last bracket down to
   rounding level; q unchanged when the first step already raises |phi|. */
#define START_NUDGE @NUDGE@
static void fall(double t, double *q, const double *d, const double *p)
{
    double big = 0.0, low = 0.0, s, f_s, a, b, x1, x2, f1, f2, best, f_best;
    const double ratio = (sqrt(5.0) - 1.0) / 2.0;
    int i, k;
    for (i = 0; i < N_; i++) big = fmax(big, fabs(q[i]));
    s = START_NUDGE * (1.0 + big);
    f_s = phi_along(t, q, d, s, p);
    if (!(f_s < phi_along(t, q, d, 0.0, p))) return;
    for (k = 0; k < 64; k++) {
        double f_next = phi_along(t, q, d, 2 * s, p);
        if (!(f_next < f_s)) break;
        low = s; s = 2 * s; f_s = f_next;
    }
    a = low; b = 2 * s;
    x1 = b - ratio * (b - a); x2 = a + ratio * (b - a);
    f1 = phi_along(t, q, d, x1, p); f2 = phi_along(t, q, d, x2, p);
    for (k = 0; k < 200; k++) {
        if (b - a <= 4e-16 * (1.0 + b)) break;
        if (f1 <= f2) {
            b = x2; x2 = x1; f2 = f1;
            x1 = b - ratio * (b - a);
            f1 = phi_along(t, q, d, x1, p);
        } else {
            a = x1; x1 = x2; f1 = f2;
            x2 = a + ratio * (b - a);
            f2 = phi_along(t, q, d, x2, p);
        }
    }
    if (f1 <= f2) { best = x1; f_best = f1; } else { best = x2; f_best = f2; }
    if (!(f_best < f_s)) best = s;
    for (i = 0; i < N_; i++) q[i] += best * d[i];
}

/* Rule 3 of lagsim.run.start (_off_singular_point) where Gauss-Newton in the unset coordinates
   stalled: they fall along the acceleration at rest projected onto the null space of phi_q's
   unset columns to the least |phi| on that line, then Gauss-Newton again, repeated while each
   round lowers |phi|. 0: q moved onto the constraints; 1: q unchanged (no such fall); 2: the
   force at rest has no part along the null space but a fall lowers |phi| (a side to choose). */
static int off_singular_point(double t, double *q, const double *p, const split_t *s,
                              const double *Mq)
{
    double start[N_], ph[MH_ + 1], J[MH_ * N_ + 1], X[MH_ * N_ + 1], V[N_ * N_ + 1];
    double s2[N_ + 1], MF[N_ * N_ + 1], L[N_ * N_ + 1], a[N_ + 1], acc[N_ + 1], d[N_];
    double in[1 + 2 * N_], dyn[N_ * N_ + N_ + M_ * N_ + M_ + 1], trial[N_];
    unsigned char bad[MH_ + 1];
    int round, i, j, c, nf = s->nf;
    memcpy(start, q, sizeof start);
    for (i = 0; i < nf; i++)
        for (j = 0; j < nf; j++) MF[i * nf + j] = Mq[s->free[i] * N_ + s->free[j]];
    if (lagsim_cholesky(nf, MF, L)) return 1;
    for (round = 0; round < nf; round++) {
        double top = 0.0, na = 0.0, nF = 0.0, nd = 0.0, before;
        int forced, nulls = 0;
        holonomic_rows(t, q, p, ph, J);
        before = norm(ph, MH_);
        for (j = 0; j < MH_; j++)
            for (i = 0; i < nf; i++) X[j * nf + i] = J[j * N_ + s->free[i]];
        jacobi(MH_, nf, X, V, s2);
        for (c = 0; c < nf; c++) top = fmax(top, sqrt(s2[c]));
        in[0] = t;
        memcpy(in + 1, q, N_ * sizeof(double));
        memset(in + 1 + N_, 0, N_ * sizeof(double));
        dynamics(in, p, dyn);
        for (i = 0; i < nf; i++) a[i] = dyn[N_ * N_ + s->free[i]];
        for (i = 0; i < nf; i++) nF += a[i] * a[i];
        lagsim_cholesky_solve(nf, L, a);
        for (i = 0; i < nf; i++) acc[i] = 0.0;
        for (c = 0; c < nf; c++) {
            double dot = 0.0;
            if (sqrt(s2[c]) > START_CUTOFF * top) continue;
            nulls++;
            for (i = 0; i < nf; i++) dot += V[i * nf + c] * a[i];
            for (i = 0; i < nf; i++) acc[i] += V[i * nf + c] * dot;
        }
        if (!nulls) break;
        for (i = 0; i < nf; i++) na += acc[i] * acc[i];
        forced = sqrt(na) > 1e-8 * sqrt(nF);
        if (!forced) {
            for (i = 0; i < nf; i++) acc[i] = 0.0;
            for (c = 0; c < nf; c++)
                if (!(sqrt(s2[c]) > START_CUTOFF * top))
                    for (i = 0; i < nf; i++) acc[i] += V[i * nf + c];
        }
        for (i = 0; i < nf; i++) nd += acc[i] * acc[i];
        memset(d, 0, sizeof d);
        for (i = 0; i < nf; i++) d[s->free[i]] = acc[i] / sqrt(nd);
        memcpy(trial, q, sizeof trial);
        fall(t, trial, d, p);
        descend(t, trial, p, s, 0);
        holonomic_rows(t, trial, p, ph, J);
        if (!(norm(ph, MH_) < (1.0 - 1e-6) * before)) break;
        if (!forced) return 2;
        memcpy(q, trial, sizeof trial);
        if (!unmet(ph, J, MH_, q, bad)) return 0;
    }
    memcpy(q, start, sizeof start);
    return 1;
}

static void name_rows(char *why, size_t size, const char *what, const unsigned char *bad,
                      const int *rows, int r)
{
    size_t used;
    int i, first = 1;
    snprintf(why, size, "%s", what);
    for (i = 0; i < r; i++) {
        if (!bad[i]) continue;
        used = strlen(why);
        snprintf(why + used, size - used, "%s%s", first ? " " : ", ",
                 @P@_constraint_names[rows ? rows[i] : i]);
        first = 0;
    }
}

/* qd_new = qd + delta and res = A qd_new + c. */
static void velocity_residual(const double *A, const double *c, const double *qd,
                              const double *delta, double *out, double *res)
{
    int i, j;
    for (i = 0; i < N_; i++) out[i] = qd[i] + delta[i];
    for (j = 0; j < M_; j++) {
        res[j] = c[j];
        for (i = 0; i < N_; i++) res[j] += A[j * N_ + i] * out[i];
    }
}

int @P@_consistent_start(double t, double *y, const double *p, const unsigned char *given,
                         char *why, size_t size)
{
    double in[1 + 2 * N_], dyn[N_ * N_ + N_ + M_ * N_ + M_ + 1], vel[M_ * N_ + M_ + 1];
    double w[M_ + 1], delta[N_], qd[N_];
    double ph[MH_ + 1], J[MH_ * N_ + 1];
    unsigned char bad[M_ + 1];
    split_t s;
    int i, j;
    if (M_ == 0) return 0;
    in[0] = t;
    memcpy(in + 1, y, 2 * N_ * sizeof(double));
    dynamics(in, p, dyn);
    if (MH_ > 0) {
        if (split_new(dyn, given, &s)) goto singular_mass;
        descend(t, y, p, &s, 0);
        holonomic_rows(t, y, p, ph, J);
        if (unmet(ph, J, MH_, y, bad) && s.nf
            && off_singular_point(t, y, p, &s, dyn) == 2) {
            size_t used;
            name_rows(why, size, "the unset coordinates are at a singular point of the "
                      "constraints", bad, HOLONOMIC, MH_);
            used = strlen(why);
            snprintf(why + used, size - used, ": starts lie on either side and no force at "
                     "rest picks one; give");
            for (i = 0; i < s.nf; i++) {
                used = strlen(why);
                snprintf(why + used, size - used, "%s%s", i ? ", " : " ",
                         @P@_state_names[s.free[i]]);
            }
            used = strlen(why);
            snprintf(why + used, size - used, " a start value");
            return 2;
        }
        holonomic_rows(t, y, p, ph, J);
        if (unmet(ph, J, MH_, y, bad)) {
            descend(t, y, p, &s, 1);
            holonomic_rows(t, y, p, ph, J);
            for (i = 0; i < N_; i++) if (!isfinite(y[i])) bad[0] = 1;
            if (unmet(ph, J, MH_, y, bad) || !isfinite(norm(y, N_))) {
                name_rows(why, size, "the initial positions cannot be made consistent: the "
                          "holonomic constraints conflict (check the constraints and the start "
                          "values):", bad, HOLONOMIC, MH_);
                return 2;
            }
        }
    }
    {
        unsigned char vgiven[N_ + 1];
        const double *A = vel, *c = vel + M_ * N_;
        double res[M_ + 1];
        for (i = 0; i < N_; i++) vgiven[i] = given[N_ + i];
        if (split_new(dyn, vgiven, &s)) goto singular_mass;
        memcpy(in + 1, y, N_ * sizeof(double));
        velocity(in, p, vel);
        memcpy(qd, y + N_, N_ * sizeof(double));
        for (j = 0; j < M_; j++) {
            w[j] = -c[j];
            for (i = 0; i < N_; i++) w[j] -= A[j * N_ + i] * qd[i];
        }
        free_step(&s, A, M_, w, delta);
        velocity_residual(A, c, qd, delta, y + N_, res);
        if (unmet(res, A, M_, y + N_, bad)) {
            given_step(&s, A, M_, w, delta);
            velocity_residual(A, c, qd, delta, y + N_, res);
            if (unmet(res, A, M_, y + N_, bad)) {
                name_rows(why, size, "the initial velocities cannot be made consistent: the "
                          "constraints conflict:", bad, 0, M_);
                return 2;
            }
        }
    }
    return 0;
singular_mass:
    snprintf(why, size, "the mass matrix is singular at the start, so no least change of the "
             "start values can be measured in its metric: give start values where every "
             "coordinate has inertia");
    return 1;
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

/* --stabilize projection: the integrator of @P@_integrate steps the index-1 equations without
   Baumgarte's terms and moves the state onto the constraints after each accepted step
   (lagsim.run.formulations.Projection); @P@_rhs, the Model Exchange equations, keeps them. */
#define PROJECTION_ @PROJECTION@

static int lagsim_ode_rhs(double t, const double *y, double *out, const double *p)
{
    memcpy(out, y + N_, N_ * sizeof(double));
    return accelerations(t, y, p, !PROJECTION_, out + N_, 0);
}

/* delta of least M-norm (M^-1 = W^T W) with J delta = r in the least-squares sense, singular
   values of J W^T below RCOND_P times the largest cut (lagsim.run.formulations._metric_step). */
#define RCOND_P 1e-12
static void metric_step(const double *W, const double *J, int r, const double *rhs,
                        double *delta)
{
    double B[NM_ * N_ + 1];
    int all[N_ + 1], i;
    for (i = 0; i < N_; i++) all[i] = i;
    metric_rows(J, r, all, N_, W, B);
    least_change(B, r, N_, W, rhs, largest(B, r, N_) * (RCOND_P / START_CUTOFF), delta);
}

/* y moved onto the constraints (lagsim.run.formulations.project_state): positions by
   Gauss-Newton on phi(q, t) = 0, each step the least M-norm correction, at most 8; velocities by
   the M-orthogonal projection onto A q_dot + c = 0 (M at the incoming state). 0; 1 for a mass
   matrix that is not positive definite; 2 when the positions did not converge. */
static int project(double t, double *y, const double *p)
{
    double in[1 + 2 * N_], dyn[N_ * N_ + N_ + M_ * N_ + M_ + 1], W[N_ * N_ + 1];
    double ph[MH_ + 1], J[MH_ * N_ + 1], r[NM_ + 1], delta[N_], vel[M_ * N_ + M_ + 1];
    int all[N_ + 1], it, i, j, converged = 1;
    in[0] = t;
    memcpy(in + 1, y, 2 * N_ * sizeof(double));
    dynamics(in, p, dyn);
    for (i = 0; i < N_; i++) all[i] = i;
    if (inverse_factor(dyn, all, N_, W)) return 1;
    if (MH_ > 0) {
        converged = 0;
        for (it = 0; it < 8; it++) {
            double jmax = 0.0, qmax = 0.0, pmax = 0.0, dmx = 0.0;
            holonomic_rows(t, y, p, ph, J);
            for (i = 0; i < MH_ * N_; i++) jmax = fmax(jmax, fabs(J[i]));
            for (i = 0; i < N_; i++) qmax = fmax(qmax, fabs(y[i]));
            for (i = 0; i < MH_; i++) pmax = fmax(pmax, fabs(ph[i]));
            if (pmax <= 1e-15 * (1.0 + jmax * (1.0 + qmax))) { converged = 1; break; }
            for (i = 0; i < MH_; i++) r[i] = -ph[i];
            metric_step(W, J, MH_, r, delta);
            qmax = 0.0;
            for (i = 0; i < N_; i++) {
                y[i] += delta[i];
                qmax = fmax(qmax, fabs(y[i]));
                dmx = fmax(dmx, fabs(delta[i]));
            }
            if (dmx <= 4e-16 * (1.0 + qmax)) { converged = 1; break; }
        }
    }
    if (M_ > 0) {
        memcpy(in + 1, y, N_ * sizeof(double));
        velocity(in, p, vel);
        for (j = 0; j < M_; j++) {
            double w = vel[M_ * N_ + j];
            for (i = 0; i < N_; i++) w += vel[j * N_ + i] * y[N_ + i];
            r[j] = -w;
        }
        metric_step(W, vel, M_, r, delta);
        for (i = 0; i < N_; i++) y[N_ + i] += delta[i];
    }
    return converged ? 0 : 2;
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
        if (PROJECTION_ && M_ > 0) {
            code = project(*t, y, p);
            if (code) return code == 1 ? 1 : 4;
            if (lagsim_ode_rhs(*t, y, f, p)) return 1;
        }
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
