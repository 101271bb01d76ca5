/* One accepted DOP853 step, the algorithm of scipy's RungeKutta._step_impl with DOP853's
   error norm, stage for stage (lagsim.numeric.ccompile prints scipy's coefficients DOP_A, DOP_B,
   DOP_C, DOP_E3, DOP_E5 exactly before this text).
   res: in h_abs; out t_new, h, h_abs, nfev; p: the parameters. Returns 0 (accepted),
   RUN_SMALL (step too small) or RUN_SINGULAR (singular mass matrix). K: @STAGES@ + 1 rows of
   @STATES@. Slots filled by lagsim.numeric.ccompile: STATES = 2 n, STAGES (DOP853's 12). */
#include "status.h"

int lagsim_dop853_step(double t, const double *y, const double *f, double t_bound,
                       double direction, double rtol, const double *atol, double max_step,
                       double *K, double *y_new, double *f_new, lagsim_step *res, const double *p)
{
    const int N = @STATES@, S = @STAGES@;
    double ytmp[@STATES@], h_abs = res->h_abs, h, t_new;
    long nfev = 0;
    double min_step = 10.0 * fabs(nextafter(t, direction * INFINITY) - t);
    int i, j, s, rejected = 0;
    if (h_abs > max_step) h_abs = max_step;
    else if (h_abs < min_step) h_abs = min_step;
    for (;;) {
        double e5 = 0.0, e3 = 0.0, err;
        if (h_abs < min_step) return RUN_SMALL;
        h = h_abs * direction;
        t_new = t + h;
        if (direction * (t_new - t_bound) > 0) t_new = t_bound;
        h = t_new - t;
        h_abs = fabs(h);
        memcpy(K, f, N * sizeof(double));
        for (s = 1; s < S; s++) {
            for (i = 0; i < N; i++) {
                double acc = 0.0;
                for (j = 0; j < s; j++) acc += K[j * N + i] * DOP_A[s * S + j];
                ytmp[i] = y[i] + acc * h;
            }
            if (lagsim_ode_rhs(t + DOP_C[s] * h, ytmp, K + s * N, p)) return RUN_SINGULAR;
        }
        for (i = 0; i < N; i++) {
            double acc = 0.0;
            for (j = 0; j < S; j++) acc += K[j * N + i] * DOP_B[j];
            y_new[i] = y[i] + h * acc;
        }
        if (lagsim_ode_rhs(t + h, y_new, f_new, p)) return RUN_SINGULAR;
        memcpy(K + S * N, f_new, N * sizeof(double));
        nfev += S;
        for (i = 0; i < N; i++) {
            double a5 = 0.0, a3 = 0.0;
            double scale = atol[i] + fmax(fabs(y[i]), fabs(y_new[i])) * rtol;
            for (j = 0; j <= S; j++) { a5 += K[j * N + i] * DOP_E5[j];
                                       a3 += K[j * N + i] * DOP_E3[j]; }
            a5 /= scale; a3 /= scale;
            e5 += a5 * a5; e3 += a3 * a3;
        }
        err = (e5 == 0.0 && e3 == 0.0) ? 0.0
              : fabs(h) * e5 / sqrt((e5 + 0.01 * e3) * N);
        if (err < 1.0) {
            double factor = err == 0.0 ? 10.0 : fmin(10.0, 0.9 * pow(err, -1.0 / 8.0));
            if (rejected) factor = fmin(1.0, factor);
            h_abs *= factor;
            break;
        }
        h_abs *= fmax(0.2, 0.9 * pow(err, -1.0 / 8.0));
        rejected = 1;
    }
    res->t_new = t_new; res->h = h; res->h_abs = h_abs; res->nfev = nfev;
    return 0;
}
