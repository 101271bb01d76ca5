/* fmucore.h: what the FMI 2.0 (fmu.c) and FMI 3.0 (fmu3.c) interfaces of the model "@NAME@"
   (lagsim @VERSION@) share, over the standalone C of @P@.h: the instance, its values by value
   reference (the states 0..NY-1, their derivatives NY..2NY-1, the parameters 2NY..2NY+NP-1,
   the outputs after them: the order of @P@.h and of modelDescription.xml), the consistent
   start at the end of initialization, the directional derivatives and the Co-Simulation step,
   and (CORE_ADAPTERS) the FMI functions whose two versions differ only in their names and types.
   Each wrapper defines log_message (how its logger is called) after including this file.
   Codes: CORE_OK, CORE_ERROR, CORE_DISCARD (the wrappers' OK, Error and Discard). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "@P@.h"

#define NY @P@_NY
#define NP @P@_NP
#define NOUT @P@_NOUT
#define VR_DER NY
#define VR_PAR (2 * NY)
#define VR_OUT (2 * NY + NP)
#define VR_END (2 * NY + NP + NOUT)
#define CORE_OK 0
#define CORE_ERROR 1
#define CORE_DISCARD 2

typedef struct {
    double t, h, rtol;
    double y[NY], p[NP];
    int failed, continuous, terminated, logging, early;
    unsigned char set[NY];
    void *logger, *environment;
    char name[128];
} Instance;

static void log_message(Instance *c, int error, const char *category, const char *message);

static void say(Instance *c, const char *message) { log_message(c, 1, "error", message); }

static void reset(Instance *c)
{
    c->t = 0.0; c->h = 0.0; c->rtol = 1e-10; c->failed = 0; c->continuous = 0;
    c->terminated = 0;
    memset(c->set, 0, sizeof c->set);
    memcpy(c->y, @P@_state_start, sizeof c->y);
    memcpy(c->p, @P@_parameter_start, sizeof c->p);
}

/* The experiment's tolerance (lagsim simulate's 1e-10 unless given) and start time
   (fmi2SetupExperiment, fmi3EnterInitializationMode). */
static void setup_experiment(Instance *m, int tolerance_defined, double tolerance, double start)
{
    if (tolerance_defined && tolerance > 0) m->rtol = tolerance;
    m->t = start;
}

static Instance *instance_new(const char *name, void *logger, void *environment, int logging)
{
    Instance *c = (Instance *)calloc(1, sizeof(Instance));
    if (!c) return NULL;
    c->logger = logger;
    c->environment = environment;
    c->logging = logging ? 1 : 0;
    snprintf(c->name, sizeof c->name, "%s", name ? name : "@P@");
    reset(c);
    return c;
}

/* The states not set before (fmi2SetReal, fmi3SetFloat64) start at the file's initial values
   at the parameters set (@P@_initial: an initial value written as an expression in parameters
   follows them, as under --set). A constrained start is then moved onto the constraints, as
   lagsim simulate moves it
   (@P@_consistent_start): a state set before (fmi2SetReal, fmi3SetFloat64) is given, as
   --init NAME=VALUE is; the others start from the file's initial values (given where the file
   gives them, computed from the constraints otherwise). Each moved value is logged (category
   "info") when logging is on; a start that cannot be made consistent is an error with the
   reason logged. */
static int exit_initialization(Instance *m)
{
    unsigned char given[NY];
    double before[NY];
    char why[512], text[600];
    int i;
    @P@_initial(m->p, before);
    for (i = 0; i < NY; i++)
        if (!m->set[i]) m->y[i] = before[i];
    if (@P@_M == 0) return CORE_OK;
    for (i = 0; i < NY; i++) {
        given[i] = m->set[i] || @P@_state_given[i];
    }
    memcpy(before, m->y, sizeof before);
    if (@P@_consistent_start(m->t, m->y, m->p, given, why, sizeof why)) {
        say(m, why);
        return CORE_ERROR;
    }
    for (i = 0; m->logging && i < NY; i++)
        if (fabs(m->y[i] - before[i]) > 1e-12) {
            snprintf(text, sizeof text, "initial %s: %.17g -> %.17g (%s)", @P@_state_names[i],
                     before[i], m->y[i], given[i] ? "moved onto the constraints"
                                                  : "computed from the constraints");
            log_message(m, 0, "info", text);
        }
    return CORE_OK;
}

