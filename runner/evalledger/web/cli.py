"""`evalledger serve`: the review web app on a local port."""

from __future__ import annotations

import ipaddress

import click

from evalledger.core import db
from evalledger.core.errors import EvalledgerError
from evalledger.core.options import database_option, no_remember_option

WILDCARDS = {"0.0.0.0", "::", ""}


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def served_hosts(host: str, allowed: tuple[str, ...]) -> list[str]:
    """The Host names the app answers for: the loopback names when it listens on loopback, else the
    address it listens on; and every --allowed-host. Listening on every address needs --allowed-host
    (the app cannot know the names browsers will use)."""
    from .app import LOOPBACK_HOSTS

    if _loopback(host):
        return [*LOOPBACK_HOSTS, *allowed]
    if host in WILDCARDS:
        if not allowed:
            raise EvalledgerError(f"--host {host or repr(host)} listens on every address: give --allowed-host NAME "
                                  "(the host name browsers reach this server by, repeatable), so that no other "
                                  "name (a DNS-rebinding page's) is answered")
        return list(allowed)
    return [host, *allowed]


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; anything but a loopback address lets other machines reach the sign-in "
                   "page (put TLS in front, or give --certfile and --keyfile).")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="Port to listen on (0: a free one).")
@click.option("--allowed-host", "allowed_hosts", multiple=True, metavar="NAME",
              help="A host name browsers use to reach the app (its Host header), besides the address it listens "
                   "on; repeatable; needed with --host 0.0.0.0. Any other Host is refused (DNS rebinding).")
@click.option("--idle-minutes", type=click.FloatRange(min=1), default=30, show_default=True,
              help="Sign a session out after this many minutes without a request.")
@click.option("--session-hours", type=click.FloatRange(min=0.1, max=168), default=12, show_default=True,
              help="Sign a session out this many hours after it signed in, however active.")
@click.option("--max-connections", type=click.IntRange(1, 1000), default=16, show_default=True,
              help="Database connections the app holds at most, for every login together (sign-ins included).")
@click.option("--connections-per-login", type=click.IntRange(1, 100), default=2, show_default=True,
              help="Database connections the app holds at most for one login, however many times it signs in.")
@click.option("--certfile", type=click.Path(exists=True, dir_okay=False), metavar="FILE",
              help="Serve HTTPS with this certificate (PEM); cookies are then Secure.")
@click.option("--keyfile", type=click.Path(exists=True, dir_okay=False), metavar="FILE",
              help="The private key of --certfile (PEM).")
@click.option("--forwarded-allow-ips", metavar="ADDRESSES",
              help="Behind a TLS proxy: the proxy addresses (comma-separated) whose X-Forwarded-Proto and "
                   "X-Forwarded-For are believed, so requests it forwards over HTTPS get Secure cookies and "
                   "sign-in throttling sees the client's address. Off by default: no header is believed.")
@click.option("--read-url", metavar="URL",
              help="Serve readers only, from this PostgreSQL (a standby, say): auditors and RevOps sign in, and "
                   "reviewers are sent to the app on the primary. serve does not follow $DATABASE_READ_URL, since "
                   "it serves reviewers too.")
@click.option("--secure-cookies", is_flag=True,
              help="Mark cookies Secure whatever the request says (TLS in front that sends no X-Forwarded-Proto).")
@no_remember_option
@database_option
def serve_command(host, port, allowed_hosts, idle_minutes, session_hours, max_connections, connections_per_login,
                  certfile, keyfile, forwarded_allow_ips, read_url, secure_cookies, no_remember):
    """Serve the review web app: reviewers score their runs in a browser, auditors and RevOps read.

    Each person signs in with their own database login and password, and every query of their
    session runs as that login, so row-level security decides what they see and may change. A
    login the server lets in without its password (trust, peer), a superuser, and a member of the
    ledger's code or owner role are refused. The database is the one every command uses
    (--database-url, DATABASE_URL or the embedded server); with --read-url, or on a standby, it
    serves auditors and RevOps only. Stop it with Ctrl+C.
    """
    import uvicorn

    from .app import create_app

    import logging

    if bool(certfile) != bool(keyfile):
        raise EvalledgerError("--certfile and --keyfile go together")
    hosts = served_hosts(host, allowed_hosts)
    if read_url is not None:
        db.use_read_url(read_url)
        url = db.read_url()
        db.check_url(url)
    else:
        url = db.database_url()
    app = create_app(url, idle_minutes, session_hours=session_hours, hosts=hosts, secure_cookies=secure_cookies,
                     connections_per_login=connections_per_login, max_connections=max_connections,
                     readers_only=read_url is not None, remember=not no_remember)
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(levelname)s:     %(message)s"))
    sign_ins = logging.getLogger("evalledger.web")  # sign-ins, failures and throttling (never a password)
    sign_ins.addHandler(handler)
    sign_ins.setLevel(logging.INFO)
    scheme = "https" if certfile else "http"
    if not _loopback(host) and not (certfile or forwarded_allow_ips or secure_cookies):
        click.echo(f"evalledger: warning: listening on {host}: other machines can reach the sign-in page, and "
                   "passwords travel unencrypted unless TLS is in front", err=True)
    click.echo(f"evalledger review on {scheme}://{host if ':' not in host else f'[{host}]'}:{port}/ "
               f"(database {db.describe(url)}{'; readers only' if read_url is not None else ''}; answering for "
               f"{', '.join(hosts)}); Ctrl+C stops it")
    uvicorn.run(app, host=host, port=port, log_level="info", server_header=False,
                ssl_certfile=certfile, ssl_keyfile=keyfile,
                proxy_headers=bool(forwarded_allow_ips), forwarded_allow_ips=forwarded_allow_ips or "")


COMMANDS = [serve_command]
