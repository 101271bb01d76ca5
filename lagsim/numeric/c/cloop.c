/* lagsim's accepted-step loop in C (issue 9, issue 17 §4): DOP853 stepping, the right-hand
   sides of the formulations ode, index1 and udwadia-kalaba with the stabilizers none,
   baumgarte and projection, the checks of lagsim.run.driver.Guard, the --stop-when event
   (lagsim.run.crossings' scan of the step and Brent's method on the dense output) and the samples,
   for whole sample intervals per call.
   Model independent: the model's compiled functions come in as pointers. Each part mirrors
   the Python code it replaces (named in the comments), so the two agree to rounding. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"

typedef void (*lagsim_fn)(const double *in, const double *p, double *out);

/* A function whose sign change brent() finds, at s, with its context; *bad set when it cannot
   be evaluated there. */
typedef double (*event_fn)(void *ctx, double s, int *bad);

/* The --stop-when crossings inside an accepted step (lagsim.run.crossings.Scan, operation for
   operation): g on the step's dense output, the sign before the crossing, the crossing found
   (end), a failure (bad: 1 g could not be evaluated, 2 it was not finite at bad_t) and the
   run's first unresolved piece (missed: [miss_u, miss_v] of a step of miss_h); zero: the band
   within which g is 0 to rounding in the current step (Scan.zero; 0 for none). */
@CROSSINGS@
typedef double (*state_fn)(void *ctx, double t, const double *y, int *bad);
typedef struct {
    event_fn g;
    state_fn at;  /* g at a given state (the step's start, crossings.clear's states) */
    void *ctx;
    double *work;
    int N, *keep;  /* a flag an evaluation off the dense output may set, restored (or NULL) */
    double h, b, sign, end, bad_t, bad_value, miss_u, miss_v, miss_h, zero;
    int exhausted, found, bad, missed;
    int falling;  /* only crossings from g > 0 count (a gap's event, lagsim.run.events.FALLING) */
} Scan;

enum { FORM_ODE = 0, FORM_INDEX1 = 1, FORM_UK = 2 };
enum { STAB_NONE = 0, STAB_BAUMGARTE = 1, STAB_PROJECTION = 2 };

typedef struct {
    int n, m, mh, N, form, stab, has_stop, stop_lam, mass_every;
    lagsim_fn dyn, phi, vel, stop;
    const double *p;
    int *hol, *nz, *cnt, *first, *crow, *ccnt;
    double *gain, *atol;
    double beta2, rtol, max_step, t_bound, direction, mass_rtol, mass_scale, rcond;
    /* solver state (scipy's DOP853 attributes) */
    double t, t_old, h_abs, h_prev, guard_h, regular_at;
    Scan scan;
    int unchecked, dense_ready, finished, gram, diag, clean, fact_code, fact_finite;
    int small;  /* ode_small's run: form ode, m = 0, no sensitivities, n ≤ 4 (rhs_n) */
    long nfev, nsteps;
    double n_gram, n_svd, n_lu;  /* the solves by path, for lagsim_loop_paths */
    double *y, *f, *y_old, *y_raw, *K, *F, *ytmp, *ynew, *fnew;
    /* linear algebra work */
    double *in, *dynv, *Kaug, *r, *bb, *velv, *phiv, *L, *W, *a, *B, *G, *V, *z, *x, *qp,
        *qdp, *delta, *tmp, *lam, *row, *ys, *sw, *acc, *gy, *Mf, *wd, *Lm, *sum5, *sum3;
    /* lagsim.run.aliasing.AliasWatch, step for step: turns of each velocity between samples */
    double *al_sign, *al_top, *al_turns, *al_total, al_since, al_t;
    int al_done, al_found, al_reading, al_k, al_i;
    long al_steps;
    /* forward sensitivities (issue 26, lagsim.run.sensitivity.Sensitive): ns columns s of
       ∂y/∂θ after y in the state (N = 2n(1 + ns), s row-major 2n-by-ns), sens the compiled
       ∂R/∂q, ∂R/∂q̇, ∂w/∂q, ∂R/∂p, ∂w/∂p, ∂φ/∂p at (t, q, q̇, q̈, λ) with its parameters sp,
       pick (npar-by-ns) d(compiled parameter)/d(θ) */
    int ns, npar, width, ne;  /* ne: the components the error norm covers */
    lagsim_fn sens;
    const double *sp;
    double *sbuf, *pick, *sin, *sout, *rs, *scol, *sa, *srr, *sdel, *sdq, *slam;
    /* the energy of each output row (lagsim.run.monitor.assemble's, issue 31: computed with the
       samples), when lagsim_loop_energy gave its function: efn at (t, q, q̇) with parameters
       ep, written to eout[k] for the row of times[k] and eout[ntimes] for the event's row */
    lagsim_fn efn;
    const double *ep;
    double *eout, *ein;
} D;

static double dmax(double a, double b) { return a > b ? a : b; }

/* The short copies and clears of the step (a state, a stage): loops the compiler inlines,
   where memcpy and memset of a length known only at run time are calls through the PLT. */
static inline __attribute__((always_inline)) void copy_n(int k, double *to, const double *from)
{
    int i;
    for (i = 0; i < k; i++) to[i] = from[i];
}

static inline __attribute__((always_inline)) void zero_n(int k, double *to)
{
    int i;
    for (i = 0; i < k; i++) to[i] = 0.0;
}

/* 1 when the k values are finite: a sum of v·0, NaN as soon as one value is inf or NaN, in
   four independent sums (one chain of k additions waits on each one before it). */
static inline __attribute__((always_inline)) int all_finite(int k, const double *v)
{
    int i;
    double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
    for (i = 0; i + 4 <= k; i += 4) {
        a0 += v[i] * 0.0; a1 += v[i + 1] * 0.0; a2 += v[i + 2] * 0.0; a3 += v[i + 3] * 0.0;
    }
    for (; i < k; i++) a0 += v[i] * 0.0;
    return a0 + a1 + a2 + a3 == 0.0;
}

/* --- small dense linear algebra ------------------------------------------------------- */

/* lagsim_cholesky, lagsim_cholesky_solve, lagsim_ldlt, lagsim_ldlt_solve, lagsim_lu_solve and
   lagsim_solve: the runtime the model libraries hold too (lagsim.numeric.ccompile.RUNTIME), the
   L D Lᵀ solve inlined (ode_small) */
#define LAGSIM_INLINE inline __attribute__((always_inline))
@RUNTIME@

/* W = L⁻¹ (lower triangular). */
static void lower_inverse(int n, const double *L, double *W)
{
    int i, j, k;
    memset(W, 0, (size_t)n * n * sizeof(double));
    for (j = 0; j < n; j++) {
        W[j * n + j] = 1.0 / L[j * n + j];
        for (i = j + 1; i < n; i++) {
            double s = 0.0;
            for (k = j; k < i; k++) s += L[i * n + k] * W[k * n + j];
            W[i * n + j] = -s / L[i * n + i];
        }
    }
}

/* M = L Lᵀ and W = L⁻¹ (lagsim.run.formulations._factor): 0, or 1 when M is not positive
   definite. A diagonal M (natural coordinates of point masses) takes the short way, and
   d->diag says so to the products with W (d->wd holds W's diagonal). */
static int factor_now(D *d, const double *M)
{
    int n = d->n, i, j, diag;
    double off = 0.0;
    for (i = 0; i < n; i++) {  /* without branches: the sum of |M_ij| off the diagonal */
        for (j = 0; j < i; j++) off += fabs(M[i * n + j]);
        for (j = i + 1; j < n; j++) off += fabs(M[i * n + j]);
    }
    diag = off == 0.0;
    d->diag = diag;
    if (!diag) {
        d->clean = 0;
        if (lagsim_cholesky(n, M, d->L)) return 1;
        lower_inverse(n, d->L, d->W);
        return 0;
    }
    if (!d->clean) {  /* off the diagonal L and W stay zero from one diagonal M to the next */
        memset(d->L, 0, (size_t)n * n * sizeof(double));
        memset(d->W, 0, (size_t)n * n * sizeof(double));
        d->clean = 1;
    }
    for (i = 0; i < n; i++) {
        double v = M[i * n + i];
        if (!(v > 0.0)) return 1;
        d->L[i * n + i] = sqrt(v);
        d->W[i * n + i] = d->wd[i] = 1.0 / d->L[i * n + i];
    }
    return 0;
}

/* factor_now's result, kept while M stays the same bit for bit: a constant mass matrix (the
   natural coordinates of point masses have one) is factored once a run, and each call costs
   a comparison of M with the last one factored. d->fact_finite says whether that M is
   finite. */
static int factor(D *d, const double *M)
{
    size_t bytes = (size_t)d->n * d->n * sizeof(double);
    if (d->fact_code >= 0 && memcmp(M, d->Mf, bytes) == 0) return d->fact_code;
    memcpy(d->Mf, M, bytes);
    d->fact_finite = all_finite(d->n * d->n, M);
    d->fact_code = factor_now(d, M);
    return d->fact_code;
}

/* One-sided Jacobi on the rows of G (rows-by-cols, row major): plane rotations of pairs of
   rows until they are orthogonal (at most 80 sweeps), their norms then G's singular values.
   The same rotations are applied to the rows of V (rows-by-rows; NULL: not kept), so that from
   V = I the result is G = V G₀. */
static void jacobi_rows(int rows, int cols, double *G, double *V)
{
    int i, j, k, sweep, rotated;
    for (sweep = 0; sweep < 80; sweep++) {
        rotated = 0;
        for (j = 0; j < rows - 1; j++)
            for (k = j + 1; k < rows; k++) {
                double al = 0.0, be = 0.0, ga = 0.0, zeta, t, c, s;
                double *gj = G + j * cols, *gk = G + k * cols;
                for (i = 0; i < cols; i++) {
                    al += gj[i] * gj[i]; be += gk[i] * gk[i]; ga += gj[i] * gk[i];
                }
                if (ga == 0.0 || fabs(ga) <= 4.5e-16 * sqrt(al * be)) continue;
                rotated = 1;
                zeta = (be - al) / (2.0 * ga);
                t = (zeta >= 0 ? 1.0 : -1.0) / (fabs(zeta) + sqrt(1.0 + zeta * zeta));
                c = 1.0 / sqrt(1.0 + t * t);
                s = c * t;
                for (i = 0; i < cols; i++) {
                    double u = gj[i], w = gk[i];
                    gj[i] = c * u - s * w; gk[i] = s * u + c * w;
                }
                if (V)
                    for (i = 0; i < rows; i++) {
                        double *vj = V + j * rows, *vk = V + k * rows, u = vj[i], w = vk[i];
                        vj[i] = c * u - s * w; vk[i] = s * u + c * w;
                    }
            }
        if (!rotated) break;
    }
}

/* x = B⁺ r, the minimum-norm least-squares solution (lagsim.run.formulations._min_norm): B is
   rows-by-cols; singular values at or below rcond·σ_max are cut. One-sided Jacobi on the
   columns of Bᵀ: Bᵀ V = U Σ, so B⁺ r = Σ_j ĝ_j (v_jᵀ r) / σ_j². G (cols·rows), V (rows²). */
static void min_norm_svd(const D *d, int rows, int cols, const double *B, const double *r,
                         double *x, double *G, double *V)
{
    int i, j, k;
    double smax = 0.0;
    memset(x, 0, (size_t)cols * sizeof(double));
    if (rows == 0 || cols == 0) return;
    for (j = 0; j < rows; j++)
        for (i = 0; i < cols; i++) G[j * cols + i] = B[j * cols + i];
    for (j = 0; j < rows; j++)
        for (k = 0; k < rows; k++) V[j * rows + k] = j == k ? 1.0 : 0.0;
    jacobi_rows(rows, cols, G, V);
    for (j = 0; j < rows; j++) {
        double s2 = 0.0;
        for (i = 0; i < cols; i++) s2 += G[j * cols + i] * G[j * cols + i];
        smax = dmax(smax, sqrt(s2));
    }
    for (j = 0; j < rows; j++) {
        double s2 = 0.0, vr = 0.0;
        for (i = 0; i < cols; i++) s2 += G[j * cols + i] * G[j * cols + i];
        if (!(sqrt(s2) > d->rcond * smax)) continue;
        for (i = 0; i < rows; i++) vr += V[j * rows + i] * r[i];
        vr /= s2;
        for (i = 0; i < cols; i++) x[i] += G[j * cols + i] * vr;
    }
}

#define GRAM_PIVOT_RATIO 0.05
/* x = B⁺ r as Bᵀ (B Bᵀ)⁻¹ r by Cholesky when B has full row rank and is well conditioned (the
   smallest pivot of B Bᵀ = C Cᵀ at least GRAM_PIVOT_RATIO of the largest, so that the normal
   equations lose no more than rounding: cond(B)² ε ≲ 1e-13), else by the SVD; y receives
   (B Bᵀ)⁻¹ r on the Cholesky path (the multipliers), and the return value says which path
   (1: Cholesky, 0: SVD). G, V: work of rows·max(rows, cols) and rows².
   Sparse rows (a chain's constraints couple neighbours only) cost what their nonzero entries
   do: B Bᵀ column by column over the rows nonzero there (each entry summed over k in the
   order of the dense product, the exact zeros left out), and its Cholesky factor within the
   envelope of B Bᵀ (row i of C is zero left of row i's first nonzero, so those terms, exact
   zeros, are skipped; the factor is the dense one). */
