/* ---- impacts ---- */
/* The free flights of a system with unilateral contacts in C (issue 27): what
   lagsim.run.engines.impacts.ImpactLoop._fly does with scipy's solver, and the plain impacts
   between flights (ImpactLoop._impact, lagsim.run.contacts.Contacts.impact), for many flights
   per call. Appended to cloop.c's text (lagsim.run.engines.cloop), whose D steps each flight:
   DOP853, the guard, the samples and the projection of its loop, with each gap g_i followed by
   a Scan of its own (EventWatch.crossings of a FALLING terminal event) instead of --stop-when.

   At the earliest crossing that closes (or that free flight presses: a resting contact) the
   impact is made here when it is plain: the contact closes, it is the one candidate (no other
   closed and not separating), frictionless, the augmented matrix
   [[M, -Aᵀ, -G_jᵀ], [A, 0, 0], [G_j, 0, 0]] regular (LU of lagsim_lu_solve where Python takes
   numpy's lstsq: the same solution to rounding), Newton's law satisfied, and after it neither
   an accumulation (ImpactLoop._accumulation) nor a contact at rest (ImpactLoop._resting). The
   impact goes to the log, and the next flight starts with ImpactLoop._first_step's step.
   Anything else returns IMP_REDO, and Python steps the current flight again from its start
   (its own crossing, to the bit, then its own law; or the Python loop's error or message): a
   crossing Python's law is to take, a failure (a singular solve, a non-finite value, the mass
   check), a piece the scan could not resolve, a gap left negative. The log's rows, per
   impact: [rows written before it, the next sample index, t, contact, Λ, next first step (0:
   scipy's initial step), ġ⁻ (k), ġ⁺ (k), q̇⁻ (n), the row after it (N + m)]. */

#include "status.h"

/* The bounds of lagsim.run.contacts (CLOSED, RESTING) and lagsim.run.engines.impacts (UNSEEN,
   RATIO, ACCUMULATION, and ImpactLoop._through's on a gap left negative), given to
   lagsim_impacts_new in this order. */
enum { B_CLOSED, B_RESTING, B_UNSEEN, B_RATIO, B_ACCUMULATION, B_THROUGH, B_COUNT };

typedef struct Flights Flights;
typedef struct { Flights *c; int j; } GapRef;

struct Flights {
    D *d;
    lagsim_fn gaps;  /* (t, q, q̇) -> per contact [g, ∂g/∂q (n), ∂g/∂t, drift] */
    int k, n, *rough, *nhist;
    double *e, *hist, *gv, *gw, *gp, *in, *aug, *x, *ya, *yb, *fb, *qdd, *before, *after;
    Scan *scans;
    GapRef *refs;
    double bounds[B_COUNT];
    double t0, h0;  /* the current flight's start and first step */
    int k0;
};

static double imp_sign(double v) { return v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0); }

/* The gaps' rows at (t, y) into out (k (n + 3)). */
static void gaps_at(Flights *c, double t, const double *y, double *out)
{
    c->in[0] = t;
    memcpy(c->in + 1, y, 2 * c->n * sizeof(double));
    c->gaps(c->in, c->d->p, out);
}

/* g_j at the state (t, y) (Scan.at). */
static double gap_state(void *ctx, double t, const double *y, int *bad)
{
    GapRef *r = ctx;
    Flights *c = r->c;
    (void)bad;
    gaps_at(c, t, y, c->gw);
    return c->gw[r->j * (c->n + 3)];
}

/* g_j at s on the step's dense output (Scan.g). */
static double gap_dense(void *ctx, double s, int *bad)
{
    GapRef *r = ctx;
    D *d = r->c->d;
    if (dense(d, s, d->ys)) { *bad = 1; return NAN; }
    return gap_state(ctx, s, d->ys, bad);
}

static double max_abs(int n, const double *v)
{
    double most = 0.0;
    int i;
    for (i = 0; i < n; i++) most = dmax(most, fabs(v[i]));
    return most;
}

/* ġ_i = G_i q̇ + g_t,i and Σ_j |G_ij q̇_j| + |g_t,i| from the rows gv (Contacts.rates,
   Contacts.sizes). */
