/* The FMI 2.0 interface (Model Exchange and Co-Simulation) of the model "@NAME@" exported by
   lagsim @VERSION@, over the standalone C of @P@.h and what fmucore.h shares with the FMI 3.0
   interface (the value references, the consistent start, the directional derivatives, the
   Co-Simulation step with @P@_integrate at the experiment's tolerance, default 1e-10, lagsim
   simulate's). */
#include "fmi2Functions.h"
#include "fmucore.h"

#define GUID "@GUID@"

CORE_ADAPTERS(fmi2, fmi2Component, fmi2Real, FMUstate, DeSerialize, GetDerivatives)

static void log_message(Instance *c, int error, const char *category, const char *message)
{
    fmi2CallbackLogger logger = (fmi2CallbackLogger)c->logger;
    if (logger)
        logger((fmi2ComponentEnvironment)c->environment, c->name, error ? fmi2Error : fmi2OK,
               category, "%s", message);
}

const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid,
                              fmi2String location, const fmi2CallbackFunctions *cb,
                              fmi2Boolean visible, fmi2Boolean logging)
{
    (void)type; (void)location; (void)visible;
    if (!guid || strcmp(guid, GUID) != 0) {
        if (cb && cb->logger)
            cb->logger(cb->componentEnvironment, name, fmi2Error, "error",
                       "the GUID %s is not this FMU's %s", guid ? guid : "(none)", GUID);
        return NULL;
    }
    return instance_new(name, cb ? (void *)cb->logger : NULL,
                        cb ? cb->componentEnvironment : NULL, logging);
}

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean toleranceDefined,
                               fmi2Real tolerance, fmi2Real startTime,
                               fmi2Boolean stopTimeDefined, fmi2Real stopTime)
{
    (void)stopTimeDefined; (void)stopTime;
    setup_experiment((Instance *)c, toleranceDefined, tolerance, startTime);
    return fmi2OK;
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c) { (void)c; return fmi2OK; }

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                       fmi2Real value_[])
{
    size_t i;
    for (i = 0; i < n; i++)
        if (value((Instance *)c, vr[i], &value_[i]) != CORE_OK) return fmi2Error;
    return fmi2OK;
}

fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                       const fmi2Real value_[])
{
    size_t i;
    for (i = 0; i < n; i++)
        if (set_value((Instance *)c, vr[i], value_[i]) != CORE_OK) return fmi2Error;
    return fmi2OK;
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

fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference u[],
                                        size_t nu, const fmi2ValueReference z[], size_t nz,
                                        const fmi2Real dv[], fmi2Real dz[])
{
    return STATUS[directional((Instance *)c, u, nu, z, nz, dv, dz)];
}

/* Model Exchange */
fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *info)
{
    Instance *m = (Instance *)c;
    info->newDiscreteStatesNeeded = fmi2False;
    info->terminateSimulation = ends_at_event(m) ? fmi2True : fmi2False;
    info->nominalsOfContinuousStatesChanged = fmi2False;
    info->valuesOfContinuousStatesChanged = fmi2False;
    info->nextEventTimeDefined = fmi2False;
    info->nextEventTime = 0.0;
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

/* fmi2Discard with fmi2Terminated true when the --stop-when crossing ended the run. */
fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real h, fmi2Boolean noSetFMUStatePriorToCurrentPoint)
{
    (void)noSetFMUStatePriorToCurrentPoint;
    return STATUS[do_step((Instance *)c, t, h)];
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
