"""The system file: loading and validating the YAML, expressions, limits, the options table and
the names it offers, the JSON Schema."""