static int min_norm(const D *d, int rows, int cols, const double *B, const double *r,
                    double *x, double *G, double *V, double *y)
{
    int i, j, k, a, *cnt = d->cnt, *first = d->first, *ccnt = d->ccnt;
    double lo = INFINITY, hi = 0.0;
    if (rows == 0 || cols == 0 || rows > cols) {
        min_norm_svd(d, rows, cols, B, r, x, G, V);
        return 0;
    }
    memset(ccnt, 0, (size_t)cols * sizeof(int));
    for (i = 0; i < rows; i++) {  /* the nonzero columns of each row, the rows of each column */
        const double *bi = B + i * cols;
        int *ci = d->nz + i * cols, c = 0;
        for (k = 0; k < cols; k++) { ci[c] = k; c += bi[k] != 0.0; }
        cnt[i] = c;
        for (k = 0; k < c; k++) d->crow[ci[k] * rows + ccnt[ci[k]]++] = i;
    }
    for (i = 0; i < rows; i++) memset(V + i * rows, 0, (size_t)(i + 1) * sizeof(double));
    for (k = 0; k < cols; k++) {  /* B Bᵀ, lower triangle */
        const int *rk = d->crow + k * rows;
        for (a = 0; a < ccnt[k]; a++) {
            const double bik = B[rk[a] * cols + k];
            double *vi = V + rk[a] * rows;
            for (j = 0; j <= a; j++) vi[rk[j]] += bik * B[rk[j] * cols + k];
        }
    }
    for (i = 0; i < rows; i++) {  /* where each row starts */
        for (j = 0; j < i && V[i * rows + j] == 0.0; j++) continue;
        first[i] = j;
    }
    for (j = 0; j < rows; j++) {
        double dd = V[j * rows + j];
        for (k = first[j]; k < j; k++) dd -= G[j * rows + k] * G[j * rows + k];
        if (!(dd > 0.0)) { min_norm_svd(d, rows, cols, B, r, x, G, V); return 0; }
        dd = sqrt(dd);
        G[j * rows + j] = dd;
        lo = fmin(lo, dd); hi = fmax(hi, dd);
        for (i = j + 1; i < rows; i++) {
            double acc;
            if (first[i] > j) continue;  /* C_ij = 0, never read */
            acc = V[i * rows + j];
            for (k = first[i] > first[j] ? first[i] : first[j]; k < j; k++)
                acc -= G[i * rows + k] * G[j * rows + k];
            G[i * rows + j] = acc / dd;
        }
    }
    if (!(lo >= GRAM_PIVOT_RATIO * hi)) { min_norm_svd(d, rows, cols, B, r, x, G, V); return 0; }
    for (i = 0; i < rows; i++) {
        double acc = r[i];
        for (k = first[i]; k < i; k++) acc -= G[i * rows + k] * y[k];
        y[i] = acc / G[i * rows + i];
    }
    for (i = rows - 1; i >= 0; i--) {
        double acc = y[i];
        for (k = i + 1; k < rows; k++)
            if (first[k] <= i) acc -= G[k * rows + i] * y[k];
        y[i] = acc / G[i * rows + i];
    }
    memset(x, 0, (size_t)cols * sizeof(double));
    for (i = 0; i < rows; i++) {
        const double *bi = B + i * cols;
        const int *ci = d->nz + i * cols;
        for (k = 0; k < cnt[i]; k++) x[ci[k]] += bi[ci[k]] * y[i];
    }
    return 1;
}

/* δ = Wᵀ (J Wᵀ)⁺ r (lagsim.run.formulations._metric_step); J rows-by-n. */
static void metric_step(D *d, int rows, const double *J, const double *r, double *delta)
{
    int n = d->n, i, j, k;
    if (d->diag) {
        for (i = 0; i < rows; i++)
            for (j = 0; j < n; j++) d->B[i * n + j] = J[i * n + j] * d->wd[j];
        d->gram = min_norm(d, rows, n, d->B, r, d->z, d->G, d->V, d->gy);
        *(d->gram ? &d->n_gram : &d->n_svd) += 1;
        for (j = 0; j < n; j++) delta[j] = d->wd[j] * d->z[j];
        return;
    }
    for (i = 0; i < rows; i++)
        for (j = 0; j < n; j++) {
            double s = 0.0;
            for (k = 0; k <= j; k++) s += J[i * n + k] * d->W[j * n + k];
            d->B[i * n + j] = s;
        }
    d->gram = min_norm(d, rows, n, d->B, r, d->z, d->G, d->V, d->gy);
    *(d->gram ? &d->n_gram : &d->n_svd) += 1;
    for (j = 0; j < n; j++) {
        double s = 0.0;
        for (k = j; k < n; k++) s += d->W[k * n + j] * d->z[k];
        delta[j] = s;
    }
}

/* a = Wᵀ (W F) = M⁻¹ F with the factor of factor(). */
static void mass_solve(D *d, const double *F, double *a)
{
    int n = d->n, i, j, k;
    if (d->diag) {
        for (i = 0; i < n; i++) a[i] = d->wd[i] * (d->wd[i] * F[i]);
        return;
    }
    for (i = 0; i < n; i++) {
        double acc = 0.0;
        for (k = 0; k <= i; k++) acc += d->W[i * n + k] * F[k];
        d->tmp[i] = acc;
    }
    for (j = 0; j < n; j++) {
        double acc = 0.0;
        for (k = j; k < n; k++) acc += d->W[k * n + j] * d->tmp[k];
        a[j] = acc;
    }
}


/* --- the formulations ---------------------------------------------------------------- */

static void eval_dynamics(D *d, double t, const double *q, const double *qd)
{
    d->in[0] = t;
    copy_n(d->n, d->in + 1, q);
    copy_n(d->n, d->in + 1 + d->n, qd);
    d->dyn(d->in, d->p, d->dynv);
}

/* b of A q̈ = b, adjusted by Baumgarte's stabilizer (lagsim.run.formulations.Baumgarte.adjust). */
static const double *rhs_b(D *d, double t, const double *q, const double *qd, int stabilized)
{
    int n = d->n, m = d->m, i, j;
    const double *A = d->dynv + n * n + n, *b = A + m * n;
    if (!stabilized || d->stab != STAB_BAUMGARTE || m == 0) return b;
    d->in[0] = t;
    memcpy(d->in + 1, q, n * sizeof(double));
    d->vel(d->in, d->p, d->velv);
    for (i = 0; i < m; i++) {
        double w = d->velv[m * n + i];
        for (j = 0; j < n; j++) w += A[i * n + j] * qd[j];
        d->bb[i] = b[i] - d->gain[i] * w;
    }
    if (d->mh) {
        d->phi(d->in, d->p, d->phiv);
        for (i = 0; i < d->mh; i++) d->bb[d->hol[i]] -= d->beta2 * d->phiv[i];
    }
    return d->bb;
}

/* The unconstrained ode's q̈ (form ode, m = 0, no sensitivities) for an n ≤ 4 the compiler
   knows: accelerations()' operations in their order (eval_dynamics, the finite checks,
   lagsim_solve), so the same numbers, as straight-line code (lagsim_solve inlined, n constant). */
static inline __attribute__((always_inline)) int ode_small(D *d, const int n, double t,
                                                           const double *q, const double *qd,
                                                           double *qdd)
{
    double *in = d->in, *M = d->dynv, W[16];
    const double *F = M + n * n;
    int i;
    in[0] = t;
    for (i = 0; i < n; i++) { in[1 + i] = q[i]; in[1 + n + i] = qd[i]; }
    d->dyn(in, d->p, M);
    if (!all_finite(n * n + n, M)) {  /* M, then F after it */
        for (i = 0; i < n; i++) qdd[i] = NAN;
        return 0;
    }
    for (i = 0; i < n; i++) qdd[i] = F[i];
    return lagsim_solve(n, M, qdd, W);
}

/* q̈ (and λ when lam != NULL, unstabilized) at (t, q, q̇): 0, or 1 for a singular matrix. */
static int accelerations(D *d, double t, const double *q, const double *qd, double *qdd,
                         double *lam, int stabilized)
{
    int n = d->n, m = d->m, s = n + m, i, j, k, factored = -1;
    const double *M, *F, *A, *b;
    if (d->form == FORM_ODE && m == 0 && !d->ns)
        switch (n) {
        case 1: return ode_small(d, 1, t, q, qd, qdd);
        case 2: return ode_small(d, 2, t, q, qd, qdd);
        case 3: return ode_small(d, 3, t, q, qd, qdd);
        case 4: return ode_small(d, 4, t, q, qd, qdd);
        default: break;
        }
    eval_dynamics(d, t, q, qd);
    M = d->dynv; F = M + n * n; A = F + n;
    b = rhs_b(d, t, q, qd, stabilized);
    if (d->form == FORM_UK || (d->form == FORM_INDEX1 && m > 0)) factored = factor(d, M);
    if (!(factored >= 0 ? d->fact_finite : all_finite(n * n, M)) || !all_finite(n + m * n, F)
        || !all_finite(m, b)) {
        for (i = 0; i < n; i++) qdd[i] = NAN;
        if (lam) for (i = 0; i < m; i++) lam[i] = NAN;
        return 0;
    }
    if (d->form == FORM_INDEX1 && m > 0 && factored == 0) {
        /* the Schur complement: with M = L Lᵀ, W = L⁻¹, a = M⁻¹F and B = A Wᵀ, λ solves
           (B Bᵀ) λ = b − A a and q̈ = a + Wᵀ Bᵀ λ; taken when B Bᵀ is well conditioned
           (min_norm's test), else the LU of the augmented matrix below */
        mass_solve(d, F, d->a);
        for (i = 0; i < m; i++) {
            double acc = b[i];
            for (j = 0; j < n; j++) acc -= A[i * n + j] * d->a[j];
            d->r[i] = acc;
        }
        metric_step(d, m, A, d->r, d->delta);
        if (d->gram) {
            for (j = 0; j < n; j++) qdd[j] = d->a[j] + d->delta[j];
            if (lam) memcpy(lam, d->gy, m * sizeof(double));
            return 0;
        }
    }
    if (d->form == FORM_INDEX1 || (d->form == FORM_ODE && m > 0)) {
        for (i = 0; i < s * s; i++) d->Kaug[i] = 0.0;
        for (i = 0; i < n; i++) {
            for (j = 0; j < n; j++) d->Kaug[i * s + j] = M[i * n + j];
            for (k = 0; k < m; k++) d->Kaug[i * s + n + k] = -A[k * n + i];
            d->r[i] = F[i];
        }
        for (k = 0; k < m; k++) {
            for (j = 0; j < n; j++) d->Kaug[(n + k) * s + j] = A[k * n + j];
            d->r[n + k] = b[k];
        }
        d->n_lu += 1;
        if (lagsim_lu_solve(s, 1, d->Kaug, d->r) == 1) return 1;
        memcpy(qdd, d->r, n * sizeof(double));
        if (lam) memcpy(lam, d->r + n, m * sizeof(double));
        return 0;
    }
    if (d->form == FORM_ODE && d->ns) {  /* M = L D Lᵀ in Lm, the factor sens_dz reuses (the
                                            plain run's lagsim_solve, so the same q̈) */
        if (lagsim_ldlt(n, M, d->Lm)) return 1;
        memcpy(qdd, F, n * sizeof(double));
        lagsim_ldlt_solve(n, d->Lm, qdd);
        return 0;
    }
    if (d->form == FORM_ODE) {  /* lagsim_solve, as the model library's right-hand side (on
                                   M in place: its LU, when taken, overwrites M, which nothing
                                   reads after this solve until the next evaluation) */
        copy_n(n, qdd, F);
        return lagsim_solve(n, d->dynv, qdd, d->Lm);
    }
    /* Udwadia–Kalaba (lagsim.run.formulations.UdwadiaKalaba._solve) */
    if (factored) return 1;
    mass_solve(d, F, d->a);
    if (m == 0) { memcpy(qdd, d->a, n * sizeof(double)); return 0; }
    for (i = 0; i < m; i++) {
        double acc = b[i];
        for (j = 0; j < n; j++) acc -= A[i * n + j] * d->a[j];
        d->r[i] = acc;
    }
    metric_step(d, m, A, d->r, d->delta);  /* Wᵀ z, z = (A Wᵀ)⁺ (b − A a) */
    for (j = 0; j < n; j++) qdd[j] = d->a[j] + d->delta[j];
    if (lam) {  /* λ = (Aᵀ)⁺ L z */
        for (i = 0; i < n; i++) {
            double acc = 0.0;
            for (k = 0; k <= i; k++) acc += d->L[i * n + k] * d->z[k];
            d->tmp[i] = acc;
        }
        for (i = 0; i < n; i++)
            for (k = 0; k < m; k++) d->x[i * m + k] = A[k * n + i];
        if (d->gram) memcpy(lam, d->gy, m * sizeof(double));  /* A full rank: λ = y */
        else { min_norm_svd(d, n, m, d->x, d->tmp, lam, d->G, d->V); d->n_svd += 1; }
    }
    return 0;
}

/* --- forward sensitivities (lagsim.run.sensitivity.Sensitive) ------------------------- */

/* dz = −K⁻¹ (R_q s_q + R_q̇ s_q̇ + R_θ) at (t, q, q̇) with z = [q̈; λ] (Sensitive._dz), the
   stabilizer's terms in R's constraint rows when stabilized: dq̈ (n-by-ns) to dqdd and, when
   dlam != NULL, dλ (m-by-ns). d->dynv holds the dynamics at (t, q, q̇) (accelerations() just
   evaluated them). The solve of K [dq̈; dλ] = −r is accelerations()' Udwadia–Kalaba solve with
   F = −r₁, b = −r₂ (the same dq̈ as K⁻¹ where K is regular, the least-squares one where the
   rows are dependent): 0, or 1 when M is not positive definite. */
