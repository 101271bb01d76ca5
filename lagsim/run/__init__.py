"""One run: options, the problem, a consistent start, formulations, events and the driver over
engines."""