static double gap_rate(const Flights *c, const double *gv, int i, const double *qd, double *size)
{
    const double *row = gv + i * (c->n + 3);
    double rate = 0.0, sz = 0.0;
    int j;
    for (j = 0; j < c->n; j++) { rate += row[1 + j] * qd[j]; sz += fabs(row[1 + j] * qd[j]); }
    if (size) *size = sz + fabs(row[1 + c->n]);
    return rate + row[1 + c->n];
}

/* g̈ of free flight at the state y = (q, q̇) (ImpactLoop._free_gap_acceleration) into gdd (k),
   q̇ and q̈ into c->qdd: 0, or 1 for a singular solve. gv: the gaps' rows at y. */
static int free_gap_acc(Flights *c, double t, const double *y, const double *gv, double *gdd)
{
    int n = c->n, i, j;
    if (rhs(c->d, t, y, c->qdd)) return 1;
    for (i = 0; i < c->k; i++) {
        const double *row = gv + i * (n + 3);
        double acc = 0.0;
        for (j = 0; j < n; j++) acc += row[1 + j] * c->qdd[n + j];
        gdd[i] = acc + row[2 + n];
    }
    return 0;
}

/* Whether gap i, fallen through 0 at (t, y), is a hit: it closes (Contacts.closing) or free
   flight presses it at rest (ImpactLoop._open's negation); -1 for a singular solve. */
static int gap_hits(Flights *c, double t, const double *y, int i)
{
    int n = c->n;
    double size, rate, g, *gdd = c->qdd + c->d->N;
    gaps_at(c, t, y, c->gp);
    rate = gap_rate(c, c->gp, i, y + n, &size);
    if (rate < -c->bounds[B_RESTING] * (1.0 + size)) return 1;
    g = c->gp[i * (n + 3)];
    if (!(g <= c->bounds[B_CLOSED] * (1.0 + max_abs(n, y)))
        || !(fabs(rate) <= c->bounds[B_RESTING] * (1.0 + fabs(size))))
        return 0;
    if (free_gap_acc(c, t, y, c->gp, gdd)) return -1;
    return gdd[i] < 0.0;
}

/* Start a flight at (t, y) with the first step h (0: scipy's select_initial_step), as
   make_solver and the EventWatch of each gap do; the guard goes on. 0 or RUN_SINGULAR. */
static int flight_start(Flights *c, double t, const double *y, double h, int k0)
{
    D *d = c->d;
    int j, bad = 0;
    d->t = t; d->t_old = t; d->finished = t == d->t_bound;
    memcpy(d->y, y, d->N * sizeof(double));
    c->t0 = t; c->h0 = h; c->k0 = k0;
    memcpy(c->ya, y, d->N * sizeof(double));
    if (rhs(d, t, d->y, d->f)) return RUN_SINGULAR;
    d->h_abs = h > 0.0 ? h : initial_step(d, t, &bad);
    if (bad) return RUN_SINGULAR;
    gaps_at(c, t, y, c->gv);
    for (j = 0; j < c->k; j++) {
        Scan *s = c->scans + j;
        memset(s, 0, sizeof(Scan));
        s->sign = imp_sign(c->gv[j * (c->n + 3)]);
        s->g = gap_dense; s->at = gap_state; s->ctx = c->refs + j;
        s->work = d->sw; s->N = d->N; s->falling = 1;
    }
    return 0;
}

