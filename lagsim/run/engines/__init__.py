"""The engines that step a run (issue 23, "Engines as parts"): the contract and the step loop's
skeleton (:mod:`~lagsim.run.engines.base`), the Python loop over scipy's solvers
(:mod:`~lagsim.run.engines.python`), DOP853 and the reduced loop in C
(:mod:`~lagsim.run.engines.cloop`), Radau IIA in C (:mod:`~lagsim.run.engines.cradau`), what the
C loops share (:mod:`~lagsim.run.engines.ccommon`), DOP853's C step inside scipy's solver
(:mod:`~lagsim.run.engines.cstep`), and the fixed-step methods (:mod:`~lagsim.run.engines.fixed`,
:mod:`~lagsim.run.engines.rattle`, :mod:`~lagsim.run.engines.variational`). The driver
(:mod:`lagsim.run.driver`) holds them in a table and runs the first that accepts a problem."""
