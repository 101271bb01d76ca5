"""Many runs of one system: local processes or Dask, the table and its summaries."""