static int sens_dz(D *d, double t, const double *q, const double *qd, const double *qdd,
                   const double *lam, const double *s, double *dqdd, int stabilized,
                   double *dlam)
{
    int n = d->n, m = d->m, mh = d->mh, ns = d->ns, np = d->npar, nm = n + m, i, j, k, l;
    double *in = d->sin, *o = d->sout, *R = d->rs;
    const double *Rq, *Rqd, *wq, *Rp, *wp, *php, *A = d->dynv + n * n + n;
    in[0] = t;
    memcpy(in + 1, q, n * sizeof(double));
    memcpy(in + 1 + n, qd, n * sizeof(double));
    memcpy(in + 1 + 2 * n, qdd, n * sizeof(double));
    memcpy(in + 1 + 3 * n, lam, m * sizeof(double));
    d->sens(in, d->sp, o);
    Rq = o; Rqd = Rq + nm * n; wq = Rqd + nm * n; Rp = wq + m * n; wp = Rp + nm * np;
    php = wp + m * np;
    for (i = 0; i < nm; i++)
        for (j = 0; j < ns; j++) {
            double acc = 0.0;
            for (k = 0; k < n; k++)
                acc += Rq[i * n + k] * s[k * ns + j] + Rqd[i * n + k] * s[(n + k) * ns + j];
            for (l = 0; l < np; l++) acc += Rp[i * np + l] * d->pick[l * ns + j];
            R[i * ns + j] = acc;
        }
    if (stabilized && d->stab == STAB_BAUMGARTE && m) {
        for (i = 0; i < m; i++)
            for (j = 0; j < ns; j++) {
                double acc = 0.0;
                for (k = 0; k < n; k++)
                    acc += wq[i * n + k] * s[k * ns + j] + A[i * n + k] * s[(n + k) * ns + j];
                for (l = 0; l < np; l++) acc += wp[i * np + l] * d->pick[l * ns + j];
                R[(n + i) * ns + j] += d->gain[i] * acc;
            }
        if (mh) {
            const double *phq = d->phiv + mh;
            d->in[0] = t;
            memcpy(d->in + 1, q, n * sizeof(double));
            d->phi(d->in, d->p, d->phiv);
            for (i = 0; i < mh; i++)
                for (j = 0; j < ns; j++) {
                    double acc = 0.0;
                    for (k = 0; k < n; k++) acc += phq[i * n + k] * s[k * ns + j];
                    for (l = 0; l < np; l++) acc += php[i * np + l] * d->pick[l * ns + j];
                    R[(n + d->hol[i]) * ns + j] += d->beta2 * acc;
                }
        }
    }
    if (d->form == FORM_ODE) {  /* M dq̈ = −r with accelerations()' factor Lm (m = 0) */
        for (j = 0; j < ns; j++) {
            for (i = 0; i < n; i++) d->sa[i] = -R[i * ns + j];
            lagsim_ldlt_solve(n, d->Lm, d->sa);
            for (i = 0; i < n; i++) dqdd[i * ns + j] = d->sa[i];
        }
        return 0;
    }
    if (factor(d, d->dynv)) return 1;
    for (j = 0; j < ns; j++) {
        for (i = 0; i < n; i++) d->scol[i] = -R[i * ns + j];
        mass_solve(d, d->scol, d->sa);
        if (m) {
            for (i = 0; i < m; i++) {
                double acc = -R[(n + i) * ns + j];
                for (k = 0; k < n; k++) acc -= A[i * n + k] * d->sa[k];
                d->srr[i] = acc;
            }
            metric_step(d, m, A, d->srr, d->sdel);
            for (i = 0; i < n; i++) d->sa[i] += d->sdel[i];
            if (dlam) {  /* as accelerations()' λ = (Aᵀ)⁺ L z */
                if (d->gram) memcpy(d->slam, d->gy, m * sizeof(double));
                else {
                    for (i = 0; i < n; i++) {
                        double acc = 0.0;
                        for (k = 0; k <= i; k++) acc += d->L[i * n + k] * d->z[k];
                        d->tmp[i] = acc;
                    }
                    for (i = 0; i < n; i++)
                        for (k = 0; k < m; k++) d->x[i * m + k] = A[k * n + i];
                    min_norm_svd(d, n, m, d->x, d->tmp, d->slam, d->G, d->V);
                    d->n_svd += 1;
                }
                for (i = 0; i < m; i++) dlam[i * ns + j] = d->slam[i];
            }
        }
        for (i = 0; i < n; i++) dqdd[i * ns + j] = d->sa[i];
    }
    return 0;
}

/* s moved onto the tangent of the constraints at the projected state out[0..2n) (Sensitive.
   project): each column s_q by its least M-norm change to Φ_q s_q + φ_θ = 0, then s_q̇ to
   A s_q̇ + w_q s_q + w_θ = 0. 0, or 1 when M is not positive definite. */
static int sens_project(D *d, double t, const double *s_in, double *out)
{
    int n = d->n, m = d->m, mh = d->mh, ns = d->ns, np = d->npar, nm = n + m, i, j, k, l;
    const double *q = out, *qd = out + n, *wq, *wp, *php;
    double *s = out + 2 * n, *in = d->sin, *o = d->sout;
    memcpy(s, s_in, 2 * n * ns * sizeof(double));
    eval_dynamics(d, t, q, qd);
    if (factor(d, d->dynv)) return 1;
    in[0] = t;
    memcpy(in + 1, q, n * sizeof(double));
    memcpy(in + 1 + n, qd, n * sizeof(double));
    memset(in + 1 + 2 * n, 0, nm * sizeof(double));
    d->sens(in, d->sp, o);
    wq = o + 2 * nm * n; wp = wq + m * n + nm * np; php = wp + m * np;
    d->in[0] = t;
    memcpy(d->in + 1, q, n * sizeof(double));
    if (mh) {
        const double *phq = d->phiv + mh;
        d->phi(d->in, d->p, d->phiv);
        for (j = 0; j < ns; j++) {
            for (i = 0; i < mh; i++) {
                double acc = 0.0;
                for (k = 0; k < n; k++) acc += phq[i * n + k] * s[k * ns + j];
                for (l = 0; l < np; l++) acc += php[i * np + l] * d->pick[l * ns + j];
                d->srr[i] = -acc;
            }
            metric_step(d, mh, phq, d->srr, d->sdel);
            for (k = 0; k < n; k++) s[k * ns + j] += d->sdel[k];
        }
    }
    d->vel(d->in, d->p, d->velv);
    for (j = 0; j < ns; j++) {
        for (i = 0; i < m; i++) {
            double acc = 0.0;
            for (k = 0; k < n; k++)
                acc += d->velv[i * n + k] * s[(n + k) * ns + j] + wq[i * n + k] * s[k * ns + j];
            for (l = 0; l < np; l++) acc += wp[i * np + l] * d->pick[l * ns + j];
            d->srr[i] = -acc;
        }
        metric_step(d, m, d->velv, d->srr, d->sdel);
        for (k = 0; k < n; k++) s[(n + k) * ns + j] += d->sdel[k];
    }
    return 0;
}

/* y' = [q̇, q̈] (the formulation's rhs), and with sensitivities ṡ = [s_q̇, dq̈]
   (Sensitive.rhs): 0, or 1 for a singular matrix. */
static int rhs(D *d, double t, const double *y, double *out)
{
    int n = d->n, ns = d->ns;
    copy_n(n, out, y + n);
    if (!ns) return accelerations(d, t, y, y + n, out + n, NULL, 1);
    if (accelerations(d, t, y, y + n, out + n, d->slam, 1)) return 1;
    memcpy(out + 2 * n, y + 2 * n + n * ns, n * ns * sizeof(double));
    return sens_dz(d, t, y, y + n, out + n, d->slam, y + 2 * n, out + 2 * n + n * ns, 1, NULL);
}

/* The state moved onto the constraints (lagsim.run.formulations.project_state): 0, 1 for a mass
   matrix that is not positive definite, 2 when the positions did not converge. */
static int project(D *d, double t, const double *y, double *out)
{
    int n = d->n, m = d->m, mh = d->mh, it, i, j, converged = 1;
    double *q = d->qp, *qd = d->qdp;
    memcpy(q, y, n * sizeof(double));
    memcpy(qd, y + n, n * sizeof(double));
    eval_dynamics(d, t, q, qd);
    if (factor(d, d->dynv)) return 1;
    if (mh) {
        converged = 0;
        for (it = 0; it < 8; it++) {
            double scale, jmax = 0.0, qmax = 0.0, pmax = 0.0, dmaxv = 0.0;
            d->in[0] = t;
            memcpy(d->in + 1, q, n * sizeof(double));
            d->phi(d->in, d->p, d->phiv);
            for (i = 0; i < mh * n; i++) jmax = dmax(jmax, fabs(d->phiv[mh + i]));
            for (i = 0; i < n; i++) qmax = dmax(qmax, fabs(q[i]));
            for (i = 0; i < mh; i++) pmax = dmax(pmax, fabs(d->phiv[i]));
            scale = 1.0 + jmax * (1.0 + qmax);
            if (pmax <= 1e-15 * scale) { converged = 1; break; }
            for (i = 0; i < mh; i++) d->tmp[i] = -d->phiv[i];
            metric_step(d, mh, d->phiv + mh, d->tmp, d->delta);
            for (i = 0; i < n; i++) q[i] += d->delta[i];
            qmax = 0.0;
            for (i = 0; i < n; i++) { qmax = dmax(qmax, fabs(q[i]));
                                      dmaxv = dmax(dmaxv, fabs(d->delta[i])); }
            if (dmaxv <= 4e-16 * (1.0 + qmax)) { converged = 1; break; }
        }
    }
    if (m) {
        d->in[0] = t;
        memcpy(d->in + 1, q, n * sizeof(double));
        d->vel(d->in, d->p, d->velv);
        for (i = 0; i < m; i++) {
            double w = d->velv[m * n + i];
            for (j = 0; j < n; j++) w += d->velv[i * n + j] * qd[j];
            d->r[i] = -w;
        }
        metric_step(d, m, d->velv, d->r, d->delta);
        for (i = 0; i < n; i++) qd[i] += d->delta[i];
    }
    memcpy(out, q, n * sizeof(double));
    memcpy(out + n, qd, n * sizeof(double));
    return converged ? 0 : 2;
}

static int projects(const D *d) { return d->stab == STAB_PROJECTION && d->m > 0; }

/* project(), and the sensitivities onto the tangent there (sens_project). */
static int project_all(D *d, double t, const double *y, double *out)
{
    int code = project(d, t, y, out);
    if (code == 1 || !d->ns) return code;
    return sens_project(d, t, y + 2 * d->n, out) ? 1 : code;
}

/* --- DOP853 (scipy.integrate.DOP853, stage for stage) ----------------------------------- */
@COEFFICIENTS@

/* rhs() for a state of N values; ode: the run is ode_small's (d->small, n = N / 2), its
   right-hand side inlined into the caller. */
static inline __attribute__((always_inline)) int rhs_n(D *d, const int N, const int ode,
                                                       double t, const double *y, double *out)
{
    const int n = N / 2;
    int i;
    if (!ode) return rhs(d, t, y, out);
    for (i = 0; i < n; i++) out[i] = y[n + i];
    return ode_small(d, n, t, y, y + n, out + n);
}

/* One accepted step (scipy's RungeKutta._step_impl): 0, RUN_SMALL or RUN_SINGULAR. N, the
   state's size, and ne, the components of the error norm, are constants for the small states
   dop853_step() names (the same operations, as loops the compiler unrolls); ode as in
   rhs_n. */
static inline __attribute__((always_inline)) int dop853_step_n(D *d, const int N, const int ne,
                                                               const int ode)
{
    const int S = DOP_S;
    double t = d->t, h_abs = d->h_abs, h = 0.0, t_new = t;
    double min_step = 10.0 * fabs(nextafter(t, d->direction * INFINITY) - t);
    double *K = d->K, *y = d->y, *acc = d->sum5, *acc3 = d->sum3;
    int i, j, s, rejected = 0;
    if (h_abs > d->max_step) h_abs = d->max_step;
    else if (h_abs < min_step) h_abs = min_step;
    for (;;) {
        double e5 = 0.0, e3 = 0.0, err;
        if (!(h_abs >= min_step)) return RUN_SMALL;  /* also a NaN step size: never hang */
        h = h_abs * d->direction;
        t_new = t + h;
        if (d->direction * (t_new - d->t_bound) > 0) t_new = d->t_bound;
        h = t_new - t;
        h_abs = fabs(h);
        copy_n(N, K, d->f);
        /* the sums over the stages run stage by stage across the state (each value's sum in
           the same order as stage-inner loops, so the same numbers, and vectorized) */
        for (s = 1; s < S; s++) {
            zero_n(N, acc);
            for (j = 0; j < s; j++) {
                const double a = DOP_A[s * S + j], *kj = K + j * N;
                for (i = 0; i < N; i++) acc[i] += kj[i] * a;
            }
            for (i = 0; i < N; i++) d->ytmp[i] = y[i] + acc[i] * h;
            if (rhs_n(d, N, ode, t + DOP_C[s] * h, d->ytmp, K + s * N)) return RUN_SINGULAR;
        }
        zero_n(N, acc);
        for (j = 0; j < S; j++) {
            const double b = DOP_B[j], *kj = K + j * N;
            for (i = 0; i < N; i++) acc[i] += kj[i] * b;
        }
        for (i = 0; i < N; i++) d->ynew[i] = y[i] + h * acc[i];
        if (rhs_n(d, N, ode, t + h, d->ynew, d->fnew)) return RUN_SINGULAR;
        copy_n(N, K + S * N, d->fnew);
        d->nfev += S;
        zero_n(N, acc);
        zero_n(N, acc3);
        for (j = 0; j <= S; j++) {
            const double c5 = DOP_E5[j], c3 = DOP_E3[j], *kj = K + j * N;
            for (i = 0; i < N; i++) { acc[i] += kj[i] * c5; acc3[i] += kj[i] * c3; }
        }
        for (i = 0; i < ne; i++) {
            double scale = d->atol[i] + dmax(fabs(y[i]), fabs(d->ynew[i])) * d->rtol;
            double a5 = acc[i] / scale, a3 = acc3[i] / scale;
            e5 += a5 * a5; e3 += a3 * a3;
        }
        err = (e5 == 0.0 && e3 == 0.0) ? 0.0 : fabs(h) * e5 / sqrt((e5 + 0.01 * e3) * ne);
        if (err < 1.0) {
            double factor = err == 0.0 ? 10.0 : fmin(10.0, 0.9 * pow(err, -1.0 / 8.0));
            if (rejected) factor = fmin(1.0, factor);
            h_abs *= factor;
            break;
        }
        h_abs *= fmax(0.2, 0.9 * pow(err, -1.0 / 8.0));  /* a NaN error gives 0.2, as max() */
        rejected = 1;
    }
    d->h_prev = h;
    copy_n(N, d->y_old, y);
    d->t_old = t;
    d->t = t_new;
    copy_n(N, d->y_raw, d->ynew);
    copy_n(N, d->y, d->ynew);
    copy_n(N, d->f, d->fnew);
    d->h_abs = h_abs;
    d->dense_ready = 0;
    d->nsteps++;
    if (d->direction * (d->t - d->t_bound) >= 0) d->finished = 1;
    return 0;
}

static int dop853_step(D *d)
{
    if (d->small)
        switch (d->N) {
        case 2: return dop853_step_n(d, 2, 2, 1);
        case 4: return dop853_step_n(d, 4, 4, 1);
        case 6: return dop853_step_n(d, 6, 6, 1);
        case 8: return dop853_step_n(d, 8, 8, 1);
        default: break;
        }
    if (d->ne == d->N)
        switch (d->N) {
        case 2: return dop853_step_n(d, 2, 2, 0);
        case 4: return dop853_step_n(d, 4, 4, 0);
        case 6: return dop853_step_n(d, 6, 6, 0);
        case 8: return dop853_step_n(d, 8, 8, 0);
        default: break;
        }
    return dop853_step_n(d, d->N, d->ne, 0);
}

/* The dense output of the last step at s (scipy's Dop853DenseOutput; the step's end itself
   is its state, as lagsim.run.driver.Step.at): 0, or RUN_SINGULAR. N and ode as in
   dop853_step_n. */
