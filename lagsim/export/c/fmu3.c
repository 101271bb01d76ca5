/* The FMI 3.0 interface (Model Exchange and Co-Simulation) of the model "@NAME@" exported by
   lagsim @VERSION@, over the standalone C of @P@.h and what fmucore.h shares with the FMI 2.0
   interface. Beyond fmucore.h's value references: the independent variable time (VR_TIME) and,
   with --stop-when, the event indicator (VR_EVENT). Only Float64 variables exist; Scheduled
   Execution, clocks, adjoint derivatives and configuration modes are not provided (the model
   description says so) and their functions return fmi3Error. */
#include "fmi3Functions.h"
#include "fmucore.h"

#define TOKEN "@GUID@"
#define VR_TIME VR_END
#define VR_EVENT (VR_END + 1)

CORE_ADAPTERS(fmi3, fmi3Instance, fmi3Float64, FMUState, Deserialize,
              GetContinuousStateDerivatives)

static void log_message(Instance *c, int error, const char *category, const char *message)
{
    fmi3LogMessageCallback logger = (fmi3LogMessageCallback)c->logger;
    if (logger) logger((fmi3InstanceEnvironment)c->environment, error ? fmi3Error : fmi3OK,
                       category, message);
}

static fmi3Status unsupported(fmi3Instance c, const char *what)
{
    char text[160];
    snprintf(text, sizeof text, "%s is not provided by this FMU", what);
    say((Instance *)c, text);
    return fmi3Error;
}

const char *fmi3GetVersion(void) { return fmi3Version; }

static fmi3Instance instantiate(fmi3String name, fmi3String token, fmi3Boolean logging,
                                fmi3InstanceEnvironment environment,
                                fmi3LogMessageCallback logger)
{
    if (!token || strcmp(token, TOKEN) != 0) {
        if (logger) {
            char text[200];
            snprintf(text, sizeof text, "the instantiation token %s is not this FMU's %s",
                     token ? token : "(none)", TOKEN);
            logger(environment, fmi3Error, "error", text);
        }
        return NULL;
    }
    return instance_new(name, (void *)logger, environment, logging);
}

fmi3Instance fmi3InstantiateModelExchange(fmi3String name, fmi3String token,
                                          fmi3String resourcePath, fmi3Boolean visible,
                                          fmi3Boolean logging,
                                          fmi3InstanceEnvironment environment,
                                          fmi3LogMessageCallback logger)
{
    (void)resourcePath; (void)visible;
    return instantiate(name, token, logging, environment, logger);
}

fmi3Instance fmi3InstantiateCoSimulation(fmi3String name, fmi3String token,
                                         fmi3String resourcePath, fmi3Boolean visible,
                                         fmi3Boolean logging, fmi3Boolean eventModeUsed,
                                         fmi3Boolean earlyReturnAllowed,
                                         const fmi3ValueReference requiredIntermediateVariables[],
                                         size_t nRequiredIntermediateVariables,
                                         fmi3InstanceEnvironment environment,
                                         fmi3LogMessageCallback logger,
                                         fmi3IntermediateUpdateCallback intermediateUpdate)
{
    Instance *c;
    (void)resourcePath; (void)visible; (void)eventModeUsed;
    (void)requiredIntermediateVariables; (void)nRequiredIntermediateVariables;
    (void)intermediateUpdate;
    c = (Instance *)instantiate(name, token, logging, environment, logger);
    if (c) c->early = earlyReturnAllowed ? 1 : 0;
    return c;
}

fmi3Instance fmi3InstantiateScheduledExecution(fmi3String name, fmi3String token,
                                               fmi3String resourcePath, fmi3Boolean visible,
                                               fmi3Boolean logging,
                                               fmi3InstanceEnvironment environment,
                                               fmi3LogMessageCallback logger,
                                               fmi3ClockUpdateCallback clockUpdate,
                                               fmi3LockPreemptionCallback lockPreemption,
                                               fmi3UnlockPreemptionCallback unlockPreemption)
{
    (void)token; (void)resourcePath; (void)visible; (void)logging; (void)clockUpdate;
    (void)lockPreemption; (void)unlockPreemption;
    if (logger) logger(environment, fmi3Error, "error",
                       "Scheduled Execution is not provided by this FMU");
    (void)name;
    return NULL;
}

fmi3Status fmi3EnterInitializationMode(fmi3Instance c, fmi3Boolean toleranceDefined,
                                       fmi3Float64 tolerance, fmi3Float64 startTime,
                                       fmi3Boolean stopTimeDefined, fmi3Float64 stopTime)
{
    (void)stopTimeDefined; (void)stopTime;
    setup_experiment((Instance *)c, toleranceDefined, tolerance, startTime);
    return fmi3OK;
}