void *lagsim_impacts_new(void *loop, void *gaps, int k, const double *e, const int *rough,
                         const double *bounds)
{
    D *d = loop;
    int n = d->n, s = n + d->m + 1, N = d->N, j;
    size_t total = (size_t)k * (3 * (n + 3) + 4 + 3) + (size_t)s * s + 2 * (size_t)s
        + 6 * (size_t)N + 64;
    Flights *c = calloc(1, sizeof(Flights));
    double *w = calloc(total, sizeof(double));
    int *iw = calloc(2 * (size_t)k + 1, sizeof(int));
    Scan *scans = calloc((size_t)k + 1, sizeof(Scan));
    GapRef *refs = calloc((size_t)k + 1, sizeof(GapRef));
    if (!c || !w || !iw || !scans || !refs) {
        free(c); free(w); free(iw); free(scans); free(refs);
        return NULL;
    }
    c->d = d; c->gaps = (lagsim_fn)gaps; c->k = k; c->n = n;
    memcpy(c->bounds, bounds, sizeof c->bounds);
    c->rough = iw; c->nhist = iw + k; c->scans = scans; c->refs = refs;
#define TAKE(ptr, size) do { c->ptr = w; w += (size); } while (0)
    TAKE(e, k); TAKE(hist, 4 * k); TAKE(gv, k * (n + 3)); TAKE(gw, k * (n + 3));
    TAKE(gp, k * (n + 3)); TAKE(before, k); TAKE(after, k); TAKE(in, 1 + 2 * n);
    TAKE(aug, s * s); TAKE(x, s); TAKE(ya, N); TAKE(yb, N); TAKE(fb, N); TAKE(qdd, N + k);
#undef TAKE
    for (j = 0; j < k; j++) {
        c->e[j] = e[j]; c->rough[j] = rough[j];
        refs[j].c = c; refs[j].j = j;
    }
    return c;
}

void lagsim_impacts_free(void *handle)
{
    Flights *c = handle;
    if (!c) return;
    free(c->e);
    free(c->rough);
    free(c->scans);
    free(c->refs);
    free(c);
}

/* The last impact times of contact i (ImpactLoop.history), the last min(count, 4). */
void lagsim_impacts_history(void *handle, int i, const double *times, int count)
{
    Flights *c = handle;
    int j, take = count < 4 ? count : 4;
    for (j = 0; j < take; j++) c->hist[4 * i + j] = times[count - take + j];
    c->nhist[i] = take;
}

/* Start the next flight at (t, y) with the first step h (0: scipy's initial step) at the
   sample index k0: 0 or RUN_SINGULAR. */
int lagsim_impacts_start(void *handle, double t, const double *y, double h, int k0)
{
    return flight_start(handle, t, y, h, k0);
}

/* Whether the impacts of contact j accumulate after the impact at t whose state after it is
   y with the gaps' rows gv (ImpactLoop._accumulation), a the free gap acceleration's −g̈_j. */
static int accumulates(const Flights *c, int j, double t, const double *y, double rate, double a)
{
    double e = c->e[j], tau, d[3], times[5];
    int count = c->nhist[j], unseen, geometric = 1, i;
    if (!(0.0 < e && e < 1.0)) return 0;
    if (!(a > 0.0 && rate >= 0.0)) return 0;
    tau = 2.0 * rate / (a * (1.0 - e));
    unseen = rate * rate / (2.0 * a) <= c->bounds[B_UNSEEN] * (1.0 + max_abs(c->n, y));
    for (i = 0; i < count; i++) times[i] = c->hist[4 * j + i];
    times[count++] = t;
    if (count < 4 && !unseen) return 0;
    if (count < 4) return unseen;
    for (i = 0; i < 3; i++) d[i] = times[count - 3 + i] - times[count - 4 + i];
    for (i = 0; i < 2; i++) geometric &= fabs(d[i + 1] / d[i] / e - 1.0) <= c->bounds[B_RATIO];
    return unseen || (geometric && tau <= c->bounds[B_ACCUMULATION] * (1.0 + fabs(t)));
}

/* The plain impact of contact j at (t, y) (the module's comment): 1 with the log's row made
   and the next flight started, 0 when Python is to apply the law, -1 for a singular solve. */
