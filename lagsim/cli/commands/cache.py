"""``lagsim cache info`` and ``lagsim cache clear``: the compile cache
(:mod:`lagsim.numeric.cache`)."""

from __future__ import annotations

import click

from lagsim.errors import InputError, Location


@click.group("cache")
def command() -> None:
    """Show or clear the compile cache of compiled models."""


def _cache_folder_error(exc: Exception) -> InputError:
    return InputError(f"the compile cache cannot be used: {exc}; set LAGSIM_CACHE to a folder "
                      "of your own", Location("LAGSIM_CACHE"))


@command.command("info")
def info() -> None:
    """Print the cache folder, its number of compiled models and their size."""
    from lagsim.numeric import cache

    try:
        found = cache.info()
    except cache.Unusable as exc:
        raise _cache_folder_error(exc) from None
    size = next((f"{found.size / scale:.1f} {unit}" for scale, unit in
                 ((1e9, "GB"), (1e6, "MB"), (1e3, "kB")) if found.size >= scale),
                f"{found.size} bytes")
    click.echo(f"folder: {found.folder}\nentries: {found.entries} (the {cache.KEEP} most "
               f"recently used are kept)\nsize: {size}")


@command.command("clear")
def clear() -> None:
    """Remove lagsim's compiled models from the cache folder (nothing else there)."""
    from lagsim.numeric import cache

    try:
        folder, removed = cache.clear()
    except cache.Unusable as exc:
        raise _cache_folder_error(exc) from None
    click.echo(f"removed {removed} compiled model{'s' * (removed != 1)} from {folder}")
