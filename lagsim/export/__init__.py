"""``lagsim export`` (issue 25): a model as standalone C (:mod:`lagsim.export.ccode`) and as an
FMI 2.0 FMU for Model Exchange and Co-Simulation (:mod:`lagsim.export.fmu`)."""
