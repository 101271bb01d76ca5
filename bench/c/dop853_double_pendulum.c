/* A hand-written C reference for bench/fixed_cost.py (issue 31, "per run"): the planar double
   pendulum of systems/double_pendulum.yaml, its right-hand side written by hand (the textbook
   equations in that file's description, the 2 × 2 system solved by Cramer's rule), integrated by
   DOP853 as scipy.integrate.DOP853 takes it (Hairer, Nørsett & Wanner, "Solving Ordinary
   Differential Equations I", §II.10; scipy/integrate/_ivp/rk.py and common.py): scipy's first-step
   selection, step-size control, error norm and dense output, with the samples read off the dense
   output as lagsim's C loop reads them. The bench prepends scipy's coefficients (DOP_S, DOP_SX,
   DOP_A, DOP_B, DOP_C, DOP_E3, DOP_E5, DOP_AX, DOP_CX, DOP_D) before compiling this text.

   dp_run(p, y0, t_end, rtol, atol, samples, out, stats): p = (m1, m2, l1, l2, g), y0 = (θ1, θ2,
   θ̇1, θ̇2) at t = 0; out receives samples rows (t, θ1, θ2, θ̇1, θ̇2) at equally spaced times
   from 0 to t_end; stats = (accepted steps, right-hand-side calls). Returns 0, or 1 when the step
   size fell below its minimum. */
#include <math.h>
#include <string.h>

#define N 4
#define MAXS 16

static void rhs(const double *p, double t, const double *y, double *f)
{
    double m1 = p[0], m2 = p[1], l1 = p[2], l2 = p[3], g = p[4];
    double c = cos(y[0] - y[1]), s = sin(y[0] - y[1]);
    double a11 = (m1 + m2) * l1 * l1, a12 = m2 * l1 * l2 * c, a22 = m2 * l2 * l2;
    double r1 = -m2 * l1 * l2 * s * y[3] * y[3] - (m1 + m2) * g * l1 * sin(y[0]);
    double r2 = m2 * l1 * l2 * s * y[2] * y[2] - m2 * g * l2 * sin(y[1]);
    double det = a11 * a22 - a12 * a12;
    (void)t;
    f[0] = y[2];
    f[1] = y[3];
    f[2] = (r1 * a22 - a12 * r2) / det;
    f[3] = (a11 * r2 - a12 * r1) / det;
}

static double norm(const double *x)
{
    double s = 0.0;
    int i;
    for (i = 0; i < N; i++) s += x[i] * x[i];
    return sqrt(s) / sqrt((double)N);
}