static int value(Instance *c, unsigned int vr, double *v)
{
    double buf[NY > NOUT ? NY : NOUT];
    if (vr < NY) { *v = c->y[vr]; return CORE_OK; }
    if (vr < VR_PAR) {
        if (@P@_rhs(c->t, c->y, c->p, buf)) {
            say(c, "a singular linear system (the mass matrix or the constraints)");
            return CORE_ERROR;
        }
        *v = buf[vr - VR_DER];
        return CORE_OK;
    }
    if (vr < VR_OUT) { *v = c->p[vr - VR_PAR]; return CORE_OK; }
    if (vr < VR_END) {
        if (@P@_outputs(c->t, c->y, c->p, buf)) {
            say(c, "a singular linear system (the mass matrix or the constraints)");
            return CORE_ERROR;
        }
        *v = buf[vr - VR_OUT];
        return CORE_OK;
    }
    say(c, "no such value reference");
    return CORE_ERROR;
}

static int set_value(Instance *m, unsigned int vr, double v)
{
    if (vr < NY) {
        m->y[vr] = v;
        m->set[vr] = 1;
    } else if (vr >= VR_PAR && vr < VR_OUT && @P@_parameter_derived[vr - VR_PAR]) {
        say(m, "a calculated parameter is computed from the other parameters; set those");
        return CORE_ERROR;
    } else if (vr >= VR_PAR && vr < VR_OUT) {
        m->p[vr - VR_PAR] = v;
        @P@_derive(m->p);
    } else {
        say(m, "this variable cannot be set");
        return CORE_ERROR;
    }
    m->h = 0.0;
    return CORE_OK;
}

/* An event after continuous time is the --stop-when indicator's crossing (the FMU has no
   other events): the simulation ends there, as lagsim simulate --stop-when ends. */
static int ends_at_event(const Instance *m) { return @P@_NEVENT > 0 && m->continuous; }

static int derivatives(Instance *m, double *dx)
{
    if (@P@_rhs(m->t, m->y, m->p, dx)) {
        say(m, "a singular linear system (the mass matrix or the constraints)");
        return CORE_ERROR;
    }
    return CORE_OK;
}

static int indicators(Instance *m, double *g)
{
    if (@P@_NEVENT && @P@_event(m->t, m->y, m->p, g)) {
        say(m, "a singular linear system (the mass matrix or the constraints)");
        return CORE_ERROR;
    }
    return CORE_OK;
}

/* d(unknowns)/d(knowns) . dv. Derivatives with respect to states: the symbolic Jacobian
   (@P@_jacobian). Any other pair (an output, or a parameter or an input as known): a central
   difference along dv, step 1e-6 (1 + |known|). */
static double *known_slot(Instance *m, unsigned int vr)
{
    if (vr < NY) return &m->y[vr];
    if (vr >= VR_PAR && vr < VR_OUT && !@P@_parameter_derived[vr - VR_PAR])
        return &m->p[vr - VR_PAR];
    return NULL;
}