static inline __attribute__((always_inline)) int dense_n(D *d, const int N, const int ode,
                                                         double s, double *out)
{
    const int S = DOP_S;
    int i, j, k;
    double h = d->h_prev, x;
    double *K = d->K, *F = d->F;
    if (s == d->t) { copy_n(N, out, d->y_raw); return 0; }
    if (!d->dense_ready) {
        for (k = 0; k < 3; k++) {
            int st = S + 1 + k;
            for (i = 0; i < N; i++) {
                double acc = 0.0;
                for (j = 0; j < st; j++) acc += K[j * N + i] * DOP_AX[k * DOP_SX + j];
                d->ytmp[i] = d->y_old[i] + acc * h;
            }
            if (rhs_n(d, N, ode, d->t_old + DOP_CX[k] * h, d->ytmp, K + st * N))
                return RUN_SINGULAR;
        }
        d->nfev += 3;
        for (i = 0; i < N; i++) {
            double dy = d->y_raw[i] - d->y_old[i], f_old = K[i];
            F[i] = dy;
            F[N + i] = h * f_old - dy;
            F[2 * N + i] = 2 * dy - h * (K[S * N + i] + f_old);
        }
        for (k = 0; k < 4; k++)
            for (i = 0; i < N; i++) {
                double acc = 0.0;
                for (j = 0; j < DOP_SX; j++) acc += DOP_D[k * DOP_SX + j] * K[j * N + i];
                F[(3 + k) * N + i] = h * acc;
            }
        d->dense_ready = 1;
    }
    x = (s - d->t_old) / h;
    for (i = 0; i < N; i++) {
        double v = 0.0;
        for (k = 0; k < 7; k++) {
            v += F[(6 - k) * N + i];
            v *= (k % 2 == 0) ? x : 1.0 - x;
        }
        out[i] = v + d->y_old[i];
    }
    return 0;
}

static int dense(D *d, double s, double *out)
{
    if (d->small)
        switch (d->N) {
        case 2: return dense_n(d, 2, 1, s, out);
        case 4: return dense_n(d, 4, 1, s, out);
        case 6: return dense_n(d, 6, 1, s, out);
        case 8: return dense_n(d, 8, 1, s, out);
        default: break;
        }
    switch (d->N) {
    case 2: return dense_n(d, 2, 0, s, out);
    case 4: return dense_n(d, 4, 0, s, out);
    case 6: return dense_n(d, 6, 0, s, out);
    case 8: return dense_n(d, 8, 0, s, out);
    default: return dense_n(d, d->N, 0, s, out);
    }
}

/* --- the run ------------------------------------------------------------------------- */

/* The --stop-when expression at (t, y) (lagsim.run.events.EventWatch.value); *bad set when a
   linear solve failed. */
static double stop_value(D *d, double t, const double *y, int *bad)
{
    int n = d->n, m = d->m, i;
    double out = 0.0;
    for (i = 0; i < m; i++) d->lam[i] = 0.0;
    if (d->stop_lam && accelerations(d, t, y, y + n, d->acc, d->lam, 0)) { *bad = 1; return NAN; }
    d->row[0] = t;
    memcpy(d->row + 1, y, 2 * n * sizeof(double));
    memcpy(d->row + 1 + 2 * n, d->lam, m * sizeof(double));
    d->stop(d->row, d->p, &out);
    return out;
}

/* The --stop-when expression at (t, y) for the scan (Scan.at). */
static double stop_at(void *ctx, double t, const double *y, int *bad)
{
    return stop_value(ctx, t, y, bad);
}

/* The --stop-when expression at s on the step's dense output. */
static double event_at(void *ctx, double s, int *bad)
{
    D *d = ctx;
    if (dense(d, s, d->ys)) { *bad = 1; return NAN; }
    return stop_value(d, s, d->ys, bad);
}

/* scipy.optimize.brentq (scipy/optimize/Zeros/brentq.c) on g(ctx, ·) over [xa, xb]; NAN with
   *bad set as soon as g fails (the first failure is the one reported). */
static double brent(event_fn g, void *ctx, double xa, double xb, double xtol, double rtol,
                    int *bad)
{
    double xpre = xa, xcur = xb, xblk = 0.0, fpre, fcur, fblk = 0.0, spre = 0.0, scur = 0.0;
    double sbis, delta, stry, dpre, dblk;
    int i;
    fpre = g(ctx, xpre, bad);
    if (*bad) return NAN;
    fcur = g(ctx, xcur, bad);
    if (*bad) return NAN;
    if (fpre == 0) return xpre;
    if (fcur == 0) return xcur;
    for (i = 0; i < 100; i++) {
        if (fpre != 0 && fcur != 0 && (signbit(fpre) != signbit(fcur))) {
            xblk = xpre; fblk = fpre; spre = scur = xcur - xpre;
        }
        if (fabs(fblk) < fabs(fcur)) {
            xpre = xcur; xcur = xblk; xblk = xpre;
            fpre = fcur; fcur = fblk; fblk = fpre;
        }
        delta = (xtol + rtol * fabs(xcur)) / 2;
        sbis = (xblk - xcur) / 2;
        if (fcur == 0 || fabs(sbis) < delta) return xcur;
        if (fabs(spre) > delta && fabs(fcur) < fabs(fpre)) {
            if (xpre == xblk) {
                stry = -fcur * (xcur - xpre) / (fcur - fpre);
            } else {
                dpre = (fpre - fcur) / (xpre - xcur);
                dblk = (fblk - fcur) / (xblk - xcur);
                stry = -fcur * (fblk * dblk - fpre * dpre) / (dblk * dpre * (fblk - fpre));
            }
            if (2 * fabs(stry) < fmin(fabs(spre), 3 * fabs(sbis) - delta)) {
                spre = scur; scur = stry;
            } else {
                spre = sbis; scur = sbis;
            }
        } else {
            spre = sbis; scur = sbis;
        }
        xpre = xcur; fpre = fcur;
        if (fabs(scur) > delta) xcur += scur;
        else xcur += (sbis > 0 ? delta : -delta);
        fcur = g(ctx, xcur, bad);
        if (*bad) return NAN;
    }
    return xcur;
}

/* g of the scan at t on the dense output; *bad 2 (and the time and value kept) when it is not
   finite (lagsim.run.events.EventWatch.at and .many). */
static double scan_event(void *ctx, double t, int *bad)
{
    Scan *s = ctx;
    double v = s->g(s->ctx, t, bad);
    if (!*bad && !isfinite(v)) { *bad = 2; s->bad_t = t; s->bad_value = v; }
    return v;
}

static double scan_g(Scan *s, double t) { return scan_event(s, t, &s->bad); }

/* crossings.offset: how far from x the slope of g at x is taken. */
static double scan_offset(double x, double h)
{
    return dmax(h * SCAN_SLOPE_STEP, fabs(x) * SCAN_SLOPE_FLOOR);
}

/* lagsim.run.crossings.simple: g clear of zero on the piece, or monotone through it. */
static int scan_simple(double gu, double du, double gv, double dv, double gx, double length)
{
    double c = (gv - gu) / length, a = fabs(du - c), b = fabs(dv - c);
    double e = fabs(gx - (gu + length * (c * SCAN_SPLIT + (du - c) * SCAN_P - (dv - c) * SCAN_Q)));
    int monotone = a + b <= 0.5 * fabs(c) && 16.0 * e <= fabs(gv - gu);
    if (gu * gv > 0.0)
        return monotone
            || 2.0 * (4.0 / 27.0 * length * (a + b) + 2.0 * e) < fmin(fabs(gu), fabs(gv));
    return monotone;
}

/* lagsim.run.crossings.leaves_zero: g, exactly 0 at one end only, leaves that zero without
   crossing inside as far as the piece shows. */
static int scan_leaves_zero(double gu, double du, double gv, double dv, double gx,
                            double length)
{
    double c, e;
    if ((gu == 0.0) == (gv == 0.0)) return 0;
    c = (gv - gu) / length;
    e = fabs(gx - (gu + length * (c * SCAN_SPLIT + (du - c) * SCAN_P - (dv - c) * SCAN_Q)));
    return gx * (gu + gv) > 0.0 && 16.0 * e <= fabs(gv - gu);
}

/* lagsim.run.crossings.rounding: g within zero of 0 at both ends and at the cut. */
static int scan_rounding(double gu, double gv, double gx, double zero)
{
    return fmax(fabs(gu), fmax(fabs(gv), fabs(gx))) < zero;
}

/* EventWatch._visit and events.locate on the piece [u, v]: 1 when the crossing is found (or g
   failed in Brent's method). */
static int scan_visit(Scan *s, double u, double gu, double v, double gv)
{
    if (s->bad) return 1;
    if (s->sign == 0.0) { s->sign = gv > 0 ? 1.0 : (gv < 0 ? -1.0 : 0.0); return 0; }
    if (gv * s->sign > 0.0) return 0;
    if (s->falling) {  /* EventWatch._visit: the sign moves on; a rising crossing is passed */
        double before = s->sign;
        s->sign = gv > 0 ? 1.0 : (gv < 0 ? -1.0 : 0.0);
        if (before < 0.0) return 0;
    }
    s->found = 1;
    if (gv == 0.0) s->end = v;
    else if (!(gu * gv < 0.0)) s->end = u;
    else s->end = brent(scan_event, s, u, v, SCAN_XTOL * dmax(1.0, fabs(s->b)), SCAN_RTOL,
                        &s->bad);
    return 1;
}

/* Scan._piece: the piece [u, v] with its cut x, cut there while g is not simple on it (down
   to SCAN_SMALLEST of the step); the values in the order Scan.g is asked for them. */
static int scan_piece(Scan *s, double u, double gu, double du, double v, double gv, double dv,
                      double x, double gx)
{
    if (!(u < x && x < v)) return scan_visit(s, u, gu, v, gv);
    if (!scan_simple(gu, du, gv, dv, gx, v - u)) {
        if (v - u > s->h * SCAN_SMALLEST && !s->exhausted) {
            double after = x + scan_offset(x, s->h), left = u + SCAN_SPLIT * (x - u);
            double right = x + SCAN_SPLIT * (v - x), ga, gl = 0.0, gr = 0.0, dx;
            ga = scan_g(s, after);
            if (!s->bad) gl = scan_g(s, left);
            if (!s->bad) gr = scan_g(s, right);
            if (s->bad) return 1;
            dx = (ga - gx) / (after - x);
            return scan_piece(s, u, gu, du, x, gx, dx, left, gl)
                || scan_piece(s, x, gx, dx, v, gv, dv, right, gr);
        }
        if (s->exhausted || !scan_leaves_zero(gu, du, gv, dv, gx, v - u)) {
            s->exhausted = 1;
            if (!s->missed && !scan_rounding(gu, gv, gx, s->zero)) {
                s->missed = 1; s->miss_u = u; s->miss_v = v; s->miss_h = s->h;
            }
        }
    }
    return scan_visit(s, u, gu, x, gx) || scan_visit(s, x, gx, v, gv);
}

/* crossings.clear: g clear of zero on the whole step, judged from states off the dense output
   (the start ya, the end yb, their derivatives fa, fb); an evaluation that fails or is not
   finite there only means "not clear". */
static int scan_clear(Scan *s, double a, double ga, const double *ya, const double *fa,
                      double b, double gb, const double *yb, const double *fb)
{
    double h = b - a, after = a + scan_offset(a, h), before = b - scan_offset(b, h);
    double x = a + SCAN_SPLIT * h, gafter, gbefore = 0.0, gm = 0.0, *w = s->work;
    int N = s->N, i, bad = 0, kept = s->keep ? *s->keep : 0;
    if (!(ga * gb > 0.0)) return 0;
    for (i = 0; i < N; i++) w[i] = ya[i] + (after - a) * fa[i];
    gafter = s->at(s->ctx, after, w, &bad);
    for (i = 0; i < N; i++) w[i] = yb[i] - (b - before) * fb[i];
    if (!bad) gbefore = s->at(s->ctx, before, w, &bad);
    for (i = 0; i < N; i++)
        w[i] = SCAN_H00 * ya[i] + SCAN_H10 * h * fa[i] + SCAN_H01 * yb[i] + SCAN_H11 * h * fb[i];
    if (!bad) gm = s->at(s->ctx, x, w, &bad);
    if (s->keep) *s->keep = kept;
    if (bad) return 0;
    return scan_simple(ga, (gafter - ga) / (after - a), gb, (gbefore - gb) / (before - b), gm,
                       h);
}

/* EventWatch.crossings after Guard.accepted: the step [a, b] from the state ya (derivative fa)
   to yb (fb), g(b) = gb; found set with end, or bad set (Scan.step after crossings.clear). */
static void scan_step(Scan *s, double a, const double *ya, const double *fa, double b,
                      double gb, const double *yb, const double *fb)
{
    double h = b - a, after = a + scan_offset(a, h), before = b - scan_offset(b, h);
    double x = a + SCAN_SPLIT * h, ga, gafter = 0.0, gbefore = 0.0, gm = 0.0;
    s->h = h; s->b = b; s->exhausted = 0; s->found = 0; s->bad = 0;
    ga = s->at(s->ctx, a, ya, &s->bad);
    if (!s->bad && !isfinite(ga)) { s->bad = 2; s->bad_t = a; s->bad_value = ga; }
    if (s->bad) return;
    if (scan_clear(s, a, ga, ya, fa, b, gb, yb, fb)) { scan_visit(s, a, ga, b, gb); return; }
    gafter = scan_g(s, after);
    if (!s->bad) gbefore = scan_g(s, before);
    if (!s->bad) gm = scan_g(s, x);
    if (s->bad) return;
    scan_piece(s, a, ga, (gafter - ga) / (after - a), b, gb, (gbefore - gb) / (before - b), x,
               gm);
}

/* The run's first unresolved piece: out = [found, u, v, step length]. */
static void scan_missed(const Scan *s, double *out)
{
    out[0] = s->missed; out[1] = s->miss_u; out[2] = s->miss_v; out[3] = s->miss_h;
}

/* One output row at s: the state (projected when the stabilizer projects), λ and, with
   sensitivities, dλ (m-by-ns, Sensitive.extra_row's, unstabilized). */
static int sample(D *d, double s, double *row, lagsim_result *res)
{
    int N = d->N, code;
    if (dense(d, s, d->ys)) return RUN_SINGULAR;
    if (projects(d)) {
        code = project_all(d, s, d->ys, row);
        if (code == 1) return RUN_SINGULAR;
        if (code == 2) { res->when = s; return RUN_PROJECTION; }
    } else {
        copy_n(N, row, d->ys);
    }
    if (d->m && d->form != FORM_ODE) {
        if (accelerations(d, s, row, row + d->n, d->acc, row + N, 0)) return RUN_SINGULAR;
        if (d->ns && sens_dz(d, s, row, row + d->n, d->acc, row + N, row + 2 * d->n, d->sdq, 0,
                             row + N + d->m))
            return RUN_SINGULAR;
    }
    return 0;
}