int dp_run(const double *p, const double *y0, double t_end, double rtol, double atol,
           int samples, double *out, long *stats)
{
    const int S = DOP_S;
    double K[(MAXS + 4) * N], F[7 * N], y[N], f[N], ynew[N], fnew[N], yold[N], ytmp[N];
    double scaled[N], t = 0.0, told = 0.0, h_abs, h = 0.0, d0, d1, d2, h0, h1;
    long nfev = 0, nsteps = 0;
    int i, j, s, k, sample = 1;
    memcpy(y, y0, sizeof y);
    out[0] = 0.0;
    memcpy(out + 1, y, sizeof y);
    rhs(p, t, y, f);
    /* select_initial_step (error order 7) */
    for (i = 0; i < N; i++) scaled[i] = y[i] / (atol + fabs(y[i]) * rtol);
    d0 = norm(scaled);
    for (i = 0; i < N; i++) scaled[i] = f[i] / (atol + fabs(y[i]) * rtol);
    d1 = norm(scaled);
    h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    if (t_end < h0) h0 = t_end;
    for (i = 0; i < N; i++) ytmp[i] = y[i] + h0 * f[i];
    rhs(p, t + h0, ytmp, fnew);
    for (i = 0; i < N; i++) scaled[i] = (fnew[i] - f[i]) / (atol + fabs(y[i]) * rtol);
    d2 = norm(scaled) / h0;
    h1 = (d1 <= 1e-15 && d2 <= 1e-15) ? fmax(1e-6, h0 * 1e-3)
         : pow(0.01 / fmax(d1, d2), 1.0 / 8.0);
    h_abs = fmin(fmin(100 * h0, h1), t_end);
    nfev = 2;
    while (t < t_end) {
        double min_step = 10.0 * fabs(nextafter(t, INFINITY) - t), t_new = t;
        int rejected = 0, dense = 0;
        if (h_abs < min_step) h_abs = min_step;
        for (;;) {
            double e5 = 0.0, e3 = 0.0, err;
            if (h_abs < min_step) return 1;
            t_new = t + h_abs;
            if (t_new > t_end) t_new = t_end;
            h = t_new - t;
            h_abs = fabs(h);
            memcpy(K, f, sizeof f);
            for (s = 1; s < S; s++) {
                for (i = 0; i < N; i++) {
                    double acc = 0.0;
                    for (j = 0; j < s; j++) acc += K[j * N + i] * DOP_A[s * S + j];
                    ytmp[i] = y[i] + acc * h;
                }
                rhs(p, t + DOP_C[s] * h, ytmp, K + s * N);
            }
            for (i = 0; i < N; i++) {
                double acc = 0.0;
                for (j = 0; j < S; j++) acc += K[j * N + i] * DOP_B[j];
                ynew[i] = y[i] + h * acc;
            }
            rhs(p, t + h, ynew, fnew);
            memcpy(K + S * N, fnew, sizeof fnew);
            nfev += S;
            for (i = 0; i < N; i++) {
                double a5 = 0.0, a3 = 0.0, scale = atol + fmax(fabs(y[i]), fabs(ynew[i])) * rtol;
                for (j = 0; j <= S; j++) { a5 += K[j * N + i] * DOP_E5[j];
                                           a3 += K[j * N + i] * DOP_E3[j]; }
                a5 /= scale; a3 /= scale;
                e5 += a5 * a5; e3 += a3 * a3;
            }
            err = (e5 == 0.0 && e3 == 0.0) ? 0.0 : fabs(h) * e5 / sqrt((e5 + 0.01 * e3) * N);
            if (err < 1.0) {
                double factor = err == 0.0 ? 10.0 : fmin(10.0, 0.9 * pow(err, -1.0 / 8.0));
                if (rejected) factor = fmin(1.0, factor);
                h_abs *= factor;
                break;
            }
            h_abs *= fmax(0.2, 0.9 * pow(err, -1.0 / 8.0));
            rejected = 1;
        }
        nsteps++;
        memcpy(yold, y, sizeof y);
        told = t;
        t = t_new;
        memcpy(y, ynew, sizeof y);
        memcpy(f, fnew, sizeof f);
        for (; sample < samples; sample++) {
            double ts = sample == samples - 1 ? t_end : sample * (t_end / (samples - 1)), x;
            double *row = out + 5 * sample;
            if (ts > t) break;
            row[0] = ts;
            if (ts == t) { memcpy(row + 1, y, sizeof y); continue; }
            if (!dense) {  /* Dop853DenseOutput: three more stages, then the 7 coefficients */
                for (k = 0; k < 3; k++) {
                    int st = S + 1 + k;
                    for (i = 0; i < N; i++) {
                        double acc = 0.0;
                        for (j = 0; j < st; j++) acc += K[j * N + i] * DOP_AX[k * DOP_SX + j];
                        ytmp[i] = yold[i] + acc * h;
                    }
                    rhs(p, told + DOP_CX[k] * h, ytmp, K + st * N);
                }
                nfev += 3;
                for (i = 0; i < N; i++) {
                    double dy = y[i] - yold[i];
                    F[i] = dy;
                    F[N + i] = h * K[i] - dy;
                    F[2 * N + i] = 2 * dy - h * (K[S * N + i] + K[i]);
                }
                for (k = 0; k < 4; k++)
                    for (i = 0; i < N; i++) {
                        double acc = 0.0;
                        for (j = 0; j < DOP_SX; j++) acc += DOP_D[k * DOP_SX + j] * K[j * N + i];
                        F[(3 + k) * N + i] = h * acc;
                    }
                dense = 1;
            }
            x = (ts - told) / h;
            for (i = 0; i < N; i++) {
                double v = 0.0;
                for (k = 0; k < 7; k++) {
                    v += F[(6 - k) * N + i];
                    v *= (k % 2 == 0) ? x : 1.0 - x;
                }
                row[1 + i] = v + yold[i];
            }
        }
    }
    stats[0] = nsteps;
    stats[1] = nfev;
    return 0;
}
