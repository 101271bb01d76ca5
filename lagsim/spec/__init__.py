"""The system file: loading and validating the YAML, expressions, limits, the options table, the
JSON Schema."""
