"""`evalledger serve`: the review web app on a local port."""

from __future__ import annotations

import ipaddress

import click

from evalledger.core import db
from evalledger.core.options import database_option


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; anything but a loopback address lets other machines reach the sign-in "
                   "page over plain HTTP (put TLS in front).")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="Port to listen on (0: a free one).")
@click.option("--idle-minutes", type=click.FloatRange(min=1), default=30, show_default=True,
              help="Sign a session out after this many minutes without a request.")
@database_option
def serve_command(host, port, idle_minutes):
    """Serve the review web app: reviewers score their runs in a browser, auditors and RevOps read.

    Each person signs in with their own database login and password, and every query of their
    session runs as that login, so row-level security decides what they see and may change. The
    database is the one every command uses (--database-url, DATABASE_URL or the embedded server).
    Stop it with Ctrl+C.
    """
    import uvicorn

    from .app import create_app

    url = db.database_url()
    app = create_app(url, idle_minutes)
    if not _loopback(host):
        click.echo(f"evalledger: warning: listening on {host}: other machines can reach the sign-in page, and "
                   "passwords travel unencrypted unless TLS is in front", err=True)
    click.echo(f"evalledger review on http://{host if ':' not in host else f'[{host}]'}:{port}/ "
               f"(database {db.describe(url)}); Ctrl+C stops it")
    uvicorn.run(app, host=host, port=port, log_level="info", server_header=False)


COMMANDS = [serve_command]
