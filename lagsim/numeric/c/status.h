/* lagsim's C status codes and the result records of its step loops and of DOP853's step: one
   header, included by every C source that uses them (lagsim.numeric.csource expands the include into
   the text it compiles). lagsim.numeric.csource.Status mirrors the enum (each code with its message),
   lagsim.numeric.csource.LoopResult and StepResult the records; tests/test_csource.py holds each pair
   to agree. */
#ifndef LAGSIM_STATUS_H
#define LAGSIM_STATUS_H

enum lagsim_status {
    /* a step loop's call (lagsim_loop_run, lagsim_radau_run, lagsim_reduced_run) */
    RUN_MORE = 0,            /* its steps are taken; the run goes on */
    RUN_DONE = 1,            /* the run reached t_end */
    RUN_STOP = 2,            /* the --stop-when expression changed sign */
    RUN_SMALL = 3,           /* the step size fell below the spacing of the numbers */
    RUN_SINGULAR = 4,        /* a singular linear system */
    RUN_NONFINITE = 5,       /* the state became non-finite */
    RUN_MASS = 6,            /* the mass matrix became singular */
    RUN_PROJECTION = 7,      /* the projection onto the constraints did not converge */
    RUN_STOP_NONFINITE = 8,  /* the --stop-when expression is not finite */
    /* the reduced formulation's loop (lagsim_reduced_run) */
    RED_CHECK = 20,          /* Python decides about the chart at this step */
    RED_SINGULAR = 21,       /* the chart's equations are singular */
    RED_NEWTON = 22,         /* a numeric chart's Newton iteration did not converge */
    /* a fixed step of --method rattle or variational (fs_step, lagsim_fs_run) */
    STEP_NEWTON = 30,        /* Newton's method did not converge in the step */
    STEP_SINGULAR = 31,      /* a singular linear system in the step */
    STEP_NONFINITE = 32,     /* the step's state became non-finite */
    /* the free flights of a system with unilateral contacts (lagsim_impacts_run) */
    IMP_REDO = 40            /* Python steps the current flight again from its start */
};

/* What a call of a step loop reports (lagsim_loop_run, lagsim_reduced_run,
   lagsim_radau_run); each loop sets the fields it has and leaves the others. */
typedef struct {
    double t;           /* the solver's time */
    double when;        /* the time of the stop event or of the failure */
    double regular_at;  /* when the mass matrix was last found regular */
    double h_abs;       /* the solver's next step size */
    double guard_h;     /* reduced: the guard's last step */
    double stop_sign;   /* reduced: the --stop-when sign (for a run that goes on in Python) */
    long nfev;          /* right-hand sides evaluated */
    long nsteps;        /* accepted steps */
    long njev;          /* Radau: Jacobians evaluated */
    long nlu;           /* Radau: LU factorizations */
    int taken;          /* Radau: accepted steps of this call */
    int unchecked;      /* reduced: accepted steps since the mass matrix was checked */
    int chart;          /* reduced: the current symbolic chart, -1 for a numeric chart */
    int switches;       /* reduced: the chart switches made in C */
} lagsim_result;

/* One accepted DOP853 step of a model library (lagsim_dop853_step): h_abs in (the step size
   to try) and out (the next one), the rest out. */
typedef struct {
    double t_new;  /* the step's end */
    double h;      /* the step taken */
    double h_abs;  /* in: the step size to try; out: the next step size */
    long nfev;     /* right-hand sides evaluated */
} lagsim_step;

#endif