static int plain_impact(Flights *c, double t, const double *y, int j, double h, int kk,
                        int kk2, double *entry)
{
    D *d = c->d;
    int n = c->n, m = d->m, s = n + m + 1, N = d->N, i, l, code;
    const double *q = y, *qd = y + n, *M, *A, *cv, *gj;
    double scale = 1.0, target, impulse, a, rate, size, *qd_after, *row;
    double *gdd = c->qdd + N;
    if (c->rough[j]) return 0;
    gaps_at(c, t, y, c->gp);
    rate = gap_rate(c, c->gp, j, qd, &size);
    if (!(rate < -c->bounds[B_RESTING] * (1.0 + size))) return 0;  /* to hold: not closing */
    for (i = 0; i < c->k; i++) {
        c->before[i] = gap_rate(c, c->gp, i, qd, NULL);
        scale = dmax(scale, 1.0 + fabs(c->before[i]));
    }
    for (i = 0; i < c->k; i++)
        if (i != j && c->gp[i * (n + 3)] <= c->bounds[B_CLOSED] * (1.0 + max_abs(n, q))
            && c->before[i] <= 0.0)
            return 0;
    gj = c->gp + j * (n + 3);
    target = -c->e[j] * c->before[j];
    eval_dynamics(d, t, q, qd);
    M = d->dynv;
    d->in[0] = t;
    memcpy(d->in + 1, q, n * sizeof(double));
    if (m) d->vel(d->in, d->p, d->velv);
    A = d->velv; cv = d->velv + m * n;
    memset(c->aug, 0, (size_t)s * s * sizeof(double));
    for (i = 0; i < n; i++) {
        double acc = 0.0;
        for (l = 0; l < n; l++) { c->aug[i * s + l] = M[i * n + l]; acc += M[i * n + l] * qd[l]; }
        for (l = 0; l < m; l++) c->aug[i * s + n + l] = -A[l * n + i];
        c->aug[i * s + n + m] = -gj[1 + i];
        c->x[i] = acc;
    }
    for (l = 0; l < m; l++) {
        for (i = 0; i < n; i++) c->aug[(n + l) * s + i] = A[l * n + i];
        c->x[n + l] = -cv[l];
    }
    for (i = 0; i < n; i++) c->aug[(n + m) * s + i] = gj[1 + i];
    c->x[n + m] = target - gj[1 + n];
    if (lagsim_lu_solve(s, 1, c->aug, c->x)) return 0;
    impulse = c->x[n + m];
    qd_after = c->yb + n;
    memcpy(c->yb, q, n * sizeof(double));
    memcpy(qd_after, c->x, n * sizeof(double));
    if (!(impulse >= -1e-12 * scale)) return 0;
    if (!(gap_rate(c, c->gp, j, qd_after, NULL) - target >= -1e-12 * scale)) return 0;
    /* after the jump: the rows there, the free gap accelerations, the accumulation and the
       contacts at rest (ImpactLoop._impact) */
    gaps_at(c, t, c->yb, c->gw);
    if (free_gap_acc(c, t, c->yb, c->gw, gdd)) return -1;
    for (i = 0; i < c->k; i++) {
        c->after[i] = gap_rate(c, c->gw, i, qd_after, NULL);
        if (c->gw[i * (n + 3)] <= c->bounds[B_CLOSED] * (1.0 + max_abs(n, q))
            && fabs(c->after[i]) <= c->bounds[B_RESTING] * (1.0 + fabs(c->before[i]))
            && gdd[i] < 0.0)
            return 0;
    }
    rate = c->after[j];
    a = -gdd[j];
    if (accumulates(c, j, t, c->yb, rate, a)) return 0;
    /* ImpactLoop._first_step */
    if (a > 0.0 && rate > 0.0) h = fmin(h > 0.0 ? h : INFINITY, 0.5 * (2.0 * rate / a));
    row = entry + 6 + 2 * c->k + n;
    memcpy(row, c->yb, N * sizeof(double));
    if (m && d->form != FORM_ODE) {
        if (accelerations(d, t, row, row + n, d->acc, row + N, 0)) return -1;
    }
    entry[0] = kk; entry[1] = kk2; entry[2] = t; entry[3] = j; entry[4] = impulse;
    entry[5] = h;
    memcpy(entry + 6, c->before, c->k * sizeof(double));
    memcpy(entry + 6 + c->k, c->after, c->k * sizeof(double));
    memcpy(entry + 6 + 2 * c->k, qd, n * sizeof(double));
    if (c->nhist[j] == 4) {
        memmove(c->hist + 4 * j, c->hist + 4 * j + 1, 3 * sizeof(double));
        c->nhist[j] = 3;
    }
    c->hist[4 * j + c->nhist[j]++] = t;
    code = flight_start(c, t, c->yb, h, kk2);
    return code ? -1 : 1;
}

/* Steps and flights until the sample times times[*k..] are written to rows (N + m values a
   row), the run ends, Python is needed (IMP_REDO) or max_steps steps were taken; each plain
   impact is a row of log (a full log of maxlog rows ends the call, *nlog made). state out at
   IMP_REDO: [t0, y0 (N), k0, h0] of the current flight. Returns RUN_MORE, RUN_DONE or
   IMP_REDO. */
