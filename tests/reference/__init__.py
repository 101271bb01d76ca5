"""Reference solutions the tests compare lagsim with (closed forms, hand-written equations);
the benchmarks in bench/ import them from here."""
