/* The FMI 2.0 interface (Model Exchange and Co-Simulation) of the model "@NAME@" exported by
   lagsim @VERSION@, over the standalone C of @P@.h. Value references: the states
   0..NY-1, their derivatives NY..2NY-1, the parameters 2NY..2NY+NP-1, the outputs after them
   (the order of @P@.h and of modelDescription.xml). Co-Simulation steps with @P@_integrate
   (DOP853) at the experiment's tolerance (default 1e-10, lagsim simulate's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "fmi2Functions.h"
#include "@P@.h"

#define NY @P@_NY
#define NP @P@_NP
#define NOUT @P@_NOUT
#define VR_DER NY
#define VR_PAR (2 * NY)
#define VR_OUT (2 * NY + NP)
#define VR_END (2 * NY + NP + NOUT)
#define GUID "@GUID@"

typedef struct {
    double t, h, rtol;
    double y[NY], p[NP];
    int failed, continuous, terminated, logging;
    unsigned char set[NY];
    fmi2CallbackFunctions cb;
    char name[128];
} Instance;

static void say(Instance *c, fmi2Status status, const char *message)
{
    if (c->cb.logger)
        c->cb.logger(c->cb.componentEnvironment, c->name, status, "error", "%s", message);
}

const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n,
                               const fmi2String categories[])
{
    (void)c; (void)on; (void)n; (void)categories;
    return fmi2OK;
}

static void reset(Instance *c)
{
    c->t = 0.0; c->h = 0.0; c->rtol = 1e-10; c->failed = 0; c->continuous = 0;
    c->terminated = 0;
    memset(c->set, 0, sizeof c->set);
    memcpy(c->y, @P@_state_start, sizeof c->y);
    memcpy(c->p, @P@_parameter_start, sizeof c->p);
}

fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid,
                              fmi2String location, const fmi2CallbackFunctions *cb,
                              fmi2Boolean visible, fmi2Boolean logging)
{
    Instance *c;
    (void)type; (void)location; (void)visible;
    if (!guid || strcmp(guid, GUID) != 0) {
        if (cb && cb->logger)
            cb->logger(cb->componentEnvironment, name, fmi2Error, "error",
                       "the GUID %s is not this FMU's %s", guid ? guid : "(none)", GUID);
        return NULL;
    }
    c = (Instance *)calloc(1, sizeof(Instance));
    if (!c) return NULL;
    if (cb) c->cb = *cb;
    snprintf(c->name, sizeof c->name, "%s", name ? name : "@P@");
    reset(c);
    c->logging = logging ? 1 : 0;
    return c;
}

void fmi2FreeInstance(fmi2Component c) { free(c); }

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean toleranceDefined,
                               fmi2Real tolerance, fmi2Real startTime,
                               fmi2Boolean stopTimeDefined, fmi2Real stopTime)
{
    Instance *m = (Instance *)c;
    (void)stopTimeDefined; (void)stopTime;
    if (toleranceDefined && tolerance > 0) m->rtol = tolerance;
    m->t = startTime;
    return fmi2OK;
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c) { (void)c; return fmi2OK; }
/* A constrained start is moved onto the constraints here, as lagsim simulate moves it
   (@P@_consistent_start): a state set with fmi2SetReal since instantiation is given, as
   --init NAME=VALUE is; the others start from the file's initial values (given where the file
   gives them, computed from the constraints otherwise). Each moved value is logged (category
   "info") when logging is on; a start that cannot be made consistent is an fmi2Error with the
   reason logged. */
