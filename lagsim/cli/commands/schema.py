"""``lagsim schema``: the JSON Schema of the system file (issue 13, editor support)."""

from __future__ import annotations

import click

from lagsim.cli.options import example


@click.command("schema", epilog=example("lagsim schema > lagsim-system.schema.json"))
def command() -> None:
    """Print the JSON Schema (draft 2020-12) of the system file, for editors.

    Save it, and name it on the first line of a system file for a YAML language server
    (docs/format.md, "Editor support"):

    \b
    # yaml-language-server: $schema=lagsim-system.schema.json
    """
    from lagsim.spec.schema import schema_text

    click.echo(schema_text(), nl=False)