static int mass_regular(D *d, double t, const double *y)
{
    int n = d->n, i;
    double weakest = 0.0, dmx = 0.0;
    eval_dynamics(d, t, y, y + n);
    if (lagsim_cholesky(n, d->dynv, d->Lm) == 0) {
        weakest = INFINITY;
        for (i = 0; i < n; i++) weakest = fmin(weakest, d->Lm[i * n + i]);
    }
    for (i = 0; i < n; i++) dmx = dmax(dmx, d->dynv[i * n + i]);
    return weakest * weakest > d->mass_rtol * dmax(d->mass_scale, dmx);
}

/* The loop's handle: ic = [n, m, m_h, form, stabilizer, has stop, stop uses λ, mass check
   every], dc = [α, β, rtol, max step, t_bound, direction, mass rtol, mass scale, rcond], the
   holonomic rows, atol (N values) and the model's functions; ns sensitivity columns (0: none,
   else lagsim_loop_sensitivities gives their parts). */
static void *loop_new(const int *ic, const double *dc, const int *hol, const double *atol,
                      void *dyn, void *phi, void *vel, void *stop, const double *p, int ns)
{
    int n = ic[0], m = ic[1], mh = ic[2], N = 2 * n * (1 + ns), P = n + m + 1, i;
    size_t total = 0;
    double *w;
    D *d = calloc(1, sizeof(D));
    if (!d) return NULL;
    d->n = n; d->m = m; d->mh = mh; d->N = N; d->form = ic[3]; d->stab = ic[4];
    d->ns = ns; d->width = N + m + m * ns; d->ne = N;
    d->small = d->form == FORM_ODE && m == 0 && !ns && n <= 4;
    d->has_stop = ic[5]; d->stop_lam = ic[6]; d->mass_every = ic[7];
    d->beta2 = dc[1] * dc[1]; d->rtol = dc[2]; d->max_step = dc[3]; d->t_bound = dc[4];
    d->direction = dc[5]; d->mass_rtol = dc[6]; d->mass_scale = dc[7]; d->rcond = dc[8];
    d->dyn = (lagsim_fn)dyn; d->phi = (lagsim_fn)phi; d->vel = (lagsim_fn)vel;
    d->stop = (lagsim_fn)stop; d->p = p;
    d->hol = calloc((size_t)mh + 1, sizeof(int));
    d->nz = calloc(2 * (size_t)P * P + 4 * (size_t)P + 1, sizeof(int));
    total = (size_t)N * 49 + (size_t)P * P * 14 + (size_t)P * 18 + 2 * (size_t)m + 66;
    w = calloc(total, sizeof(double));
    if (!d->hol || !d->nz || !w) { free(d->hol); free(d->nz); free(w); free(d); return NULL; }
    d->cnt = d->nz + P * P; d->first = d->cnt + P; d->ccnt = d->first + P;
    d->crow = d->ccnt + P;
    d->fact_code = -1;
    for (i = 0; i < mh; i++) d->hol[i] = hol[i];
#define TAKE(ptr, k) do { d->ptr = w; w += (k); } while (0)
    TAKE(gain, m + 1); TAKE(atol, N);
    TAKE(y, N); TAKE(f, N); TAKE(y_old, N); TAKE(y_raw, N); TAKE(K, 16 * N); TAKE(F, 7 * N);
    TAKE(ytmp, N); TAKE(ynew, N); TAKE(fnew, N); TAKE(ys, N); TAKE(sw, N);
    TAKE(in, P + N); TAKE(dynv, P * P + P); TAKE(Kaug, P * P); TAKE(r, P); TAKE(bb, P);
    TAKE(velv, P * P); TAKE(phiv, P * P); TAKE(L, P * P); TAKE(W, P * P); TAKE(a, P);
    TAKE(B, P * P); TAKE(G, P * P); TAKE(V, P * P); TAKE(z, P); TAKE(x, P * P); TAKE(qp, P);
    TAKE(qdp, P); TAKE(delta, P); TAKE(tmp, P); TAKE(lam, P); TAKE(row, P + N); TAKE(acc, P); TAKE(gy, P);
    TAKE(Mf, P * P); TAKE(Lm, P * P); TAKE(wd, P); TAKE(sum5, N); TAKE(sum3, N);
    TAKE(al_sign, N); TAKE(al_top, N); TAKE(al_turns, N); TAKE(al_total, N);
    TAKE(ein, N + 2);
#undef TAKE
    for (i = 0; i < m; i++) d->gain[i] = dc[0];
    for (i = 0; i < mh; i++) d->gain[hol[i]] = 2 * dc[0];
    memcpy(d->atol, atol, N * sizeof(double));
    return d;
}

void *lagsim_loop_new(const int *ic, const double *dc, const int *hol, const double *atol,
                      void *dyn, void *phi, void *vel, void *stop, const double *p)
{
    return loop_new(ic, dc, hol, atol, dyn, phi, vel, stop, p, 0);
}

/* A loop with ns sensitivity columns (lagsim_loop_new's arguments, atol of N = 2n(1 + ns)
   values): sens the compiled derivatives (sens_dz), sp its parameters, pick npar-by-ns; joint 1
   when the error norm covers the sensitivities too, 0 for the state's 2n components alone
   (Sensitive.joint). */
void *lagsim_loop_sensitive(const int *ic, const double *dc, const int *hol, const double *atol,
                            void *dyn, void *phi, void *vel, void *stop, const double *p, int ns,
                            int npar, void *sens, const double *sp, const double *pick,
                            int joint)
{
    int n = ic[0], m = ic[1], mh = ic[2], nm = n + m;
    size_t total = (size_t)npar * ns + (1 + 3 * (size_t)n + m)
        + (2 * (size_t)nm * n + (size_t)m * n + (size_t)nm * npar + (size_t)m * npar
           + (size_t)mh * npar) + (size_t)nm * ns + 3 * (size_t)n + 2 * (size_t)m
        + (size_t)n * ns + (size_t)m + 8;
    double *w = calloc(total, sizeof(double));
    D *d;
    if (!w) return NULL;
    d = loop_new(ic, dc, hol, atol, dyn, phi, vel, stop, p, ns);
    if (!d) { free(w); return NULL; }
    d->sbuf = w; d->npar = npar; d->sens = (lagsim_fn)sens; d->sp = sp;
    if (!joint) d->ne = 2 * n;
#define TAKE(ptr, k) do { d->ptr = w; w += (k); } while (0)
    TAKE(pick, npar * ns); TAKE(sin, 1 + 3 * n + m);
    TAKE(sout, 2 * nm * n + m * n + nm * npar + m * npar + mh * npar); TAKE(rs, nm * ns);
    TAKE(scol, n); TAKE(sa, n); TAKE(sdel, n); TAKE(srr, m + 1); TAKE(slam, m + 1);
    TAKE(sdq, n * ns);
#undef TAKE
    memcpy(d->pick, pick, (size_t)npar * ns * sizeof(double));
    return d;
}

/* The energy of each output row from now on: fn(in = (t, q, q̇), p, out) into out[k] for the
   row of times[k] (and out[ntimes] for the stop event's row); fn NULL: none. */
void lagsim_loop_energy(void *handle, void *fn, const double *p, double *out)
{
    D *d = handle;
    d->efn = (lagsim_fn)fn; d->ep = p; d->eout = out;
}

/* The energy of the row (q, q̇, ...) at t (NumericSystem.energy's argument vector). */
static void row_energy(D *d, double t, const double *row, double *out)
{
    d->ein[0] = t;
    copy_n(2 * d->n, d->ein + 1, row);
    d->efn(d->ein, d->ep, out);
}

static inline __attribute__((always_inline)) void columns_n(const double *rows, int count,
                                                            int width, const int n, double *out)
{
    int i, j, rest = width - 2 * n;
    double *q = out, *qd = out + (size_t)count * n, *lam = qd + (size_t)count * n;
    for (i = 0; i < count; i++) {
        const double *row = rows + (size_t)i * width;
        for (j = 0; j < n; j++) q[(size_t)i * n + j] = row[j];
        for (j = 0; j < n; j++) qd[(size_t)i * n + j] = row[n + j];
        for (j = 0; j < rest; j++) lam[(size_t)i * rest + j] = row[2 * n + j];
    }
}

/* The output of a run as the blocks out = [t, q (count-by-n), q̇ (count-by-n), λ
   (count-by-(width - 2n)), energy], each row-major, from the sample times, the rows
   rows[0..count) of width values (q, q̇ of n values each, then λ) and their energies: the
   trajectory's arrays in one pass (numpy copies a column block of a few values a row at several
   nanoseconds a value). */
void lagsim_loop_columns(const double *times, const double *rows, const double *energy,
                         int count, int width, int n, double *out)
{
    memcpy(out, times, (size_t)count * sizeof(double));
    switch (n) {
    case 1: columns_n(rows, count, width, 1, out + count); break;
    case 2: columns_n(rows, count, width, 2, out + count); break;
    case 3: columns_n(rows, count, width, 3, out + count); break;
    case 4: columns_n(rows, count, width, 4, out + count); break;
    default: columns_n(rows, count, width, n, out + count); break;
    }
    memcpy(out + (size_t)count * (1 + width), energy, (size_t)count * sizeof(double));
}

/* The first piece of a step the --stop-when scan could not resolve (scan_missed). */
void lagsim_loop_missed(void *handle, double *out) { scan_missed(&((D *)handle)->scan, out); }

/* How the constrained systems were solved since lagsim_loop_new: out = [minimum-norm solves
   by the normal equations (Cholesky), by the SVD, index1's augmented matrix by LU]. */
void lagsim_loop_paths(void *handle, double *out)
{
    D *d = handle;
    out[0] = d->n_gram; out[1] = d->n_svd; out[2] = d->n_lu;
}

void lagsim_loop_free(void *handle)
{
    D *d = handle;
    if (!d) return;
    free(d->hol);
    free(d->nz);
    free(d->gain);
    free(d->sbuf);
    free(d);
}

/* scipy's select_initial_step (scipy/integrate/_ivp/common.py) for DOP853 (error order 7),
   with f0 = f(t0, y0): the first step size, its norms over the d->ne components the error
   control measures (lagsim.run.engines.python.state_errors). */
static double initial_step(D *d, double t0, int *bad)
{
    int N = d->N, ne = d->ne, i;
    double interval = fabs(d->t_bound - t0), d0 = 0.0, d1 = 0.0, d2 = 0.0, h0, h1, h;
    const double *y0 = d->y, *f0 = d->f;
    if (interval == 0.0) return 0.0;
    for (i = 0; i < ne; i++) {
        double scale = d->atol[i] + fabs(y0[i]) * d->rtol;
        d0 += (y0[i] / scale) * (y0[i] / scale);
        d1 += (f0[i] / scale) * (f0[i] / scale);
    }
    d0 = sqrt(d0) / sqrt((double)ne);
    d1 = sqrt(d1) / sqrt((double)ne);
    h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    if (interval < h0) h0 = interval;
    for (i = 0; i < N; i++) d->ytmp[i] = y0[i] + h0 * d->direction * f0[i];
    if (rhs(d, t0 + h0 * d->direction, d->ytmp, d->fnew)) { *bad = 1; return 0.0; }
    for (i = 0; i < ne; i++) {
        double scale = d->atol[i] + fabs(y0[i]) * d->rtol, e = (d->fnew[i] - f0[i]) / scale;
        d2 += e * e;
    }
    d2 = sqrt(d2) / sqrt((double)ne) / h0;
    if (d1 <= 1e-15 && d2 <= 1e-15) h1 = 1e-6 > h0 * 1e-3 ? 1e-6 : h0 * 1e-3;
    else h1 = pow(0.01 / (d2 > d1 ? d2 : d1), 1.0 / 8.0);
    h = 100 * h0;
    if (h1 < h) h = h1;
    if (interval < h) h = interval;
    if (d->max_step < h) h = d->max_step;
    return h;
}

/* AliasWatch.__init__: the aliasing watch of d from the start velocities qd0. */
static void alias_start(D *d, const double *qd0)
{
    int i;
    for (i = 0; i < d->n; i++) {
        d->al_top[i] = fabs(qd0[i]);
        d->al_sign[i] = d->al_turns[i] = d->al_total[i] = 0.0;
    }
    d->al_k = 1; d->al_steps = 0; d->al_reading = 0; d->al_done = d->n == 0; d->al_found = 0;
}

/* The end of the run, t_bound, moved to t (before lagsim_loop_start): one handle steps the
   intervals of lagsim.analysis.lyapunov between renormalizations. */
void lagsim_loop_bound(void *handle, double t) { ((D *)handle)->t_bound = t; }

/* Start as scipy's DOP853.__init__ does: f = f(t, y) and the first step size (0, or
   RUN_SINGULAR when a linear solve fails). */
int lagsim_loop_start(void *handle, double t, const double *y, double stop_sign)
{
    D *d = handle;
    int bad = 0;
    d->t = t; d->t_old = t;
    memset(&d->scan, 0, sizeof(Scan));
    d->scan.sign = stop_sign; d->scan.g = event_at; d->scan.at = stop_at; d->scan.ctx = d;
    d->scan.work = d->sw; d->scan.N = d->N;
    d->guard_h = INFINITY; d->regular_at = t; d->unchecked = 0; d->finished = t == d->t_bound;
    memcpy(d->y, y, d->N * sizeof(double));
    alias_start(d, y + d->n);
    if (rhs(d, t, d->y, d->f)) return RUN_SINGULAR;
    d->h_abs = initial_step(d, t, &bad);
    d->nfev = 2;  /* as scipy counts them: f(t0, y0) and the probe of the first step */
    return bad ? RUN_SINGULAR : 0;
}

/* AliasWatch.accepted (lagsim/run/aliasing.py, the same constants): after each accepted step, the
   turns of each velocity between two sample times; a run whose samples alias the motion is
   marked once (al_found), lagsim_loop_alias reports it. */
