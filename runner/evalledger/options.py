"""Options shared by many commands, as decorators (one definition, one help text)."""

from __future__ import annotations

import functools

import click

from . import db


def database_option(command):
    """--database-url, shared by every command that touches the database."""

    @click.option(
        "--database-url",
        envvar="DATABASE_URL",
        metavar="URL",
        help="PostgreSQL 14+ to use instead of the embedded server (default: $DATABASE_URL).",
    )
    @functools.wraps(command)
    def wrapper(*args, database_url=None, **kwargs):
        db.use_database_url(database_url)
        return command(*args, **kwargs)

    return wrapper