fmi2Status fmi2ExitInitializationMode(fmi2Component c)
{
    Instance *m = (Instance *)c;
    unsigned char given[NY];
    double before[NY];
    char why[512];
    int i, code;
    if (@P@_M == 0) return fmi2OK;
    for (i = 0; i < NY; i++) {
        if (!m->set[i]) m->y[i] = @P@_state_initial[i];
        given[i] = m->set[i] || @P@_state_given[i];
    }
    memcpy(before, m->y, sizeof before);
    code = @P@_consistent_start(m->t, m->y, m->p, given, why, sizeof why);
    if (code) {
        say(m, fmi2Error, why);
        return fmi2Error;
    }
    for (i = 0; m->logging && m->cb.logger && i < NY; i++)
        if (fabs(m->y[i] - before[i]) > 1e-12)
            m->cb.logger(m->cb.componentEnvironment, m->name, fmi2OK, "info",
                         "initial %s: %.17g -> %.17g (%s)", @P@_state_names[i], before[i],
                         m->y[i], given[i] ? "moved onto the constraints"
                                           : "computed from the constraints");
    return fmi2OK;
}
fmi2Status fmi2Terminate(fmi2Component c) { (void)c; return fmi2OK; }
fmi2Status fmi2Reset(fmi2Component c) { reset((Instance *)c); return fmi2OK; }

static fmi2Status value(Instance *c, fmi2ValueReference vr, double *v)
{
    double buf[NY > NOUT ? NY : NOUT];
    if (vr < NY) { *v = c->y[vr]; return fmi2OK; }
    if (vr < VR_PAR) {
        if (@P@_rhs(c->t, c->y, c->p, buf)) {
            say(c, fmi2Error, "a singular linear system (the mass matrix or the constraints)");
            return fmi2Error;
        }
        *v = buf[vr - VR_DER];
        return fmi2OK;
    }
    if (vr < VR_OUT) { *v = c->p[vr - VR_PAR]; return fmi2OK; }
    if (vr < VR_END) {
        if (@P@_outputs(c->t, c->y, c->p, buf)) {
            say(c, fmi2Error, "a singular linear system (the mass matrix or the constraints)");
            return fmi2Error;
        }
        *v = buf[vr - VR_OUT];
        return fmi2OK;
    }
    say(c, fmi2Error, "no such value reference");
    return fmi2Error;
}

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                       fmi2Real value_[])
{
    size_t i;
    for (i = 0; i < n; i++)
        if (value((Instance *)c, vr[i], &value_[i]) != fmi2OK) return fmi2Error;
    return fmi2OK;
}

fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                       const fmi2Real value_[])
{
    Instance *m = (Instance *)c;
    size_t i;
    for (i = 0; i < n; i++) {
        if (vr[i] < NY) {
            m->y[vr[i]] = value_[i];
            m->set[vr[i]] = 1;
        }
        else if (vr[i] >= VR_PAR && vr[i] < VR_OUT) m->p[vr[i] - VR_PAR] = value_[i];
        else { say(m, fmi2Error, "this variable cannot be set"); return fmi2Error; }
    }
    m->h = 0.0;
    return fmi2OK;
}

static fmi2Status none(fmi2Component c, size_t n)
{
    if (n == 0) return fmi2OK;
    say((Instance *)c, fmi2Error, "the FMU has no variables of this type");
    return fmi2Error;
}

fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                          fmi2Integer v[]) { (void)vr; (void)v; return none(c, n); }
fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                          fmi2Boolean v[]) { (void)vr; (void)v; return none(c, n); }
fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                         fmi2String v[]) { (void)vr; (void)v; return none(c, n); }
fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                          const fmi2Integer v[]) { (void)vr; (void)v; return none(c, n); }
fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                          const fmi2Boolean v[]) { (void)vr; (void)v; return none(c, n); }
fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                         const fmi2String v[]) { (void)vr; (void)v; return none(c, n); }

fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *state)
{
    Instance *copy = (Instance *)(*state ? *state : malloc(sizeof(Instance)));
    if (!copy) return fmi2Error;
    memcpy(copy, c, sizeof(Instance));
    *state = copy;
    return fmi2OK;
}

fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate state)
{
    memcpy(c, state, sizeof(Instance));
    return fmi2OK;
}

fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *state)
{
    (void)c;
    free(*state);
    *state = NULL;
    return fmi2OK;
}

fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate state, size_t *size)
{
    (void)c; (void)state;
    *size = sizeof(Instance);
    return fmi2OK;
}

fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate state, fmi2Byte out[],
                                 size_t size)
{
    (void)c;
    if (size < sizeof(Instance)) return fmi2Error;
    memcpy(out, state, sizeof(Instance));
    return fmi2OK;
}

fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte in[], size_t size,
                                   fmi2FMUstate *state)
{
    Instance *copy;
    (void)c;
    if (size < sizeof(Instance) || !(copy = (Instance *)malloc(sizeof(Instance))))
        return fmi2Error;
    memcpy(copy, in, sizeof(Instance));
    *state = copy;
    return fmi2OK;
}

/* d(unknowns)/d(knowns) . dv. Derivatives with respect to states: the symbolic Jacobian
   (@P@_jacobian). Any other pair (an output, or a parameter or an input as known): a central
   difference along dv, step 1e-6 (1 + |known|). */
static double *known_slot(Instance *m, fmi2ValueReference vr)
{
    if (vr < NY) return &m->y[vr];
    if (vr >= VR_PAR && vr < VR_OUT) return &m->p[vr - VR_PAR];
    return NULL;
}

fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference u[],
                                        size_t nu, const fmi2ValueReference z[], size_t nz,
                                        const fmi2Real dv[], fmi2Real dz[])
{
    Instance *m = (Instance *)c;
    size_t i, j;
    int exact = 1;
    for (i = 0; i < nu; i++) exact &= u[i] >= VR_DER && u[i] < VR_PAR;
    for (j = 0; j < nz; j++) {
        if (!known_slot(m, z[j])) {
            say(m, fmi2Error, "a known of a directional derivative must be a state, a "
                              "parameter or an input");
            return fmi2Error;
        }
        exact &= z[j] < NY;
    }
    if (exact) {
        double J[NY * NY];
        if (@P@_jacobian(m->t, m->y, m->p, J)) {
            say(m, fmi2Error, "a singular linear system (the mass matrix or the constraints)");
            return fmi2Error;
        }
        for (i = 0; i < nu; i++) {
            dz[i] = 0.0;
            for (j = 0; j < nz; j++) dz[i] += J[(u[i] - VR_DER) * NY + z[j]] * dv[j];
        }
        return fmi2OK;
    } else {
        Instance saved = *m;
        double scale = 0.0, h, plus;
        for (j = 0; j < nz; j++) scale = fmax(scale, fabs(*known_slot(m, z[j])));
        h = 1e-6 * (1.0 + scale);
        for (i = 0; i < nu; i++) {
            for (j = 0; j < nz; j++) *known_slot(m, z[j]) += h * dv[j];
            if (value(m, u[i], &plus) != fmi2OK) { *m = saved; return fmi2Error; }
            *m = saved;
            for (j = 0; j < nz; j++) *known_slot(m, z[j]) -= h * dv[j];
            if (value(m, u[i], &dz[i]) != fmi2OK) { *m = saved; return fmi2Error; }
            *m = saved;
            dz[i] = (plus - dz[i]) / (2.0 * h);
        }
        return fmi2OK;
    }
}

/* Model Exchange */
fmi2Status fmi2EnterEventMode(fmi2Component c) { (void)c; return fmi2OK; }

/* An event after continuous time is the --stop-when indicator's crossing (the FMU has no
   other events): the simulation ends there, as lagsim simulate --stop-when ends. */
fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *info)
{
    Instance *m = (Instance *)c;
    info->newDiscreteStatesNeeded = fmi2False;
    info->terminateSimulation = (@P@_NEVENT > 0 && m->continuous) ? fmi2True : fmi2False;
    info->nominalsOfContinuousStatesChanged = fmi2False;
    info->valuesOfContinuousStatesChanged = fmi2False;
    info->nextEventTimeDefined = fmi2False;
    info->nextEventTime = 0.0;
    return fmi2OK;
}

fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c)
{
    ((Instance *)c)->continuous = 1;
    return fmi2OK;
}

fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi2Boolean *enterEventMode, fmi2Boolean *terminate)
{
    (void)c; (void)noSetFMUStatePriorToCurrentPoint;
    *enterEventMode = fmi2False;
    *terminate = fmi2False;
    return fmi2OK;
}

fmi2Status fmi2SetTime(fmi2Component c, fmi2Real time)
{
    ((Instance *)c)->t = time;
    return fmi2OK;
}

fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t nx)
{
    if (nx != NY) return fmi2Error;
    memcpy(((Instance *)c)->y, x, NY * sizeof(double));
    return fmi2OK;
}

fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real dx[], size_t nx)
{
    Instance *m = (Instance *)c;
    if (nx != NY) return fmi2Error;
    if (@P@_rhs(m->t, m->y, m->p, dx)) {
        say(m, fmi2Error, "a singular linear system (the mass matrix or the constraints)");
        return fmi2Error;
    }
    return fmi2OK;
}

fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real indicators[], size_t ni)
{
    Instance *m = (Instance *)c;
    if (ni != @P@_NEVENT) return fmi2Error;
    if (ni && @P@_event(m->t, m->y, m->p, indicators)) {
        say(m, fmi2Error, "a singular linear system (the mass matrix or the constraints)");
        return fmi2Error;
    }
    return fmi2OK;
}

fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t nx)
{
    if (nx != NY) return fmi2Error;
    memcpy(x, ((Instance *)c)->y, NY * sizeof(double));
    return fmi2OK;
}

fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x_nominal[], size_t nx)
{
    size_t i;
    (void)c;
    for (i = 0; i < nx; i++) x_nominal[i] = 1.0;
    return fmi2OK;
}

/* Co-Simulation */
fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[],
                                       size_t n, const fmi2Integer order[],
                                       const fmi2Real value_[])
{
    (void)vr; (void)order; (void)value_;
    return none(c, n);
}

fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[],
                                        size_t n, const fmi2Integer order[], fmi2Real value_[])
{
    (void)vr; (void)order; (void)value_;
    return none(c, n);
}

fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real h, fmi2Boolean noSetFMUStatePriorToCurrentPoint)
{
    Instance *m = (Instance *)c;
    int code, stopped = 0;
    (void)noSetFMUStatePriorToCurrentPoint;
    if (m->terminated) return fmi2Discard;
    m->t = t;
    code = @P@_integrate_until(&m->t, m->y, t + h, m->p, m->rtol, m->rtol, &m->h, &stopped);
    if (code) {
        char text[160];
        snprintf(text, sizeof text, "the integration failed at t = %.17g (%s)", m->t,
                 code == 3 ? "the step size fell below the spacing of the numbers"
                           : "a singular linear system");
        say(m, fmi2Error, text);
        m->failed = 1;
        return fmi2Error;
    }
    if (stopped) {
        m->terminated = 1;
        return fmi2Discard;
    }
    return fmi2OK;
}

fmi2Status fmi2CancelStep(fmi2Component c) { (void)c; return fmi2Error; }

fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *value_)
{
    (void)s;
    *value_ = ((Instance *)c)->failed ? fmi2Error : fmi2OK;
    return fmi2OK;
}

fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *value_)
{
    if (s != fmi2LastSuccessfulTime) return fmi2Discard;
    *value_ = ((Instance *)c)->t;
    return fmi2OK;
}

fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *v)
{ (void)c; (void)s; (void)v; return fmi2Discard; }
/* fmi2Terminated: the --stop-when crossing ended the run (fmi2DoStep returned fmi2Discard,
   fmi2LastSuccessfulTime is the crossing). */
fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *v)
{
    if (s != fmi2Terminated) return fmi2Discard;
    *v = ((Instance *)c)->terminated ? fmi2True : fmi2False;
    return fmi2OK;
}
fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *v)
{ (void)c; (void)s; (void)v; return fmi2Discard; }