static void alias_step(D *d, const double *times, int ntimes)
{
    int n = d->n, i;
    double most = 0.0;
    if (d->al_done || ntimes < 2) return;
    d->al_steps++;
    if (d->al_steps > 4 && !d->al_reading) { d->al_reading = 1; d->al_since = d->t; }
    if (d->al_reading && d->al_steps % 3 == 0) {
        const double *qd = d->y_raw + n;
        for (i = 0; i < n; i++)
            if (isfinite(qd[i]) && fabs(qd[i]) > d->al_top[i]) d->al_top[i] = fabs(qd[i]);
        for (i = 0; i < n; i++) if (d->al_top[i] > most) most = d->al_top[i];
        for (i = 0; i < n; i++) {
            double threshold = 1e-6 * dmax(d->al_top[i], 1e-6 * most);
            double sign = qd[i] > threshold ? 1.0 : (qd[i] < -threshold ? -1.0 : 0.0);
            if (sign != 0.0 && d->al_sign[i] != 0.0 && sign != d->al_sign[i]) {
                d->al_turns[i] += 1.0; d->al_total[i] += 1.0;
            }
            if (sign != 0.0) d->al_sign[i] = sign;
        }
    }
    if (d->t < times[d->al_k]) return;
    d->al_i = 0;
    for (i = 1; i < n; i++) if (d->al_turns[i] > d->al_turns[d->al_i]) d->al_i = i;
    if (d->al_turns[d->al_i] >= 2.0) {
        d->al_done = d->al_found = 1; d->al_t = d->t;
        return;
    }
    while (d->al_k < ntimes && times[d->al_k] <= d->t) d->al_k++;
    if (d->al_k > ntimes - 1) d->al_k = ntimes - 1;
    d->al_steps = 0;
    for (i = 0; i < n; i++) d->al_turns[i] = 0.0;
}

/* The aliasing found, if any: out = [found, t, coordinate, turns, total turns, since, k]. */
void lagsim_loop_alias(void *handle, double *out)
{
    D *d = handle;
    int i = d->al_i;
    out[0] = d->al_found;
    out[1] = d->al_t; out[2] = i; out[3] = d->al_turns[i]; out[4] = d->al_total[i];
    out[5] = d->al_since; out[6] = d->al_k;
}

/* Steps until the sample times times[*k..] are written to rows (N + m values a row), the run
   ends, the stop event is found or max_steps steps were taken (lagsim.run.driver.run, the loop
   body). res out: the solver's t, the event's or failure's time (when), regular_at, nfev,
   the accepted steps (nsteps) and the next step size (h_abs); state: the solver's y (for the
   failure messages); event: the event's row. Returns a RUN_ code. */
int lagsim_loop_run(void *handle, const double *times, int ntimes, int *k, double *rows,
                    int max_steps, lagsim_result *res, double *state, double *event)
{
    D *d = handle;
    int N = d->N, W = d->width, steps, code;
    for (steps = 0; steps < max_steps && !d->finished; steps++) {
        double end = NAN, g, h;
        int has_end = 0, bad = 0;
        code = dop853_step(d);
        if (code) {
            res->when = d->t;
            memcpy(state, d->y, N * sizeof(double));
            goto out;
        }
        copy_n(N, state, d->y_raw);
        res->when = d->t;
        /* Guard.accepted */
        if (!all_finite(N, d->y_raw)) { code = RUN_NONFINITE; goto out; }
        h = d->guard_h;
        d->guard_h = d->t - d->t_old;
        d->unchecked++;
        if (d->unchecked >= d->mass_every || d->guard_h < 0.5 * h) {
            d->unchecked = 0;
            if (!mass_regular(d, d->t, d->y_raw)) { code = RUN_MASS; goto out; }
            d->regular_at = d->t;
        }
        /* EventWatch.crossings */
        if (d->has_stop) {
            g = stop_value(d, d->t, d->y_raw, &bad);
            if (bad) { code = RUN_SINGULAR; goto out; }
            if (!isfinite(g)) { event[0] = g; code = RUN_STOP_NONFINITE; goto out; }
            scan_step(&d->scan, d->t_old, d->y_old, d->K, d->t, g, d->y_raw, d->f);
            if (d->scan.bad == 1) { code = RUN_SINGULAR; goto out; }
            if (d->scan.bad) {
                res->when = d->scan.bad_t; event[0] = d->scan.bad_value;
                code = RUN_STOP_NONFINITE; goto out;
            }
            if (d->scan.found) { has_end = 1; end = d->scan.end; }
        }
        /* Samples.take */
        while (*k < ntimes && (has_end ? times[*k] < end : times[*k] <= d->t)) {
            code = sample(d, times[*k], rows + (size_t)(*k) * W, res);
            if (code) goto out;
            if (d->efn) row_energy(d, times[*k], rows + (size_t)(*k) * W, d->eout + *k);
            (*k)++;
        }
        if (has_end) {
            code = sample(d, end, event, res);
            if (code) goto out;
            if (d->efn) row_energy(d, end, event, d->eout + ntimes);
            res->when = end;
            code = RUN_STOP;
            goto out;
        }
        alias_step(d, times, ntimes);
        /* Formulation.after_step */
        if (projects(d)) {
            code = project_all(d, d->t, d->y_raw, d->ys);
            if (code == 1) { code = RUN_SINGULAR; goto out; }
            if (code == 2) { code = RUN_PROJECTION; goto out; }
            if (!d->finished) {
                memcpy(d->y, d->ys, N * sizeof(double));
                if (rhs(d, d->t, d->y, d->f)) {
                    code = RUN_SINGULAR; memcpy(state, d->y, N * sizeof(double)); goto out;
                }
                d->nfev++;
            }
        }
    }
    code = d->finished ? RUN_DONE : RUN_MORE;
out:
    res->t = d->t; res->regular_at = d->regular_at; res->nfev = d->nfev;
    res->nsteps = d->nsteps; res->h_abs = d->h_abs;
    return code;
}

/* ---- reduced ---- */
/* Not in the plain loop's library (lagsim.run.engines.cloop.library). */
#ifndef LAGSIM_PLAIN_LOOP
/* The reduced formulation (lagsim.run.reduced.Reduced on a SymbolicChart) in the same loop: the
   chart's ODE in the free coordinates v is stepped by the D above (n = k, FORM_ODE without
   constraints, the chart's compiled dynamics), and after each accepted step this block does
   what lagsim.run.driver.run_python does around it with the full state rebuilt by the chart's map
   (t, v, v̇, v̈) → (q, q̇, A_e, r_e), λ the minimum-norm solution of A_eᵀ λ = r_e
   (lagsim.symbolic.reduce.NumericReduction.to_full); on a numeric chart (lagsim.run.reduced.PartitionChart)
   by Newton's method on the constraints. Reduced.after_step is made here as well: the check of
   the chart and the switch where Python would build no chart: to a symbolic chart it has
   already built (Reduced._chart_for finds it among Reduced._symbolic by the same pivoting and
   fit), or to the numeric chart of the partition where Reduced._chart_for would try no
   symbolic reduction; a change of the kind of chart restarts the solver as driver.after_step
   does. Whatever is not clear (the chart's pivot within rounding of SWITCH_RATIO times the best
   one, φ_q near rank loss, a partition Python may reduce, a fit within rounding, the first
   switch, which Python reports) returns RED_CHECK at that accepted step, after its samples,
   and Python decides (lagsim.run.engines.cloop.RLoop). */

typedef struct {
    D *c, *s;  /* the chart's ODE; the full model (its φ, the mass check, the aliasing watch) */
    lagsim_fn map, stop;
    int k, n, m, has_stop, stop_lam, mass_every, unchecked, end_bad, *pr, *pc, *rows, *cols;
    double ratio, rank_tol, fit_tol, guard_h, regular_at, bad_t;
    Scan scan;
    double *min, *mout, *acc, *ys, *end, *row, *S, *G, *V, *B, *piv, *yn, *fn;
    /* the symbolic charts Python has built, in its order (Reduced._symbolic): each one's
       dynamics, parameters and map (NULL: not compiled to C), pairs, independent coordinates
       and sorted dependent ones; the current one, and the switches made here */
    int ncharts, maxcharts, cur, switches, allow, *tpairs, *tind, *tdep, *dep;
    void **tdyn, **tmap;
    const double **tp;
    /* a numeric chart (lagsim.run.reduced.PartitionChart; cur = -1): its dependent and independent
       coordinates, the last accepted (t, q) and tangent; raised: Reduced.rhs would have raised
       (a non-finite right-hand side within 1e-9 of the last accepted time), at raise_t */
    int numeric, raised, bad_code, *ndep, *nind;
    double t_last, t_acc, raise_t, *q_last, *tan, *qw, *qdw, *qddw, *Au, *bu, *xw, *tnew, *Kw;
    /* where Reduced._chart_for builds no symbolic chart (lagsim_reduced_numeric): for every
       partition (numeric_only), or for the nkeys sorted dependent sets in keys; key: the
       sorted dependent coordinates of a pivoting; a numeric chart's parts kept while a
       switch is tried (Python's still, should it be left to Python) */
    int numeric_only, nkeys, *key, *bdep, *bind;
    const int *keys;
    double bt_last, *bq_last, *btan;
} R;

void *lagsim_reduced_new(void *chart, void *full, const int *ic, const double *dc, void *map,
                         const int *pairs, void *stop)
{
    int k = ic[0], n = ic[1], m = ic[2], W = 2 * n + m, P = m * n + m * m + 1, i;
    double *w;
    R *r = calloc(1, sizeof(R));
    if (!r) return NULL;
    r->c = chart; r->s = full; r->map = (lagsim_fn)map; r->stop = (lagsim_fn)stop;
    r->k = k; r->n = n; r->m = m; r->has_stop = ic[3]; r->stop_lam = ic[4];
    r->mass_every = ic[5];
    int T = ic[6] > 0 ? ic[6] : 1;
    r->ratio = dc[0]; r->rank_tol = dc[1]; r->fit_tol = dc[2];
    r->maxcharts = T;
    r->pr = calloc(4 * (size_t)(n + m) + 4 + (size_t)T * (3 * m + k + 3) + m + 1 + n + 2,
                   sizeof(int));
    r->tdyn = calloc(2 * (size_t)T + 2, sizeof(void *));
    r->tp = calloc((size_t)T + 1, sizeof(double *));
    w = calloc(3 * (size_t)k + 1 + 2 * n + 2 * (size_t)m * m + m + 2 * (size_t)k + W
               + (1 + W) + 4 * (size_t)P + m + 4 * (size_t)k + 64
               + 5 * (size_t)n + 2 * (size_t)m * (k + 1) + (size_t)m * m
               + (size_t)m * (k + 2) + k + 2 + (size_t)(n + m) * (n + m + 1) + m,
               sizeof(double));
    r->key = calloc(2 * (size_t)m + k + 1, sizeof(int));
    r->bq_last = calloc((size_t)n + (size_t)m * (k + 1) + 1, sizeof(double));
    if (!r->pr || !r->tdyn || !r->tp || !w || !r->key || !r->bq_last) {
        free(r->pr); free(r->tdyn); free(r->tp); free(w); free(r->key); free(r->bq_last);
        free(r); return NULL;
    }
    r->bdep = r->key + m; r->bind = r->bdep + m; r->btan = r->bq_last + n;
    r->tmap = r->tdyn + T + 1;
    r->pc = r->pr + m + 1; r->rows = r->pc + m + 1; r->cols = r->rows + m + 1;
    r->tpairs = r->cols + n + 1; r->tind = r->tpairs + (size_t)T * 2 * m + 1;
    r->tdep = r->tind + (size_t)T * k + 1; r->dep = r->tdep + (size_t)T * m + 1;
    r->ndep = r->dep + m + 1; r->nind = r->ndep + m;
    for (i = 0; i < m; i++) { r->pr[i] = pairs[2 * i]; r->pc[i] = pairs[2 * i + 1]; }
    r->min = w; w += 3 * k + 1;
    r->mout = w; w += 2 * n + 2 * m * m + m;
    r->acc = w; w += 2 * k;
    r->ys = w; w += 2 * k;
    r->end = w; w += W;
    r->row = w; w += 1 + W;
    r->S = w; w += P; r->G = w; w += P; r->V = w; w += P; r->B = w; w += P;
    r->piv = w; w += m;
    r->yn = w; w += 2 * k;
    r->fn = w; w += 2 * k;
    r->q_last = w; w += n; r->qw = w; w += n; r->qdw = w; w += n; r->qddw = w; w += n + m;
    r->tan = w; w += (size_t)m * (k + 1); r->tnew = w; w += (size_t)m * (k + 1);
    r->Au = w; w += (size_t)m * m; r->bu = w; w += (size_t)m * (k + 2); r->xw = w;
    w += k + 2; r->Kw = w;
    return r;
}

void lagsim_reduced_free(void *handle)
{
    R *r = handle;
    if (!r) return;
    free(r->pr);
    free(r->tdyn);
    free(r->tp);
    free(r->min);
    free(r->key);
    free(r->bq_last);
    free(r);
}

/* Chart j of Reduced._symbolic (pairs: 2m ints, independent: k, dependent: m sorted); dyn and
   map NULL for a chart not compiled to C (then a switch to its partition is left to Python). */
void lagsim_reduced_chart(void *handle, int j, void *dyn, const double *p, void *map,
                          const int *pairs, const int *independent, const int *dependent)
{
    R *r = handle;
    int m = r->m, k = r->k;
    if (j < 0 || j >= r->maxcharts) return;
    r->tdyn[j] = dyn; r->tp[j] = p; r->tmap[j] = map;
    if (dyn) {
        memcpy(r->tpairs + (size_t)j * 2 * m, pairs, 2 * m * sizeof(int));
        memcpy(r->tind + (size_t)j * k, independent, k * sizeof(int));
    }
    memcpy(r->tdep + (size_t)j * m, dependent, m * sizeof(int));
    if (j >= r->ncharts) r->ncharts = j + 1;
}

static void use_chart(R *r, int j)
{
    int i;
    r->c->dyn = (lagsim_fn)r->tdyn[j]; r->c->p = r->tp[j]; r->map = (lagsim_fn)r->tmap[j];
    for (i = 0; i < r->m; i++) {
        r->pr[i] = r->tpairs[(size_t)j * 2 * r->m + 2 * i];
        r->pc[i] = r->tpairs[(size_t)j * 2 * r->m + 2 * i + 1];
    }
    r->cur = j;
}

/* Make chart j (registered) the current one; Python switched to it (Reduced.after_step) and
   the solver goes on from y with f = its rhs there (computed by Python, as
   lagsim.run.driver.after_step does), keeping its step size (y NULL: no state change). allow:
   whether the C loop may switch charts itself (not before Python has reported the first
   switch). */
void lagsim_reduced_switch(void *handle, int j, const double *y, const double *f, int allow,
                           double h)
{
    R *r = handle;
    D *c = r->c;
    r->numeric = 0;
    use_chart(r, j);
    r->allow = allow;
    if (!y) return;
    memcpy(c->y, y, c->N * sizeof(double));
    memcpy(c->f, f, c->N * sizeof(double));
    c->nfev++;
    if (h > 0.0) c->h_abs = h;  /* the solver restarted with this first step */
}