static int directional(Instance *m, const unsigned int u[], size_t nu, const unsigned int z[],
                       size_t nz, const double dv[], double dz[])
{
    size_t i, j;
    int exact = 1;
    for (i = 0; i < nu; i++) exact &= u[i] >= VR_DER && u[i] < VR_PAR;
    for (j = 0; j < nz; j++) {
        if (!known_slot(m, z[j])) {
            say(m, "a known of a directional derivative must be a state, a parameter (not a "
                   "calculated one) or an input");
            return CORE_ERROR;
        }
        exact &= z[j] < NY;
    }
    if (exact) {
        double J[NY * NY];
        if (@P@_jacobian(m->t, m->y, m->p, J)) {
            say(m, "a singular linear system (the mass matrix or the constraints)");
            return CORE_ERROR;
        }
        for (i = 0; i < nu; i++) {
            dz[i] = 0.0;
            for (j = 0; j < nz; j++) dz[i] += J[(u[i] - VR_DER) * NY + z[j]] * dv[j];
        }
        return CORE_OK;
    } else {
        Instance saved = *m;
        double scale = 0.0, h, plus;
        for (j = 0; j < nz; j++) scale = fmax(scale, fabs(*known_slot(m, z[j])));
        h = 1e-6 * (1.0 + scale);
        for (i = 0; i < nu; i++) {
            for (j = 0; j < nz; j++) *known_slot(m, z[j]) += h * dv[j];
            @P@_derive(m->p);
            if (value(m, u[i], &plus) != CORE_OK) { *m = saved; return CORE_ERROR; }
            *m = saved;
            for (j = 0; j < nz; j++) *known_slot(m, z[j]) -= h * dv[j];
            @P@_derive(m->p);
            if (value(m, u[i], &dz[i]) != CORE_OK) { *m = saved; return CORE_ERROR; }
            *m = saved;
            dz[i] = (plus - dz[i]) / (2.0 * h);
        }
        return CORE_OK;
    }
}

/* Co-Simulation: integrate from t over h with @P@_integrate_until (DOP853 at the experiment's
   tolerance); CORE_DISCARD when the --stop-when crossing ended the run there (m->terminated,
   m->t the crossing). */
static int do_step(Instance *m, double t, double h)
{
    int code, stopped = 0;
    if (m->terminated) return CORE_DISCARD;
    m->t = t;
    code = @P@_integrate_until(&m->t, m->y, t + h, m->p, m->rtol, m->rtol, &m->h, &stopped);
    if (code) {
        char text[160];
        snprintf(text, sizeof text, "the integration failed at t = %.17g (%s)", m->t,
                 code == 3 ? "the step size fell below the spacing of the numbers"
                 : code == 4 ? "the projection onto the constraints did not converge"
                             : "a singular linear system");
        say(m, text);
        m->failed = 1;
        return CORE_ERROR;
    }
    if (stopped) {
        m->terminated = 1;
        return CORE_DISCARD;
    }
    return CORE_OK;
}

static int state_copy(Instance *m, void **state)
{
    Instance *copy = (Instance *)(*state ? *state : malloc(sizeof(Instance)));
    if (!copy) return CORE_ERROR;
    memcpy(copy, m, sizeof(Instance));
    *state = copy;
    return CORE_OK;
}

static int state_deserialize(const unsigned char in[], size_t size, void **state)
{
    Instance *copy;
    if (size < sizeof(Instance) || !(copy = (Instance *)malloc(sizeof(Instance))))
        return CORE_ERROR;
    memcpy(copy, in, sizeof(Instance));
    *state = copy;
    return CORE_OK;
}


/* The FMI functions of both versions that differ only in their names and types, and the
   status of each CORE_ code (STATUS): V the version's prefix (fmi2, fmi3), C the instance type,
   R the real type, S how the FMU state is spelt (FMUstate, FMUState), DESERIALIZE how its
   deserializer is (DeSerialize, Deserialize), DERIVATIVES the getter of the state derivatives
   (GetDerivatives, GetContinuousStateDerivatives). Each wrapper expands it once. */
