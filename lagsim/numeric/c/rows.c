/* One compiled model function applied to many rows at once (lagsim.numeric.ccompile.CFunction.rows):
   out[i] = f(x[i]) for i < rows, x of rows × n_in and out of rows × n_out doubles, row-major, at
   the parameter values p. f is a function of a model library, void f(const double *in,
   const double *p, double *out); each row is the same call the per-row path makes, so the values
   are the same bits. */
typedef void (*lagsim_row_function)(const double *, const double *, double *);

void lagsim_rows(void *f, long rows, long n_in, long n_out, const double *x, const double *p,
                 double *out)
{
    lagsim_row_function g = (lagsim_row_function)f;
    long i;
    for (i = 0; i < rows; i++) g(x + i * n_in, p, out + i * n_out);
}