/* PartitionChart.positions: q with q_v = v and q_u from Newton on φ(u, v, t) = 0, started
   from the last accepted u moved along the tangent. 0, RED_SINGULAR (φ_u exactly singular)
   or RED_NEWTON (no convergence in 30 iterations). */
static int partition_positions(R *r, double t, const double *v, double *q)
{
    D *s = r->s;
    int n = r->n, m = r->m, k = r->k, i, a, b, it;
    const double *J = s->phiv + s->mh;
    memcpy(q, r->q_last, n * sizeof(double));
    for (i = 0; i < k; i++) r->xw[i] = v[i] - q[r->nind[i]];
    r->xw[k] = t - r->t_last;
    for (i = 0; i < k; i++) q[r->nind[i]] = v[i];
    for (a = 0; a < m; a++) {
        double acc = 0.0;
        for (i = 0; i <= k; i++) acc += r->tan[a * (k + 1) + i] * r->xw[i];
        q[r->ndep[a]] -= acc;
    }
    for (it = 0; it < 30; it++) {
        double big = 0.0, qb = 0.0;
        int nan = 0;
        s->in[0] = t;
        memcpy(s->in + 1, q, n * sizeof(double));
        s->phi(s->in, s->p, s->phiv);
        for (a = 0; a < m; a++) {
            r->bu[a] = -s->phiv[a];
            for (b = 0; b < m; b++) r->Au[a * m + b] = J[a * n + r->ndep[b]];
        }
        if (lagsim_lu_solve(m, 1, r->Au, r->bu) == 1) return RED_SINGULAR;
        for (a = 0; a < m; a++) {
            q[r->ndep[a]] += r->bu[a];
            nan |= isnan(r->bu[a]);
            big = fmax(big, fabs(r->bu[a]));
        }
        for (a = 0; a < m; a++) { nan |= isnan(q[r->ndep[a]]); qb = fmax(qb, fabs(q[r->ndep[a]])); }
        if (!nan && big <= 1e-9 * (1.0 + qb)) return 0;
    }
    return RED_NEWTON;
}

/* PartitionChart.velocities: q̇ with q̇_v = v̇ and φ_u u̇ = −φ_v v̇ − c. */
static int partition_velocities(R *r, double t, const double *q, const double *vd, double *qd)
{
    D *s = r->s;
    int n = r->n, m = r->m, k = r->k, i, a, b;
    const double *A = s->velv, *c = s->velv + m * n;
    s->in[0] = t;
    memcpy(s->in + 1, q, n * sizeof(double));
    s->vel(s->in, s->p, s->velv);
    for (i = 0; i < k; i++) qd[r->nind[i]] = vd[i];
    for (a = 0; a < m; a++) {
        double acc = 0.0;
        for (i = 0; i < k; i++) acc += A[a * n + r->nind[i]] * vd[i];
        r->bu[a] = -(acc + c[a]);
        for (b = 0; b < m; b++) r->Au[a * m + b] = A[a * n + r->ndep[b]];
    }
    if (lagsim_lu_solve(m, 1, r->Au, r->bu) == 1) return RED_SINGULAR;
    for (a = 0; a < m; a++) qd[r->ndep[a]] = r->bu[a];
    return 0;
}

/* [q̈; λ] into out (n + m) from [[M, −Aᵀ], [A, 0]] [q̈; λ] = [F; b] at (t, q, q̇), by LU as
   lagsim.run.formulations.solve_augmented (numpy.linalg.solve): 0, or 1 for a singular matrix. */
static int partition_augmented(R *r, double t, const double *q, const double *qd, double *out)
{
    D *s = r->s;
    int n = r->n, m = r->m, S = n + m, i, j;
    const double *M = s->dynv, *F = M + n * n, *A = F + n, *b = A + m * n;
    eval_dynamics(s, t, q, qd);
    for (i = 0; i < n; i++) {
        for (j = 0; j < n; j++) r->Kw[i * S + j] = M[i * n + j];
        for (j = 0; j < m; j++) r->Kw[i * S + n + j] = -A[j * n + i];
        out[i] = F[i];
    }
    for (i = 0; i < m; i++) {
        for (j = 0; j < n; j++) r->Kw[(n + i) * S + j] = A[i * n + j];
        for (j = 0; j < m; j++) r->Kw[(n + i) * S + n + j] = 0.0;
        out[n + i] = b[i];
    }
    return lagsim_lu_solve(S, 1, r->Kw, out) == 1;
}

/* PartitionChart.full: [q, q̇, λ] (λ and q̈ from the full model's augmented system). */
static int partition_full(R *r, double t, const double *y, double *out)
{
    int n = r->n, m = r->m, e;
    e = partition_positions(r, t, y, out);
    if (!e) e = partition_velocities(r, t, out, y + r->k, out + n);
    if (!e && partition_augmented(r, t, out, out + n, r->qddw)) e = RED_SINGULAR;
    if (!e) memcpy(out + 2 * n, r->qddw + n, m * sizeof(double));
    if (!e && !all_finite(2 * n + m, out)) e = RED_SINGULAR;
    return e;
}

/* The chart's ODE for the DOP853 code above, as its "dynamics" (p is the R): M = I and
   F = v̈ (PartitionChart.rhs), so that its solve gives v̈ exactly; NaN where the chart does not
   reach, as Reduced.rhs, which also raises there within 1e-9 of the last accepted time. */
static void partition_dyn(const double *in, const double *p, double *out)
{
    R *r = (R *)p;
    int k = r->k, i, e;
    double t = in[0];
    for (i = 0; i < k * k; i++) out[i] = 0.0;
    for (i = 0; i < k; i++) out[i * k + i] = 1.0;
    e = partition_positions(r, t, in + 1, r->qw);
    if (!e) e = partition_velocities(r, t, r->qw, in + 1 + k, r->qdw);
    if (!e && partition_augmented(r, t, r->qw, r->qdw, r->qddw)) e = RED_SINGULAR;
    for (i = 0; i < k; i++) out[k * k + i] = e ? NAN : r->qddw[r->nind[i]];
    if (!r->raised && !(all_finite(k, out + k * k) && all_finite(k, in + 1 + k))
        && fabs(t - r->t_acc) <= 1e-9 * fmax(1.0, fabs(t))) {
        r->raised = 1; r->raise_t = t;
    }
}

/* PartitionChart.accept: the tangent −φ_u⁻¹[φ_v, c] at the accepted (t, q); 0, or 1 for a
   singular φ_u (nothing changed then). */
static int partition_accept(R *r, double t, const double *q)
{
    D *s = r->s;
    int n = r->n, m = r->m, k = r->k, i, a, b;
    const double *A = s->velv, *c = s->velv + m * n;
    s->in[0] = t;
    memcpy(s->in + 1, q, n * sizeof(double));
    s->vel(s->in, s->p, s->velv);
    for (a = 0; a < m; a++) {
        for (b = 0; b < m; b++) r->Au[a * m + b] = A[a * n + r->ndep[b]];
        for (i = 0; i < k; i++) r->tnew[a * (k + 1) + i] = A[a * n + r->nind[i]];
        r->tnew[a * (k + 1) + k] = c[a];
    }
    if (lagsim_lu_solve(m, k + 1, r->Au, r->tnew) == 1) return 1;
    memcpy(r->tan, r->tnew, (size_t)m * (k + 1) * sizeof(double));
    memcpy(r->q_last, q, n * sizeof(double));
    r->t_last = t;
    return 0;
}

/* Make a numeric chart current (Python built it: dependent, independent coordinates; st =
   [t_last, q_last, tangent]), going on from y with f (h > 0: the solver restarted with that
   first step, as lagsim.run.driver.after_step restarts it when the chart's kind changes). */
void lagsim_reduced_partition(void *handle, const int *dependent, const int *independent,
                              const double *st, const double *y, const double *f, int allow,
                              double h)
{
    R *r = handle;
    D *c = r->c;
    int n = r->n, m = r->m, k = r->k;
    r->numeric = 1; r->cur = -1; r->allow = allow;
    memcpy(r->ndep, dependent, m * sizeof(int));
    memcpy(r->nind, independent, k * sizeof(int));
    r->t_last = st[0];
    memcpy(r->q_last, st + 1, n * sizeof(double));
    memcpy(r->tan, st + 1 + n, (size_t)m * (k + 1) * sizeof(double));
    c->dyn = partition_dyn; c->p = (const double *)r;
    if (!y) return;
    memcpy(c->y, y, c->N * sizeof(double));
    memcpy(c->f, f, c->N * sizeof(double));
    c->nfev++;
    if (h > 0.0) c->h_abs = h;
}

/* The numeric chart's state for Python: st = [t_last, q_last, tangent], its dependent and
   independent coordinates (the C loop may have switched to another numeric chart). */
void lagsim_reduced_partition_state(void *handle, double *st, int *dependent, int *independent)
{
    R *r = handle;
    memcpy(dependent, r->ndep, r->m * sizeof(int));
    memcpy(independent, r->nind, r->k * sizeof(int));
    st[0] = r->t_last;
    memcpy(st + 1, r->q_last, r->n * sizeof(double));
    memcpy(st + 1 + r->n, r->tan, (size_t)r->m * (r->k + 1) * sizeof(double));
}

/* Where Reduced._chart_for gives a numeric chart without trying 002's symbolic reduction:
   numeric_only (no model, or Reduced.SYMBOLIC_CHARTS built), else for the count sorted sets
   of m dependent coordinates in keys (Reduced._no_symbolic; the array stays Python's). */
void lagsim_reduced_numeric(void *handle, int numeric_only, int count, const int *keys)
{
    R *r = handle;
    r->numeric_only = numeric_only; r->nkeys = count; r->keys = keys;
}

/* The full state [q, q̇, λ] at (t, y) (Reduced._full: the chart's full): 0, or RED_SINGULAR
   when the chart does not give a finite one there (the message of Reduced._singular),
   RED_NEWTON when a numeric chart's Newton iteration does not converge. */
static int reduced_full(R *r, double t, const double *y, double *out)
{
    int k = r->k, n = r->n, m = r->m, i, j;
    const double *Ae = r->mout + 2 * n, *re = Ae + m * m;
    if (r->numeric) return partition_full(r, t, y, out);
    if (rhs(r->c, t, y, r->acc)) return RED_SINGULAR;
    r->min[0] = t;
    memcpy(r->min + 1, y, 2 * k * sizeof(double));
    memcpy(r->min + 1 + 2 * k, r->acc + k, k * sizeof(double));
    r->map(r->min, NULL, r->mout);
    if (!all_finite(2 * n + m * m + m, r->mout)) return RED_SINGULAR;
    memcpy(out, r->mout, 2 * n * sizeof(double));
    for (i = 0; i < m; i++)
        for (j = 0; j < m; j++) r->B[i * m + j] = Ae[j * m + i];
    min_norm_svd(r->c, m, m, r->B, re, out + 2 * n, r->G, r->V);
    return all_finite(m, out + 2 * n) ? 0 : RED_SINGULAR;
}

/* The --stop-when expression at (t, y) (EventWatch.value); *bad set when the chart fails. */
static double reduced_stop_value(R *r, double t, const double *y, int *bad)
{
    int n = r->n, m = r->m, i;
    double out = 0.0;
    int e = reduced_full(r, t, y, r->row + 1);
    if (e) { *bad = 1; r->bad_t = t; r->bad_code = e; return NAN; }
    r->row[0] = t;
    if (!r->stop_lam) for (i = 0; i < m; i++) r->row[1 + 2 * n + i] = 0.0;
    r->stop(r->row, r->s->p, &out);
    return out;
}

/* The --stop-when expression at the chart's state (t, y) for the scan (Scan.at). */
static double reduced_stop_at(void *ctx, double t, const double *y, int *bad)
{
    return reduced_stop_value(ctx, t, y, bad);
}

/* The --stop-when expression at s on the chart's dense output (brent()'s event_fn). */
static double reduced_event_at(void *ctx, double s, int *bad)
{
    R *r = ctx;
    if (dense(r->c, s, r->ys) || r->raised) {
        *bad = 1; r->bad_t = r->raised ? r->raise_t : s; r->bad_code = RED_SINGULAR;
        return NAN;
    }
    return reduced_stop_value(r, s, r->ys, bad);
}

static int reduced_sample(R *r, double s, double *row)
{
    int e = dense(r->c, s, r->ys) ? RED_SINGULAR : 0;
    if (r->raised) { r->bad_t = r->raise_t; r->bad_code = RED_SINGULAR; return 1; }
    if (!e) e = reduced_full(r, s, r->ys, row);
    if (e) { r->bad_t = s; r->bad_code = e; return 1; }
    return 0;
}

/* The smallest singular value of the m-by-n matrix A (one-sided Jacobi on its rows, in G). */
static double smallest_singular(int m, int n, const double *A, double *G)
{
    int i, j;
    double low = INFINITY;
    memcpy(G, A, (size_t)m * n * sizeof(double));
    jacobi_rows(m, n, G, NULL);
    for (j = 0; j < m; j++) {
        double s2 = 0.0;
        for (i = 0; i < n; i++) s2 += G[j * n + i] * G[j * n + i];
        low = fmin(low, sqrt(s2));
    }
    return low;
}

/* The smallest pivot of Gaussian elimination with complete pivoting on φ_q (m-by-n, in S),
   within the columns ``within`` when given, ties as lagsim.run.reduced.complete_pivoting breaks
   them (the last column, then the first row); dep (when given) receives the pivot columns. */
static double complete_pivot_min(R *r, int m, int n, double *S, const int *within, int nw,
                                 int *dep)
{
    int nr = m, nc = within ? nw : n, it, a, b, o, j, *rows = r->rows, *cols = r->cols;
    double low = INFINITY;
    for (a = 0; a < m; a++) rows[a] = a;
    for (b = 0; b < nc; b++) cols[b] = within ? within[b] : b;
    for (it = 0; it < m; it++) {
        double top = 0.0, p;
        int bi = 0, bj = 0, rr, cc, found = 0;
        for (a = 0; a < nr; a++)
            for (b = 0; b < nc; b++) top = fmax(top, fabs(S[rows[a] * n + cols[b]]));
        for (a = 0; a < nr; a++)
            for (b = 0; b < nc; b++)
                if (fabs(S[rows[a] * n + cols[b]]) >= (1.0 - 1e-12) * top
                    && (!found || cols[b] > cols[bj]
                        || (cols[b] == cols[bj] && rows[a] < rows[bi]))) {
                    bi = a; bj = b; found = 1;
                }
        rr = rows[bi]; cc = cols[bj];
        if (dep) dep[it] = cc;
        for (a = bi; a < nr - 1; a++) rows[a] = rows[a + 1];
        for (b = bj; b < nc - 1; b++) cols[b] = cols[b + 1];
        nr--; nc--;
        p = S[rr * n + cc];
        low = fmin(low, fabs(p));
        if (p != 0.0)
            for (o = 0; o < nr; o++) {
                double f = S[rows[o] * n + cc] / p;
                for (j = 0; j < n; j++) S[rows[o] * n + j] -= f * S[rr * n + j];
            }
    }
    return low;
}

