#ifndef LAGSIM_WIDE_H
#define LAGSIM_WIDE_H
#include <math.h>
#include <string.h>

/* The Cholesky solve of a large mass matrix (issue 31, "Scale"), for runtime.c's lagsim_solve
   from LAGSIM_WIDE_N coordinates on: the column (gaxpy) form of Golub & Van Loan, Matrix
   Computations, 4th ed., Algorithm 4.2.1, the factor stored by columns (C[k n + i] = L[i][k]),
   so that the update of column j by column k is a sweep over contiguous memory, four columns
   k at a time, two rows at once in SSE2 registers (GCC's and Clang's vector extension; plain
   loops elsewhere, the same numbers). Every entry of the factor is computed by the same
   operations in the same order as lagsim_cholesky (s = M[i][j], then s -= L[i][k] L[j][k] for
   k = 0, 1, ..., then s / L[j][j]), so it is the same bits; only the memory order and the number
   of entries in flight differ. The forward substitution is lagsim_cholesky_solve's to the bit
   too, the back substitution sums in four parts (rounding-level differences; tests/test_scale.py
   holds the solution to numpy's to 1e-12). The 64-chain's factorisation takes half the time of
   the row form's, and so do its two substitutions. */

#define LAGSIM_WIDE_N 24

#if defined(__GNUC__) || defined(__clang__)
typedef double lagsim_pair __attribute__((vector_size(16)));
#define LAGSIM_PAIRS 1
#endif

/* y[i] = (((y[i] - a[0] x0[i]) - a[1] x1[i]) - a[2] x2[i]) - a[3] x3[i], i < m. */
static inline void lagsim_wide_update4(int m, const double *a, const double *x0, const double *x1,
                                const double *x2, const double *x3, double *y)
{
    int i = 0;
#ifdef LAGSIM_PAIRS
    lagsim_pair a0 = {a[0], a[0]}, a1 = {a[1], a[1]}, a2 = {a[2], a[2]}, a3 = {a[3], a[3]};
    for (; i + 2 <= m; i += 2) {
        lagsim_pair s, u;
        memcpy(&s, y + i, sizeof s);
        memcpy(&u, x0 + i, sizeof u); s -= a0 * u;
        memcpy(&u, x1 + i, sizeof u); s -= a1 * u;
        memcpy(&u, x2 + i, sizeof u); s -= a2 * u;
        memcpy(&u, x3 + i, sizeof u); s -= a3 * u;
        memcpy(y + i, &s, sizeof s);
    }
#endif
    for (; i < m; i++)
        y[i] = (((y[i] - a[0] * x0[i]) - a[1] * x1[i]) - a[2] * x2[i]) - a[3] * x3[i];
}

/* y[i] /= d, i < m (two quotients an instruction: each correctly rounded, the same bits). */
static inline void lagsim_wide_divide(int m, double d, double *y)
{
    int i = 0;
#ifdef LAGSIM_PAIRS
    lagsim_pair dd = {d, d};
    for (; i + 2 <= m; i += 2) {
        lagsim_pair s;
        memcpy(&s, y + i, sizeof s);
        s /= dd;
        memcpy(y + i, &s, sizeof s);
    }
#endif
    for (; i < m; i++) y[i] /= d;
}

/* M = L Lᵀ with L by columns in C (its lower part; nothing above the diagonal is written),
   from the lower triangle of M (row-major): 0, or 1 when M is not positive definite. */
static int lagsim_wide_cholesky(int n, const double *M, double *C)
{
    int i, j, k;
    for (j = 0; j < n; j++) {
        double *v = C + (size_t)j * n, d, a[4];
        for (i = j; i < n; i++) v[i] = M[(size_t)i * n + j];
        for (k = 0; k + 4 <= j; k += 4) {
            const double *x = C + (size_t)k * n + j;
            a[0] = x[0]; a[1] = x[n]; a[2] = x[2 * n]; a[3] = x[3 * n];
            lagsim_wide_update4(n - j, a, x, x + n, x + 2 * n, x + 3 * n, v + j);
        }
        for (; k < j; k++) {
            const double *x = C + (size_t)k * n + j;
            double s = x[0];
            for (i = 0; i < n - j; i++) v[j + i] -= s * x[i];
        }
        if (!(v[j] > 0.0)) return 1;
        d = sqrt(v[j]);
        v[j] = d;
        lagsim_wide_divide(n - j - 1, d, v + j + 1);
    }
    return 0;
}

/* y[i] -= a x[i], i < m. */
static inline void lagsim_wide_axpy(int m, double a, const double *x, double *y)
{
    int i = 0;
#ifdef LAGSIM_PAIRS
    lagsim_pair aa = {a, a};
    for (; i + 2 <= m; i += 2) {
        lagsim_pair s, u;
        memcpy(&s, y + i, sizeof s);
        memcpy(&u, x + i, sizeof u);
        s -= aa * u;
        memcpy(y + i, &s, sizeof s);
    }
#endif
    for (; i < m; i++) y[i] -= a * x[i];
}

/* Σ x[i] y[i], i < m, in four partial sums (entries 4t + u in the u-th, added as
   (s0 + s2) + (s1 + s3), the rest of m after the last four then one by one): four chains of
   additions in flight instead of one; the same numbers with or without the vector type. */
static inline double lagsim_wide_dot(int m, const double *x, const double *y)
{
    int i = 0;
    double s;
#ifdef LAGSIM_PAIRS
    lagsim_pair s0 = {0.0, 0.0}, s1 = {0.0, 0.0};
    for (; i + 4 <= m; i += 4) {
        lagsim_pair u, w;
        memcpy(&u, x + i, sizeof u); memcpy(&w, y + i, sizeof w); s0 += u * w;
        memcpy(&u, x + i + 2, sizeof u); memcpy(&w, y + i + 2, sizeof w); s1 += u * w;
    }
    s0 += s1;
    s = s0[0] + s0[1];
#else
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    for (; i + 4 <= m; i += 4) {
        s0 += x[i] * y[i]; s1 += x[i + 1] * y[i + 1];
        s2 += x[i + 2] * y[i + 2]; s3 += x[i + 3] * y[i + 3];
    }
    s = (s0 + s2) + (s1 + s3);
#endif
    for (; i < m; i++) s += x[i] * y[i];
    return s;
}

/* r ← (L Lᵀ)⁻¹ r with the factor of lagsim_wide_cholesky: L y = r by columns (the operations
   of lagsim_cholesky_solve, the same bits), then Lᵀ x = y by rows of Lᵀ (the columns of L,
   contiguous here) with lagsim_wide_dot's partial sums, which round differently from
   lagsim_cholesky_solve's one running sum (the 64-chain's back substitution is a chain of
   2,016 dependent additions in that one). */
static inline void lagsim_wide_cholesky_solve(int n, const double *C, double *r)
{
    int i, k;
    for (k = 0; k < n; k++) {
        const double *c = C + (size_t)k * n;
        double x = r[k] / c[k];
        r[k] = x;
        lagsim_wide_axpy(n - k - 1, x, c + k + 1, r + k + 1);
    }
    for (i = n - 1; i >= 0; i--) {
        const double *c = C + (size_t)i * n;
        r[i] = (r[i] - lagsim_wide_dot(n - i - 1, c + i + 1, r + i + 1)) / c[i];
    }
}
#endif