int lagsim_impacts_run(void *handle, const double *times, int ntimes, int *k, double *rows,
                       int max_steps, lagsim_result *res, double *state, double *log,
                       int maxlog, int *nlog)
{
    Flights *c = handle;
    D *d = c->d;
    int N = d->N, n = c->n, W = N + d->m, steps, code = RUN_MORE, j, entry = 6 + 2 * c->k + n + W;
    *nlog = 0;
    for (steps = 0; steps < max_steps && !d->finished; steps++) {
        double hit_t = INFINITY, h, size;
        int hit = -1;
        code = dop853_step(d);
        if (code) goto redo;
        if (!all_finite(N, d->y_raw)) goto redo;
        h = d->guard_h;
        d->guard_h = d->t - d->t_old;
        d->unchecked++;
        if (d->unchecked >= d->mass_every || d->guard_h < 0.5 * h) {
            d->unchecked = 0;
            if (!mass_regular(d, d->t, d->y_raw)) goto redo;
            d->regular_at = d->t;
        }
        /* EventWatch.crossings of each gap, ImpactLoop._fly's earliest hit */
        gaps_at(c, d->t, d->y_raw, c->gv);
        for (j = 0; j < c->k; j++) {
            Scan *s = c->scans + j;
            double g = c->gv[j * (n + 3)];
            int hits;
            if (!isfinite(g)) goto redo;
            s->zero = c->bounds[B_CLOSED] * (1.0 + max_abs(n, d->y_raw));
            scan_step(s, d->t_old, d->y_old, d->K, d->t, g, d->y_raw, d->f);
            if (s->bad || s->missed) goto redo;
            if (!s->found || !(s->end < hit_t)) continue;
            if (dense(d, s->end, c->yb)) goto redo;
            hits = gap_hits(c, s->end, c->yb, j);
            if (hits < 0) goto redo;
            if (hits) { hit = j; hit_t = s->end; }
        }
        if (hit >= 0) {
            int kk, kk2, done;
            while (*k < ntimes && times[*k] < hit_t) {
                if (sample(d, times[*k], rows + (size_t)(*k) * W, res)) goto redo;
                (*k)++;
            }
            if (dense(d, hit_t, c->yb)) goto redo;
            memcpy(c->fb, c->yb, N * sizeof(double));
            size = fmin(d->t - d->t_old, d->t_bound - hit_t);
            kk = *k;
            done = 0;
            kk2 = kk;
            while (kk2 < ntimes && times[kk2] <= hit_t) kk2++;
            done = plain_impact(c, hit_t, c->fb, hit, size, kk, kk2,
                                log + (size_t)(*nlog) * entry);
            if (done <= 0) goto redo;
            *k = kk2;
            if (++*nlog == maxlog) { code = RUN_MORE; goto out; }  /* the log is full */
            continue;
        }
        /* ImpactLoop._through */
        for (j = 0; j < c->k; j++)
            if (c->gv[j * (n + 3)] < -c->bounds[B_THROUGH] * (1.0 + max_abs(n, d->y_raw)))
                goto redo;
        while (*k < ntimes && times[*k] <= d->t) {
            if (sample(d, times[*k], rows + (size_t)(*k) * W, res)) goto redo;
            (*k)++;
        }
        if (projects(d)) {
            code = project(d, d->t, d->y_raw, d->ys);
            if (code) goto redo;
            if (!d->finished) {
                memcpy(d->y, d->ys, N * sizeof(double));
                if (rhs(d, d->t, d->y, d->f)) goto redo;
                d->nfev++;
            }
        }
    }
    code = d->finished ? RUN_DONE : RUN_MORE;
    goto out;
redo:
    state[0] = c->t0;
    memcpy(state + 1, c->ya, N * sizeof(double));
    state[1 + N] = c->k0; state[2 + N] = c->h0;
    code = IMP_REDO;
out:
    res->t = d->t; res->regular_at = d->regular_at; res->nfev = d->nfev;
    res->nsteps = d->nsteps; res->h_abs = d->h_abs;
    return code;
}