fmi3Status fmi3GetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                          fmi3Float64 values[], size_t nValues)
{
    Instance *m = (Instance *)c;
    size_t i;
    if (nValues != nvr) return fmi3Error;
    for (i = 0; i < nvr; i++) {
        if (vr[i] == VR_TIME) values[i] = m->t;
        else if (vr[i] == VR_EVENT && @P@_NEVENT) {
            if (indicators(m, &values[i]) != CORE_OK) return fmi3Error;
        } else if (value(m, vr[i], &values[i]) != CORE_OK) return fmi3Error;
    }
    return fmi3OK;
}

fmi3Status fmi3SetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                          const fmi3Float64 values[], size_t nValues)
{
    size_t i;
    if (nValues != nvr) return fmi3Error;
    for (i = 0; i < nvr; i++)
        if (set_value((Instance *)c, vr[i], values[i]) != CORE_OK) return fmi3Error;
    return fmi3OK;
}

#define NO_GET(NAME, TYPE) \
    fmi3Status fmi3Get##NAME(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, \
                             TYPE values[], size_t nValues) \
    { (void)vr; (void)values; (void)nValues; return none(c, nvr); }
#define NO_SET(NAME, TYPE) \
    fmi3Status fmi3Set##NAME(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, \
                             const TYPE values[], size_t nValues) \
    { (void)vr; (void)values; (void)nValues; return none(c, nvr); }
NO_GET(Float32, fmi3Float32) NO_GET(Int8, fmi3Int8) NO_GET(UInt8, fmi3UInt8)
NO_GET(Int16, fmi3Int16) NO_GET(UInt16, fmi3UInt16) NO_GET(Int32, fmi3Int32)
NO_GET(UInt32, fmi3UInt32) NO_GET(Int64, fmi3Int64) NO_GET(UInt64, fmi3UInt64)
NO_GET(Boolean, fmi3Boolean) NO_GET(String, fmi3String)
NO_SET(Float32, fmi3Float32) NO_SET(Int8, fmi3Int8) NO_SET(UInt8, fmi3UInt8)
NO_SET(Int16, fmi3Int16) NO_SET(UInt16, fmi3UInt16) NO_SET(Int32, fmi3Int32)
NO_SET(UInt32, fmi3UInt32) NO_SET(Int64, fmi3Int64) NO_SET(UInt64, fmi3UInt64)
NO_SET(Boolean, fmi3Boolean) NO_SET(String, fmi3String)

fmi3Status fmi3GetBinary(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                         size_t sizes[], fmi3Binary values[], size_t nValues)
{ (void)vr; (void)sizes; (void)values; (void)nValues; return none(c, nvr); }
fmi3Status fmi3SetBinary(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                         const size_t sizes[], const fmi3Binary values[], size_t nValues)
{ (void)vr; (void)sizes; (void)values; (void)nValues; return none(c, nvr); }
fmi3Status fmi3GetClock(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                        fmi3Clock values[])
{ (void)vr; (void)values; return none(c, nvr); }
fmi3Status fmi3SetClock(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                        const fmi3Clock values[])
{ (void)vr; (void)values; return none(c, nvr); }

fmi3Status fmi3GetNumberOfVariableDependencies(fmi3Instance c, fmi3ValueReference vr,
                                               size_t *n)
{ (void)vr; (void)n; return unsupported(c, "variable dependency information"); }
fmi3Status fmi3GetVariableDependencies(fmi3Instance c, fmi3ValueReference dependent,
                                       size_t elementIndicesOfDependent[],
                                       fmi3ValueReference independents[],
                                       size_t elementIndicesOfIndependents[],
                                       fmi3DependencyKind dependencyKinds[], size_t n)
{
    (void)dependent; (void)elementIndicesOfDependent; (void)independents;
    (void)elementIndicesOfIndependents; (void)dependencyKinds; (void)n;
    return unsupported(c, "variable dependency information");
}

fmi3Status fmi3GetDirectionalDerivative(fmi3Instance c, const fmi3ValueReference unknowns[],
                                        size_t nUnknowns, const fmi3ValueReference knowns[],
                                        size_t nKnowns, const fmi3Float64 seed[], size_t nSeed,
                                        fmi3Float64 sensitivity[], size_t nSensitivity)
{
    if (nSeed != nKnowns || nSensitivity != nUnknowns) return fmi3Error;
    return STATUS[directional((Instance *)c, unknowns, nUnknowns, knowns, nKnowns, seed,
                              sensitivity)];
}

fmi3Status fmi3GetAdjointDerivative(fmi3Instance c, const fmi3ValueReference unknowns[],
                                    size_t nUnknowns, const fmi3ValueReference knowns[],
                                    size_t nKnowns, const fmi3Float64 seed[], size_t nSeed,
                                    fmi3Float64 sensitivity[], size_t nSensitivity)
{
    (void)unknowns; (void)nUnknowns; (void)knowns; (void)nKnowns; (void)seed; (void)nSeed;
    (void)sensitivity; (void)nSensitivity;
    return unsupported(c, "fmi3GetAdjointDerivative");
}