/* The smallest pivot of φ_q eliminated in the chart's order (lagsim.run.reduced.pivots_along). */
static double pivots_along_min(R *r, int m, int n, double *S)
{
    int a, o, j;
    double low = INFINITY;
    for (a = 0; a < m; a++) {
        int rr = r->pr[a], cc = r->pc[a];
        double p = S[rr * n + cc];
        low = fmin(low, fabs(p));
        if (p == 0.0) return 0.0;
        for (o = a + 1; o < m; o++) {
            double f = S[r->pr[o] * n + cc] / p;
            for (j = 0; j < n; j++) S[r->pr[o] * n + j] -= f * S[rr * n + j];
        }
    }
    return low;
}

/* Reduced.after_step's verdict on the chart at the accepted (t, q): 1 when it is clearly kept
   (φ_q far from rank loss, the chart's pivot clearly at least SWITCH_RATIO times the best),
   0 when Python is to decide. */
static int reduced_keeps(R *r, double t, const double *q)
{
    D *s = r->s;
    int n = r->n, m = r->m, i;
    const double *J = s->phiv + s->mh;
    double scale = 0.0, best, along;
    s->in[0] = t;
    memcpy(s->in + 1, q, n * sizeof(double));
    s->phi(s->in, s->p, s->phiv);
    if (!all_finite(m * n, J)) return 0;
    for (i = 0; i < m * n; i++) scale = fmax(scale, fabs(J[i]));
    scale = fmax(scale, 1e-300);
    if (!(smallest_singular(m, n, J, r->G) > 2.0 * r->rank_tol * scale)) return 0;
    memcpy(r->S, J, (size_t)m * n * sizeof(double));
    best = complete_pivot_min(r, m, n, r->S, NULL, 0, r->dep);
    memcpy(r->S, J, (size_t)m * n * sizeof(double));
    along = r->numeric ? complete_pivot_min(r, m, n, r->S, r->ndep, m, NULL)
                       : pivots_along_min(r, m, n, r->S);
    if (along >= r->ratio * best * (1.0 + 1e-9)) return 1;
    return along < r->ratio * best * (1.0 - 1e-9) ? 2 : 0;
}

/* Reduced._chart_for's search of the symbolic charts Python has built for the pivoted
   partition (r->dep; its sorted copy into r->key): the first registered chart with these
   dependent coordinates that rebuilds (q, q̇) = r->end from its free part (SymbolicChart.fits,
   clearly: within half or beyond twice START_TOLERANCE), its free part then in r->yn; -1 when
   none does, -2 when Python is to decide (a chart without C code, a fit within rounding). */
static int symbolic_fit(R *r, double t)
{
    int n = r->n, m = r->m, k = r->k, N = 2 * k, i, j, l;
    const double *q = r->end, *qd = r->end + n;
    double qmax = 1.0, qdmax = 1.0;
    memcpy(r->key, r->dep, m * sizeof(int));
    for (i = 1; i < m; i++) {
        int v = r->key[i];
        for (l = i - 1; l >= 0 && r->key[l] > v; l--) r->key[l + 1] = r->key[l];
        r->key[l + 1] = v;
    }
    for (i = 0; i < n; i++) { qmax = fmax(qmax, fabs(q[i])); qdmax = fmax(qdmax, fabs(qd[i])); }
    for (j = 0; j < r->ncharts; j++) {
        const int *ind = r->tind + (size_t)j * k;
        int same = 1, fits = 1, clear = 1;
        for (i = 0; i < m; i++) same &= r->tdep[(size_t)j * m + i] == r->key[i];
        if (!same) continue;
        if (!r->tdyn[j] || !r->tmap[j]) return -2;
        for (i = 0; i < k; i++) { r->yn[i] = q[ind[i]]; r->yn[k + i] = qd[ind[i]]; }
        r->min[0] = t;
        memcpy(r->min + 1, r->yn, N * sizeof(double));
        memset(r->min + 1 + N, 0, k * sizeof(double));  /* q, q̇ do not depend on v̈ */
        ((lagsim_fn)r->tmap[j])(r->min, NULL, r->mout);
        for (i = 0; i < 2 * n; i++) {
            double e = fabs(r->mout[i] - r->end[i]), tol = r->fit_tol * (i < n ? qmax : qdmax);
            if (!(e <= tol)) fits = 0;
            if (!(e <= 0.5 * tol || e > 2.0 * tol)) clear = 0;
        }
        if (!clear) return -2;
        if (fits) return j;
    }
    return -1;
}

/* 1 when Reduced._chart_for gives the pivoted partition (sorted in r->key) a numeric chart
   without trying a symbolic reduction (lagsim_reduced_numeric). */
static int numeric_partition(const R *r)
{
    int a, i, m = r->m;
    if (r->numeric_only) return 1;
    for (a = 0; a < r->nkeys; a++) {
        int same = 1;
        for (i = 0; i < m; i++) same &= r->keys[(size_t)a * m + i] == r->key[i];
        if (same) return 1;
    }
    return 0;
}

/* Make the current chart numeric (its partition in ndep, nind; its state in tan, q_last,
   t_last), or symbolic chart j (j >= 0). */
static void set_chart(R *r, int j)
{
    r->numeric = j < 0;
    if (j >= 0) { use_chart(r, j); return; }
    r->cur = -1;
    r->c->dyn = partition_dyn; r->c->p = (const double *)r;
}

/* Reduced.after_step's switch where Python would make the same one without building a chart:
   the old chart's accept (PartitionChart.accept; nothing for a symbolic one), then
   Reduced._chart_for: the first registered symbolic chart of the pivoted partition that fits,
   else (where no symbolic reduction is to be tried) its numeric chart, the dependent
   coordinates in the pivots' order, the independent ones sorted, with its tangent at (t, q).
   The state goes over to it with f = its rhs (lagsim.run.driver.after_step), the solver restarted
   with first step min(last step, t_bound − t) when the kind of chart changes, as driver.after_step
   restarts scipy's (lagsim_reduced_switch, lagsim_reduced_partition). 1 when switched, 0 when
   Python is to do it (the old chart as it was, after its accept). */
static int switch_here(R *r, double t)
{
    D *c = r->c;
    int n = r->n, m = r->m, k = r->k, N = 2 * k, i, a, b, j, old = r->numeric ? -1 : r->cur;
    const double *q = r->end, *qd = r->end + n;
    if (r->numeric && partition_accept(r, t, q)) return 0;
    r->t_acc = t;
    j = symbolic_fit(r, t);
    if (j == -2 || (j == -1 && !numeric_partition(r))) return 0;
    memcpy(r->bdep, r->ndep, m * sizeof(int));
    memcpy(r->bind, r->nind, k * sizeof(int));
    memcpy(r->bq_last, r->q_last, n * sizeof(double));
    memcpy(r->btan, r->tan, (size_t)m * (k + 1) * sizeof(double));
    r->bt_last = r->t_last;
    if (j < 0) {
        memcpy(r->ndep, r->dep, m * sizeof(int));
        for (i = 0, b = 0; i < n; i++) {
            int dependent = 0;
            for (a = 0; a < m; a++) dependent |= r->dep[a] == i;
            if (!dependent) r->nind[b++] = i;
        }
        for (i = 0; i < k; i++) { r->yn[i] = q[r->nind[i]]; r->yn[k + i] = qd[r->nind[i]]; }
    }
    set_chart(r, j);
    if ((j >= 0 || !partition_accept(r, t, q)) && !rhs(c, t, r->yn, r->fn)
        && all_finite(N, r->fn) && !r->raised) {
        memcpy(c->y, r->yn, N * sizeof(double));
        memcpy(c->f, r->fn, N * sizeof(double));
        c->nfev++;
        r->switches++;
        if ((j < 0) != (old < 0)) c->h_abs = fmin(r->guard_h, c->t_bound - t);
        return 1;
    }
    r->raised = 0;
    memcpy(r->ndep, r->bdep, m * sizeof(int));
    memcpy(r->nind, r->bind, k * sizeof(int));
    memcpy(r->q_last, r->bq_last, n * sizeof(double));
    memcpy(r->tan, r->btan, (size_t)m * (k + 1) * sizeof(double));
    r->t_last = r->bt_last;
    set_chart(r, old);
    return 0;
}

/* Start: the chart's solver (lagsim_loop_start of the chart's D), the stop sign, the full
   state's aliasing watch from q̇0. */
int lagsim_reduced_start(void *handle, double t, const double *y, double stop_sign,
                         const double *qd0)
{
    R *r = handle;
    int i;
    memset(&r->scan, 0, sizeof(Scan));
    r->scan.sign = stop_sign; r->scan.g = reduced_event_at; r->scan.at = reduced_stop_at;
    r->scan.ctx = r; r->scan.work = r->c->sw; r->scan.N = r->c->N; r->scan.keep = &r->raised;
    r->guard_h = INFINITY; r->regular_at = t; r->unchecked = 0;
    r->t_acc = t;
    alias_start(r->s, qd0);
    i = lagsim_loop_start(r->c, t, y, 0.0);
    return i ? i : (r->raised ? RED_SINGULAR : 0);
}

/* lagsim_loop_run for the reduced formulation (lagsim.run.driver.run_python's loop body with
   Reduced's unpack, multipliers and after_step). rows: 2n + m values a row; state: the
   chart's y; res as lagsim_loop_run's, and the guard's last step (guard_h), its unchecked
   steps, the stop sign (for a run that goes on in Python), the current chart and the
   switches made here. Returns a RUN_ or RED_ code. */
int lagsim_reduced_run(void *handle, const double *times, int ntimes, int *k, double *rows,
                       int max_steps, lagsim_result *res, double *state, double *event)
{
    R *r = handle;
    D *c = r->c, *s = r->s;
    int N = c->N, W = 2 * r->n + r->m, steps, code;
    for (steps = 0; steps < max_steps && !c->finished; steps++) {
        double end = NAN, g, h;
        int has_end = 0, bad = 0, due, keep;
        code = dop853_step(c);
        if (r->raised) {  /* Python would have stopped inside this step: undo it */
            if (!code) { c->t = c->t_old; memcpy(c->y, c->y_old, N * sizeof(double)); }
            res->when = r->raise_t;
            memcpy(state, c->y, N * sizeof(double));
            code = RED_SINGULAR;
            goto out;
        }
        if (code) {
            res->when = c->t;
            memcpy(state, c->y, N * sizeof(double));
            if (!r->numeric || code != RUN_SMALL) code = RED_SINGULAR;
            goto out;
        }
        memcpy(state, c->y_raw, N * sizeof(double));
        res->when = c->t;
        /* Guard.accepted */
        if (!all_finite(N, c->y_raw)) { code = RUN_NONFINITE; goto out; }
        r->end_bad = reduced_full(r, c->t, c->y_raw, r->end);
        h = r->guard_h;
        r->guard_h = c->t - c->t_old;
        r->unchecked++;
        due = r->unchecked >= r->mass_every || r->guard_h < 0.5 * h;
        if (due) {
            r->unchecked = 0;
            if (r->end_bad) { code = r->end_bad; goto out; }
            if (!mass_regular(s, c->t, r->end)) { code = RUN_MASS; goto out; }
            r->regular_at = c->t;
        }
        /* EventWatch.crossings */
        if (r->has_stop) {
            if (r->end_bad) { code = r->end_bad; goto out; }
            g = reduced_stop_value(r, c->t, c->y_raw, &bad);
            if (bad) { res->when = r->bad_t; code = r->bad_code; goto out; }
            if (!isfinite(g)) { event[0] = g; code = RUN_STOP_NONFINITE; goto out; }
            scan_step(&r->scan, c->t_old, c->y_old, c->K, c->t, g, c->y_raw, c->f);
            if (r->scan.bad == 1) { res->when = r->bad_t; code = r->bad_code; goto out; }
            if (r->scan.bad) {
                res->when = r->scan.bad_t; event[0] = r->scan.bad_value;
                code = RUN_STOP_NONFINITE; goto out;
            }
            if (r->scan.found) { has_end = 1; end = r->scan.end; }
        }
        /* Samples.take */
        while (*k < ntimes && (has_end ? times[*k] < end : times[*k] <= c->t)) {
            if (reduced_sample(r, times[*k], rows + (size_t)(*k) * W)) {
                res->when = r->bad_t; code = r->bad_code; goto out;
            }
            (*k)++;
        }
        if (has_end) {
            if (reduced_sample(r, end, event)) {
                res->when = r->bad_t; code = r->bad_code; goto out;
            }
            res->when = end;
            code = RUN_STOP;
            goto out;
        }
        if (r->end_bad) { code = r->end_bad; goto out; }
        /* AliasWatch.accepted on the full state */
        s->t = c->t;
        memcpy(s->y_raw, r->end, 2 * r->n * sizeof(double));
        alias_step(s, times, ntimes);
        /* Reduced.after_step */
        keep = reduced_keeps(r, c->t, r->end);
        if (keep == 1 && !(r->numeric && partition_accept(r, c->t, r->end))) {
            r->t_acc = c->t;
            continue;
        }
        if (keep == 1) keep = 0;
        if (keep == 2 && r->allow && !c->finished && switch_here(r, c->t)) {
            r->t_acc = c->t;
            continue;
        }
        r->t_acc = c->t;
        code = RED_CHECK;
        goto out;
    }
    code = c->finished ? RUN_DONE : RUN_MORE;
out:
    res->t = c->t; res->regular_at = r->regular_at; res->nfev = c->nfev;
    res->nsteps = c->nsteps; res->h_abs = c->h_abs; res->guard_h = r->guard_h;
    res->unchecked = r->unchecked; res->stop_sign = r->scan.sign; res->chart = r->cur;
    res->switches = r->switches;
    return code;
}

/* The first piece of a step the reduced loop's --stop-when scan could not resolve. */
void lagsim_reduced_missed(void *handle, double *out) { scan_missed(&((R *)handle)->scan, out); }
#endif
