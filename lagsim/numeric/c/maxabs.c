/* The largest |x_i| of the k values, NaN when one is NaN (np.abs(x).max() of the NumPy path;
   Newton's tests take a NaN for a non-finite state). */
static double fs_maxabs(int k, const double *x)
{
    double r = 0.0;
    int i;
    for (i = 0; i < k; i++) {
        if (isnan(x[i])) return x[i];
        if (fabs(x[i]) > r) r = fabs(x[i]);
    }
    return r;
}
