#include "status.h"

/* The step loop shared by the fixed-step methods. state: the method's state (FS_STATE values);
   times: the sample times; *taken: how many are done (in and out); out: FS_ROW values per
   sample (q, then v). Steps k0 .. k0 + nsteps - 1 of size h from t0 + k0 h; with nsteps == 0
   the remaining samples are taken by partial steps from the current state. Returns 0, or the
   failing step's STEP_ code (*failed_at: its time). */
int lagsim_fs_run(double t0, double h, long k0, long nsteps, double *state,
                  const double *times, long ntimes, long *taken, double *out,
                  const double *aux, const double *p, double *failed_at)
{
    double next[FS_STATE], part[FS_STATE];
    long s;
    int code, i;
    for (s = 0; s <= nsteps; s++) {
        double t = t0 + (double)(k0 + s) * h, t1 = t0 + (double)(k0 + s + 1) * h;
        double limit = (s == nsteps) ? (nsteps == 0 ? INFINITY : -INFINITY)
                                     : t1 - FS_EPS * h;
        while (*taken < ntimes && times[*taken] < limit) {
            double dt = times[*taken] - t;
            if (dt <= FS_EPS * h) {
                fs_row(state, out + *taken * FS_ROW);
            } else {
                code = fs_step(t, dt, state, part, aux, p);
                if (code) { *failed_at = times[*taken]; return code; }
                fs_row(part, out + *taken * FS_ROW);
            }
            (*taken)++;
        }
        if (s == nsteps) break;
        code = fs_step(t, h, state, next, aux, p);
        if (code) { *failed_at = t1; return code; }
        for (i = 0; i < FS_STATE; i++)
            if (!isfinite(next[i])) { *failed_at = t1; return STEP_NONFINITE; }
        memcpy(state, next, FS_STATE * sizeof(double));
        while (*taken < ntimes && times[*taken] <= t1 + FS_EPS * h) {
            fs_row(state, out + *taken * FS_ROW);
            (*taken)++;
        }
    }
    return 0;
}
