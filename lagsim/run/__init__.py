"""One run: the problem, a consistent start, formulations and their registry, events, the
driver over engines, the added columns, and the session every run goes through."""