fmi3Status fmi3EnterConfigurationMode(fmi3Instance c)
{ return unsupported(c, "the configuration mode"); }
fmi3Status fmi3ExitConfigurationMode(fmi3Instance c)
{ return unsupported(c, "the configuration mode"); }

fmi3Status fmi3GetIntervalDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                  fmi3Float64 intervals[], fmi3IntervalQualifier q[])
{ (void)vr; (void)n; (void)intervals; (void)q; return unsupported(c, "a clock"); }
fmi3Status fmi3GetIntervalFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                   fmi3UInt64 counters[], fmi3UInt64 resolutions[],
                                   fmi3IntervalQualifier q[])
{ (void)vr; (void)n; (void)counters; (void)resolutions; (void)q;
  return unsupported(c, "a clock"); }
fmi3Status fmi3GetShiftDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                               fmi3Float64 shifts[])
{ (void)vr; (void)n; (void)shifts; return unsupported(c, "a clock"); }
fmi3Status fmi3GetShiftFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                fmi3UInt64 counters[], fmi3UInt64 resolutions[])
{ (void)vr; (void)n; (void)counters; (void)resolutions; return unsupported(c, "a clock"); }
fmi3Status fmi3SetIntervalDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                  const fmi3Float64 intervals[])
{ (void)vr; (void)n; (void)intervals; return unsupported(c, "a clock"); }
fmi3Status fmi3SetIntervalFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                   const fmi3UInt64 counters[], const fmi3UInt64 resolutions[])
{ (void)vr; (void)n; (void)counters; (void)resolutions; return unsupported(c, "a clock"); }
fmi3Status fmi3SetShiftDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                               const fmi3Float64 shifts[])
{ (void)vr; (void)n; (void)shifts; return unsupported(c, "a clock"); }
fmi3Status fmi3SetShiftFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                const fmi3UInt64 counters[], const fmi3UInt64 resolutions[])
{ (void)vr; (void)n; (void)counters; (void)resolutions; return unsupported(c, "a clock"); }

fmi3Status fmi3EvaluateDiscreteStates(fmi3Instance c) { (void)c; return fmi3OK; }

fmi3Status fmi3UpdateDiscreteStates(fmi3Instance c, fmi3Boolean *discreteStatesNeedUpdate,
                                    fmi3Boolean *terminateSimulation,
                                    fmi3Boolean *nominalsOfContinuousStatesChanged,
                                    fmi3Boolean *valuesOfContinuousStatesChanged,
                                    fmi3Boolean *nextEventTimeDefined,
                                    fmi3Float64 *nextEventTime)
{
    Instance *m = (Instance *)c;
    *discreteStatesNeedUpdate = fmi3False;
    *terminateSimulation = ends_at_event(m) ? fmi3True : fmi3False;
    *nominalsOfContinuousStatesChanged = fmi3False;
    *valuesOfContinuousStatesChanged = fmi3False;
    *nextEventTimeDefined = fmi3False;
    *nextEventTime = 0.0;
    return fmi3OK;
}

/* Model Exchange */
fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance c, size_t *n)
{
    (void)c;
    *n = @P@_NEVENT;
    return fmi3OK;
}

fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance c, size_t *n)
{
    (void)c;
    *n = NY;
    return fmi3OK;
}

/* Co-Simulation */
fmi3Status fmi3EnterStepMode(fmi3Instance c) { (void)c; return fmi3OK; }

fmi3Status fmi3GetOutputDerivatives(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                                    const fmi3Int32 orders[], fmi3Float64 values[],
                                    size_t nValues)
{
    (void)vr; (void)nvr; (void)orders; (void)values; (void)nValues;
    return unsupported(c, "fmi3GetOutputDerivatives");
}

/* When the --stop-when crossing ended the run: terminateSimulation, lastSuccessfulTime the
   crossing and, when the importer allows early return (FMPy's early_return_allowed), an early
   return there, so that the importer records the crossing's time. */
fmi3Status fmi3DoStep(fmi3Instance c, fmi3Float64 t, fmi3Float64 h,
                      fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                      fmi3Boolean *eventHandlingNeeded, fmi3Boolean *terminateSimulation,
                      fmi3Boolean *earlyReturn, fmi3Float64 *lastSuccessfulTime)
{
    Instance *m = (Instance *)c;
    int code;
    (void)noSetFMUStatePriorToCurrentPoint;
    code = do_step(m, t, h);
    *eventHandlingNeeded = fmi3False;
    *terminateSimulation = m->terminated ? fmi3True : fmi3False;
    *earlyReturn = m->terminated && m->early && m->t < t + h ? fmi3True : fmi3False;
    *lastSuccessfulTime = m->t;
    return code == CORE_ERROR ? fmi3Error : fmi3OK;
}

fmi3Status fmi3ActivateModelPartition(fmi3Instance c, fmi3ValueReference clockReference,
                                      fmi3Float64 activationTime)
{
    (void)clockReference; (void)activationTime;
    return unsupported(c, "Scheduled Execution");
}
