#include <math.h>
#include <string.h>
#include "wide.h"

/* lagsim's small dense linear algebra, one text in every library that needs it: the model
   libraries (the ODE right-hand side) and the C step loops (lagsim/numeric/c/cloop.c, cradau.c, the
   fixed-step methods). Matrices are row-major. A text that defines LAGSIM_INLINE before this one
   has the L D Lᵀ solve inlined where it is called (the C loop, so that a call with a constant n
   becomes straight-line code); without it (the exported C) they are plain functions. */
#ifndef LAGSIM_INLINE
#define LAGSIM_INLINE
#endif

/* M = L Lᵀ (numpy.linalg.cholesky; L lower triangular, its upper part zeroed): 0, or 1 when
   M is not positive definite. */
static int lagsim_cholesky(int n, const double *M, double *L)
{
    int i, j, k;
    memset(L, 0, (size_t)n * n * sizeof(double));
    for (j = 0; j < n; j++) {
        double d = M[j * n + j];
        for (k = 0; k < j; k++) d -= L[j * n + k] * L[j * n + k];
        if (!(d > 0.0)) return 1;
        d = sqrt(d);
        L[j * n + j] = d;
        for (i = j + 1; i < n; i++) {
            double s = M[i * n + j];
            for (k = 0; k < j; k++) s -= L[i * n + k] * L[j * n + k];
            L[i * n + j] = s / d;
        }
    }
    return 0;
}

/* r ← (L Lᵀ)⁻¹ r: the two triangular solves with the factor of lagsim_cholesky. */
static void lagsim_cholesky_solve(int n, const double *L, double *r)
{
    int i, k;
    for (i = 0; i < n; i++) {
        double s = r[i];
        for (k = 0; k < i; k++) s -= L[i * n + k] * r[k];
        r[i] = s / L[i * n + i];
    }
    for (i = n - 1; i >= 0; i--) {
        double s = r[i];
        for (k = i + 1; k < n; k++) s -= L[k * n + i] * r[k];
        r[i] = s / L[i * n + i];
    }
}

/* Solve A X = B by LU with partial pivoting (A s-by-s, overwritten; B s-by-nb row major, a
   right-hand side a column, becomes X; with nb = 1 a vector): 0; 1 for an exactly singular A
   (numpy.linalg.solve's LinAlgError), B then unfinished; 2 when a pivot was not finite (solved
   through, as LAPACK would). */
static int lagsim_lu_solve(int s, int nb, double *A, double *B)
{
    int i, j, k, l, finite = 1;
    for (k = 0; k < s; k++) {
        int p = k;
        double best = fabs(A[k * s + k]);
        for (i = k + 1; i < s; i++)
            if (fabs(A[i * s + k]) > best) { best = fabs(A[i * s + k]); p = i; }
        if (best == 0.0) return 1;
        finite &= isfinite(best) != 0;
        if (p != k) {
            double t;
            for (j = 0; j < s; j++) { t = A[k * s + j]; A[k * s + j] = A[p * s + j];
                                      A[p * s + j] = t; }
            for (l = 0; l < nb; l++) { t = B[k * nb + l]; B[k * nb + l] = B[p * nb + l];
                                       B[p * nb + l] = t; }
        }
        for (i = k + 1; i < s; i++) {
            double f = A[i * s + k] / A[k * s + k];
            if (f == 0.0) continue;
            for (j = k + 1; j < s; j++) A[i * s + j] -= f * A[k * s + j];
            for (l = 0; l < nb; l++) B[i * nb + l] -= f * B[k * nb + l];
        }
    }
    for (i = s - 1; i >= 0; i--)
        for (l = 0; l < nb; l++) {
            double acc = B[i * nb + l];
            for (j = i + 1; j < s; j++) acc -= A[i * s + j] * B[j * nb + l];
            B[i * nb + l] = acc / A[i * s + i];
        }
    return finite ? 0 : 2;
}

/* M = L D Lᵀ, the Cholesky factorisation without square roots (Golub & Van Loan, "Matrix
   Computations", 4th ed., §4.1.2; M symmetric positive definite, seed 001 §10.2): L unit lower
   triangular, held below the diagonal of W, D on its diagonal, and above it the products
   W[j n + i] = L_ij d_j (i > j) that the later columns reuse. 0, or 1 when M is not positive
   definite (a pivot d_j not > 0). Each column costs its divisions by d_j alone, in parallel:
   no square root, and the solve's chain of dependent divisions is one long. */
static LAGSIM_INLINE int lagsim_ldlt(int n, const double *M, double *W)
{
    int i, j, k;
    for (j = 0; j < n; j++) {
        double d = M[j * n + j];
        for (k = 0; k < j; k++) d -= W[j * n + k] * W[k * n + j];
        if (!(d > 0.0)) return 1;
        W[j * n + j] = d;
        for (i = j + 1; i < n; i++) {
            double s = M[i * n + j];
            for (k = 0; k < j; k++) s -= W[i * n + k] * W[k * n + j];
            W[j * n + i] = s;
            W[i * n + j] = s / d;
        }
    }
    return 0;
}

/* r ← (L D Lᵀ)⁻¹ r with the factor of lagsim_ldlt: L z = r, then D y = z, then Lᵀ x = y. */
static LAGSIM_INLINE void lagsim_ldlt_solve(int n, const double *W, double *r)
{
    int i, k;
    for (i = 0; i < n; i++) {
        double s = r[i];
        for (k = 0; k < i; k++) s -= W[i * n + k] * r[k];
        r[i] = s;
    }
    for (i = 0; i < n; i++) r[i] /= W[i * n + i];
    for (i = n - 1; i >= 0; i--) {
        double s = r[i];
        for (k = i + 1; k < n; k++) s -= W[k * n + i] * r[k];
        r[i] = s;
    }
}

/* Solve M x = r (M n-by-n, overwritten; r becomes x) for a mass matrix: L D Lᵀ into the
   work W (n²), else LU with partial pivoting (as numpy.linalg.solve still solves a matrix
   that is not positive definite). Returns 0, or 1 when M is singular or a pivot is not
   finite. From LAGSIM_WIDE_N coordinates on M is factored by wide.h's column-ordered Cholesky
   in W instead (its factor the row form's bits, its back substitution summed in parts; nothing
   reads W after this call). */
static LAGSIM_INLINE int lagsim_solve(int n, double *M, double *r, double *W)
{
    if (n >= LAGSIM_WIDE_N) {
        if (lagsim_wide_cholesky(n, M, W) == 0) {
            lagsim_wide_cholesky_solve(n, W, r);
            return 0;
        }
    } else if (lagsim_ldlt(n, M, W) == 0) {
        lagsim_ldlt_solve(n, W, r);
        return 0;
    }
    return lagsim_lu_solve(n, 1, M, r) != 0;
}
