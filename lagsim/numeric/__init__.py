"""Compiled numeric functions: code generation, the C compiler, the cache, the C sources in c/."""