#define CORE_ADAPTERS(V, C, R, S, DESERIALIZE, DERIVATIVES) \
static const V##Status STATUS[] = {V##OK, V##Error, V##Discard}; \
\
static V##Status none(C c, size_t n) \
{ \
    if (n == 0) return V##OK; \
    say((Instance *)c, "the FMU has no variables of this type"); \
    return V##Error; \
} \
\
V##Status V##SetDebugLogging(C c, V##Boolean on, size_t n, const V##String categories[]) \
{ \
    (void)n; (void)categories; \
    ((Instance *)c)->logging = on ? 1 : 0; \
    return V##OK; \
} \
\
void V##FreeInstance(C c) { free(c); } \
V##Status V##ExitInitializationMode(C c) \
{ \
    return STATUS[exit_initialization((Instance *)c)]; \
} \
V##Status V##EnterEventMode(C c) { (void)c; return V##OK; } \
V##Status V##Terminate(C c) { (void)c; return V##OK; } \
V##Status V##Reset(C c) { reset((Instance *)c); return V##OK; } \
\
V##Status V##Get##S(C c, V##S *state) \
{ \
    return STATUS[state_copy((Instance *)c, state)]; \
} \
\
V##Status V##Set##S(C c, V##S state) \
{ \
    memcpy(c, state, sizeof(Instance)); \
    return V##OK; \
} \
\
V##Status V##Free##S(C c, V##S *state) \
{ \
    (void)c; \
    free(*state); \
    *state = NULL; \
    return V##OK; \
} \
\
V##Status V##Serialized##S##Size(C c, V##S state, size_t *size) \
{ \
    (void)c; (void)state; \
    *size = sizeof(Instance); \
    return V##OK; \
} \
\
V##Status V##Serialize##S(C c, V##S state, V##Byte out[], size_t size) \
{ \
    (void)c; \
    if (size < sizeof(Instance)) return V##Error; \
    memcpy(out, state, sizeof(Instance)); \
    return V##OK; \
} \
\
V##Status V##DESERIALIZE##S(C c, const V##Byte in[], size_t size, V##S *state) \
{ \
    (void)c; \
    return STATUS[state_deserialize((const unsigned char *)in, size, state)]; \
} \
\
V##Status V##EnterContinuousTimeMode(C c) \
{ \
    ((Instance *)c)->continuous = 1; \
    return V##OK; \
} \
\
V##Status V##CompletedIntegratorStep(C c, V##Boolean noSetFMUStatePriorToCurrentPoint, \
                                     V##Boolean *enterEventMode, \
                                     V##Boolean *terminateSimulation) \
{ \
    (void)c; (void)noSetFMUStatePriorToCurrentPoint; \
    *enterEventMode = V##False; \
    *terminateSimulation = V##False; \
    return V##OK; \
} \
\
V##Status V##SetTime(C c, R time) \
{ \
    ((Instance *)c)->t = time; \
    return V##OK; \
} \
\
V##Status V##SetContinuousStates(C c, const R x[], size_t nx) \
{ \
    if (nx != NY) return V##Error; \
    memcpy(((Instance *)c)->y, x, NY * sizeof(double)); \
    return V##OK; \
} \
\
V##Status V##DERIVATIVES(C c, R dx[], size_t nx) \
{ \
    if (nx != NY) return V##Error; \
    return STATUS[derivatives((Instance *)c, dx)]; \
} \
\
V##Status V##GetEventIndicators(C c, R g[], size_t ni) \
{ \
    if (ni != @P@_NEVENT) return V##Error; \
    return STATUS[indicators((Instance *)c, g)]; \
} \
\
V##Status V##GetContinuousStates(C c, R x[], size_t nx) \
{ \
    if (nx != NY) return V##Error; \
    memcpy(x, ((Instance *)c)->y, NY * sizeof(double)); \
    return V##OK; \
} \
\
V##Status V##GetNominalsOfContinuousStates(C c, R nominals[], size_t nx) \
{ \
    size_t i; \
    (void)c; \
    for (i = 0; i < nx; i++) nominals[i] = 1.0; \
    return V##OK; \
}
