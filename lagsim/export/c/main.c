/* An example program for the model "@NAME@" exported by lagsim @VERSION@: integrates from
   the start state of @P@.h and prints CSV (t, the state, the outputs) at samples evenly
   spaced in time. Build and run:

       cc -O2 -o @P@ main.c @P@.c -lm
       ./@P@ [T_END [SAMPLES [RTOL [ATOL [NAME=VALUE ...]]]]]

   defaults: T_END @T_END@, SAMPLES @SAMPLES@, RTOL = ATOL = 1e-10 (lagsim simulate's); a
   NAME=VALUE argument sets a parameter, as lagsim simulate --set does (the parameters and
   initial values the file defines from it follow, and the start is made consistent). With a --stop-when
   expression exported, the run ends at its crossing, the last row there. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "@P@.h"

int main(int argc, char **argv)
{
    double y[@P@_NY], p[@P@_NP], out[@P@_NOUT];
    double t0 = @T0@, t_end = argc > 1 ? atof(argv[1]) : @T_END@, t = t0, h = 0.0;
    long samples = argc > 2 ? atol(argv[2]) : @SAMPLES@, k;
    double rtol = argc > 3 ? atof(argv[3]) : 1e-10, atol = argc > 4 ? atof(argv[4]) : 1e-10;
    int i, a;
    memcpy(y, @P@_state_start, sizeof y);
    memcpy(p, @P@_parameter_start, sizeof p);
    for (a = 5; a < argc; a++) {
        const char *eq = strchr(argv[a], '=');
        for (i = 0; eq && i < @P@_NP; i++)
            if (strlen(@P@_parameter_names[i]) == (size_t)(eq - argv[a])
                && strncmp(@P@_parameter_names[i], argv[a], (size_t)(eq - argv[a])) == 0)
                break;
        if (!eq || i == @P@_NP) {
            fprintf(stderr, "%s: no parameter %s\n", argv[0], argv[a]);
            return 2;
        }
        if (@P@_parameter_derived[i]) {
            fprintf(stderr, "%s: %s is computed from the other parameters; set those\n",
                    argv[0], @P@_parameter_names[i]);
            return 2;
        }
        p[i] = atof(eq + 1);
    }
    if (argc > 5) {
        char why[512];
        @P@_derive(p);
        @P@_initial(p, y);
        if (@P@_M > 0 && @P@_consistent_start(t0, y, p, @P@_state_given, why, sizeof why)) {
            fprintf(stderr, "%s: %s\n", argv[0], why);
            return 2;
        }
    }
    printf("t");
    for (i = 0; i < @P@_NY; i++) printf(",%s", @P@_state_names[i]);
    for (i = 0; i < @P@_NOUT; i++) printf(",%s", @P@_output_names[i]);
    printf("\n");
    for (k = 0; k < samples; k++) {
        double tk = samples > 1 ? t0 + (t_end - t0) * (double)k / (double)(samples - 1) : t0;
        int stopped = 0;
        int code = @P@_integrate_until(&t, y, tk, p, rtol, atol, &h, &stopped);
        if (code) {
            fprintf(stderr, "%s: the integration failed at t = %.17g (code %d)\n", argv[0], t,
                    code);
            return 1;
        }
        @P@_outputs(t, y, p, out);
        printf("%.17g", t);
        for (i = 0; i < @P@_NY; i++) printf(",%.17g", y[i]);
        for (i = 0; i < @P@_NOUT; i++) printf(",%.17g", out[i]);
        printf("\n");
        if (stopped) break;
    }
    return 0;
}
