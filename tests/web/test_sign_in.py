"""Signing in to the review web app, over plain HTTP (no browser is the point here): a login must
prove its password and be no superuser nor the ledger's code or owner role, on any server; the Host
header must name this app; connections are capped per login and in all; failed sign-ins are
throttled and logged without passwords; cookies are Secure behind TLS; a session has an absolute
lifetime; sign-in returns to the page it interrupted."""

from __future__ import annotations

import logging
import os
import secrets
import subprocess
import sys
import threading
import time

import httpx2
import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from evalledger.web.auth import Throttle
from tests.conftest import OTHER_REVIEWER_ROLE, REVIEWER_ROLE, TEST_PASSWORD
from tests.web.conftest import AUDITOR_ROLE, Client, _free_port, login_connections


@pytest.fixture
def roles(web_admin):
    """Make throwaway login roles with TEST_PASSWORD (role options and memberships as given); dropped after."""
    made = []

    def make(options: str = "", member_of: tuple[str, ...] = ("evalledger_reviewer",), setting: str = "") -> str:
        name = f"evalledger_test_web_{secrets.token_hex(3)}"
        web_admin.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {} " + options).format(
            sql.Identifier(name), sql.Literal(TEST_PASSWORD)))
        made.append(name)
        for role in member_of:
            web_admin.execute(sql.SQL("GRANT {} TO {}").format(sql.Identifier(role), sql.Identifier(name)))
        if setting:
            web_admin.execute(sql.SQL("ALTER ROLE {} SET " + setting).format(sql.Identifier(name)))
        return name

    yield make
    for name in made:
        web_admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (name,))
        web_admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(name)))


def test_a_login_the_server_trusts_is_refused_whatever_password_is_typed(web, client, caplog):
    user = conninfo_to_dict(web.dsn).get("user") or "postgres"
    with psycopg.connect(web.dsn) as conn:
        if conn.pgconn.used_password:
            pytest.skip(f"this server asks {user} for its password: no trusted login to try")
    caplog.set_level(logging.INFO, logger="evalledger.web")
    stranger = client(web.base)
    for password in ("anything", TEST_PASSWORD, "x" * 64):
        refused = stranger.sign_in(user, password)
        assert refused.status_code == 401
        assert "sign-in refused: wrong login or password" in refused.text
        assert "evalledger_session" not in stranger.http.cookies
    assert stranger.http.get("/runs").status_code == 303
    assert f"sign-in failed: login {user!r} from 127.0.0.1: the server did not ask for the password" in caplog.text
    assert "anything" not in caplog.text and TEST_PASSWORD not in caplog.text
    assert login_connections(web.admin, user, at_most=0) == 0  # every checking connection closed


@pytest.mark.parametrize("options, member_of, setting", [
    ("SUPERUSER", (), ""),
    ("", ("evalledger_owner", "evalledger_reviewer"), ""),
    ("", ("evalledger_code", "evalledger_auditor"), ""),
    ("BYPASSRLS", ("evalledger_revops",), ""),
    ("CREATEROLE", ("evalledger_reviewer",), ""),
    ("", ("evalledger_reviewer",), "role = 'evalledger_reviewer'"),
], ids=["superuser", "owner-member", "code-member", "bypassrls", "createrole", "switches-role"])
def test_a_privileged_login_is_refused_with_its_right_password(web, client, roles, caplog, options, member_of,
                                                                setting):
    caplog.set_level(logging.INFO, logger="evalledger.web")
    name = roles(options, member_of, setting)
    stranger = client(web.base)
    refused = stranger.sign_in(name)
    assert refused.status_code == 403
    assert f"sign-in refused: {name} is, or may act as, a superuser" in refused.text
    assert "evalledger_session" not in stranger.http.cookies
    assert login_connections(web.admin, name, at_most=0) == 0  # the checking connection is closed
    assert f"sign-in refused: login {name!r} from 127.0.0.1: a privileged login" in caplog.text


def test_a_member_of_a_superuser_role_is_refused(web, client, roles):
    boss = roles("SUPERUSER", ())
    name = roles("", ("evalledger_reviewer", boss))
    assert client(web.base).sign_in(name).status_code == 403


def test_the_host_header_must_name_this_server(web, serve, client):
    stranger = client(web.base)
    rebinding = stranger.http.get("/sign-in", headers={"Host": "rebind.attacker.example"})
    assert rebinding.status_code == 400
    assert "this server answers for 127.0.0.1, ::1, localhost" in rebinding.text
    assert rebinding.headers["x-content-type-options"] == "nosniff"
    assert "set-cookie" not in rebinding.headers
    port = web.base.rsplit(":", 1)[1]
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", "LOCALHOST"):
        assert stranger.http.get("/sign-in", headers={"Host": host}).status_code == 200, host
    # A sign-in through a rebound name is refused before the password is read.
    page = stranger.http.get("/sign-in")
    forged = stranger.http.post("/sign-in", headers={"Host": "rebind.attacker.example"},
                                data={"csrf_token": page.text.split('name="csrf_token" value="')[1].split('"')[0],
                                      "login": REVIEWER_ROLE, "password": TEST_PASSWORD})
    assert forged.status_code == 400 and "evalledger_session" not in stranger.http.cookies

    named = client(serve(hosts=["review.example.org"]))
    assert named.http.get("/sign-in", headers={"Host": "review.example.org:443"}).status_code == 200
    assert named.http.get("/sign-in").status_code == 400  # 127.0.0.1 is not a name it serves


def test_72_sign_ins_of_one_reviewer_hold_at_most_two_connections(web, client, web_admin):
    reviewers = [client(web.base) for _ in range(72)]
    for reviewer in reviewers:
        assert reviewer.sign_in(REVIEWER_ROLE).status_code == 303
        assert login_connections(web_admin, REVIEWER_ROLE, at_most=2) <= 2
    statuses, errors = [], []

    def browse(reviewer):
        try:
            for _ in range(3):
                statuses.append(reviewer.http.get("/queue").status_code)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=browse, args=(r,)) for r in reviewers]
    peak = 0
    for thread in threads:
        thread.start()
    while any(t.is_alive() for t in threads):
        peak = max(peak, login_connections(web_admin, REVIEWER_ROLE))
        time.sleep(0.01)
    assert not errors and statuses == [200] * 216
    assert peak <= 2 and login_connections(web_admin, REVIEWER_ROLE) <= 2
    # Every other login still gets in, to the app and to the database.
    assert client(web.base).sign_in(OTHER_REVIEWER_ROLE).status_code == 303
    with psycopg.connect(make_conninfo(web.dsn, user=AUDITOR_ROLE, password=TEST_PASSWORD)) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)


def test_the_app_holds_at_most_its_connections_for_every_login_together(serve, client, web_admin, roles):
    base = serve(max_connections=2)
    logins = (roles(), roles(), roles(member_of=("evalledger_auditor",)))
    signed = {login: client(base) for login in logins}
    for login, browser in signed.items():
        assert browser.sign_in(login).status_code == 303
        assert login_connections(web_admin, *logins, at_most=2) <= 2
    for _ in range(2):  # each reconnects, closing the idle connection least recently used
        for login, browser in signed.items():
            assert browser.http.get("/runs" if login == logins[2] else "/queue").status_code == 200
            assert login_connections(web_admin, *logins, at_most=2) <= 2


def test_failed_sign_ins_are_throttled_and_logged_without_passwords(serve, client, caplog):
    caplog.set_level(logging.INFO, logger="evalledger.web")
    now = [1000.0]
    base = serve(throttle=Throttle(clock=lambda: now[0]))
    guesser = client(base)
    checked = 0
    for attempt in range(300):
        response = guesser.sign_in(REVIEWER_ROLE, f"guess-{attempt}")
        if response.status_code == 429:
            break
        assert response.status_code == 401
        checked += 1
    assert checked == 6  # five free failures, then a wait that doubles with each one
    assert "too many failed sign-ins for this login: try again in 2 seconds" in response.text
    assert response.headers["retry-after"] == "2"
    assert f'value="{REVIEWER_ROLE}"' in response.text  # the login stays typed
    # The right password is refused unread while the wait lasts, then works.
    assert guesser.sign_in(REVIEWER_ROLE).status_code == 429
    now[0] += 2.5
    assert guesser.sign_in(REVIEWER_ROLE).status_code == 303
    assert f"sign-in failed: login {REVIEWER_ROLE!r} from 127.0.0.1: wrong password or no such login " \
           "(6 failed from there in 15 minutes)" in caplog.text
    assert f"sign-in throttled: login {REVIEWER_ROLE!r} from 127.0.0.1: retry in 2 s" in caplog.text
    assert "guess-" not in caplog.text and TEST_PASSWORD not in caplog.text
    # Another reviewer, from the same address, is not held up by it.
    assert client(base).sign_in(OTHER_REVIEWER_ROLE).status_code == 303


def test_the_throttle_doubles_its_wait_per_login_per_address_and_per_pair():
    now = [0.0]
    throttle = Throttle(clock=lambda: now[0])
    waits = []
    for _ in range(9):
        throttle.failed("alice", "10.0.0.1")
        waits.append(throttle.wait("alice", "10.0.0.1"))
    assert waits == [0, 0, 0, 0, 0, 1, 2, 4, 8]
    assert throttle.wait("alice", "10.0.0.2") == 0  # alice from elsewhere: under the login's own 20
    assert throttle.wait("bob", "10.0.0.1") == 0  # the address: under its 10
    for n in range(12):
        throttle.failed(f"user{n}", "10.0.0.9")
    assert throttle.wait("carol", "10.0.0.9") == 2  # 12 failures from one address, whatever the logins
    now[0] += 901
    assert throttle.wait("alice", "10.0.0.1") == 0 and throttle.wait("carol", "10.0.0.9") == 0
    for _ in range(6):
        throttle.failed("dave", "10.0.0.3")
    throttle.succeeded("dave", "10.0.0.3")
    assert throttle.wait("dave", "10.0.0.3") == 0


def test_cookies_are_secure_behind_tls(web, serve, client):
    plain = client(web.base).http.get("/sign-in")
    assert "secure" not in plain.headers["set-cookie"].lower()
    forced = client(serve(secure_cookies=True)).http.get("/sign-in")
    assert "; secure" in forced.headers["set-cookie"].lower()
    proxied = client(serve(uvicorn_options={"proxy_headers": True, "forwarded_allow_ips": "127.0.0.1"}))
    assert "; secure" in proxied.http.get("/sign-in", headers={"X-Forwarded-Proto": "https"}
                                          ).headers["set-cookie"].lower()
    assert "secure" not in proxied.http.get("/sign-in").headers["set-cookie"].lower()


def test_a_session_ends_at_its_lifetime_however_active(serve, client):
    base = serve(session_hours=4 / 3600)  # four seconds
    reviewer = client(base)
    assert reviewer.sign_in(REVIEWER_ROLE).status_code == 303
    # Counted from after the sign-in answered, so the session is at least this old (a loaded
    # machine may take a while to answer), and active all the while for the first two seconds.
    signed_in = time.monotonic()
    while time.monotonic() - signed_in < 2:
        assert reviewer.http.get("/queue").status_code == 200
        time.sleep(0.2)
    time.sleep(max(0.0, 4.3 - (time.monotonic() - signed_in)))
    ended = reviewer.http.get("/queue")
    assert ended.status_code == 303 and ended.headers["location"] == "/sign-in?next=/queue"


def test_an_idle_session_expires(serve, client):
    base = serve(idle_minutes=1 / 60)  # a second
    reviewer = client(base)
    assert reviewer.sign_in(REVIEWER_ROLE).status_code == 303
    assert reviewer.http.get("/queue").status_code == 200
    time.sleep(1.5)
    expired = reviewer.http.get("/queue")
    assert expired.status_code == 303 and expired.headers["location"].startswith("/sign-in")


def test_an_expired_session_closes_its_connections_without_a_request(serve, client, web_admin, roles):
    base = serve(idle_minutes=1 / 60)
    login = roles()  # a login no other app of the module holds connections for
    reviewer = client(base)
    assert reviewer.sign_in(login).status_code == 303
    assert login_connections(web_admin, login) == 1
    time.sleep(1.2)  # ended, and no request since
    deadline = time.monotonic() + 10
    while login_connections(web_admin, login) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert login_connections(web_admin, login) == 0


def test_sign_in_returns_to_the_page_it_interrupted_and_only_to_this_site(web, client):
    page = f"/runs/{web.open_a}/questions/EVAL-Q05"
    reviewer = client(web.base)
    sent = reviewer.http.get(page)
    assert sent.status_code == 303 and sent.headers["location"] == f"/sign-in?next={page}"
    form = reviewer.http.get(sent.headers["location"])
    assert f'name="next" value="{page}"' in form.text
    back = reviewer.sign_in(REVIEWER_ROLE, next=page)
    assert back.status_code == 303 and back.headers["location"] == page
    for elsewhere in ("//attacker.example/x", "https://attacker.example/", "/\\attacker.example", "javascript:x"):
        assert client(web.base).sign_in(REVIEWER_ROLE, next=elsewhere).headers["location"] == "/"


def test_a_wrong_password_keeps_the_login_typed(web, client):
    refused = client(web.base).sign_in(REVIEWER_ROLE, "not-the-password")
    assert refused.status_code == 401
    assert f'value="{REVIEWER_ROLE}"' in refused.text


def test_the_session_cookie_is_opaque_and_sign_out_forgets_it(web, client, caplog):
    caplog.set_level(logging.DEBUG)
    reviewer = client(web.base)
    signed_in = reviewer.sign_in(REVIEWER_ROLE)
    cookie = signed_in.headers["set-cookie"]
    assert "HttpOnly" in cookie and "samesite=strict" in cookie.lower() and "Path=/" in cookie
    value = reviewer.http.cookies["evalledger_session"]
    assert TEST_PASSWORD not in cookie and REVIEWER_ROLE not in value and len(value) >= 40
    page, token = reviewer.form_of("/queue")
    assert page.status_code == 200 and TEST_PASSWORD not in page.text
    assert reviewer.http.post("/sign-out", data={"csrf_token": token}).status_code == 303
    reviewer.http.cookies.set("evalledger_session", value)  # the old id, replayed
    replayed = reviewer.http.get("/queue")
    assert replayed.status_code == 303 and replayed.headers["location"].startswith("/sign-in")
    assert TEST_PASSWORD not in caplog.text


def test_a_405_names_what_is_allowed_and_static_files_are_not_sniffed(web, client):
    stranger = client(web.base)
    wrong = stranger.http.delete("/sign-in")
    assert wrong.status_code == 405 and set(wrong.headers["allow"].replace(" ", "").split(",")) >= {"GET", "POST"}
    asset = stranger.http.get("/static/review.css")
    assert asset.status_code == 200 and asset.headers["x-content-type-options"] == "nosniff"
    assert asset.headers["x-frame-options"] == "DENY"


def test_evalledger_serve_answers_for_its_hosts_and_logs_no_password(web, tmp_path):
    """The command itself: `evalledger serve --port N` on the test database, signed into once."""
    port = _free_port()
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        server = subprocess.Popen([sys.executable, "-m", "evalledger.cli", "serve", "--port", str(port),
                                   "--database-url", web.dsn], stdout=out, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx2.get(f"{base}/sign-in", timeout=2)
                break
            except httpx2.TransportError:
                assert server.poll() is None and time.monotonic() < deadline, log.read_text()
                time.sleep(0.1)
        reviewer = Client(base)
        assert reviewer.sign_in(REVIEWER_ROLE).status_code == 303
        assert reviewer.http.get("/queue").status_code == 200
        reviewer.close()
        stranger = Client(base)
        assert stranger.sign_in(OTHER_REVIEWER_ROLE, "a-wrong-password").status_code == 401
        assert stranger.http.get("/sign-in", headers={"Host": "rebind.example"}).status_code == 400
        stranger.close()
    finally:
        server.terminate()
        server.wait(timeout=20)
    printed = log.read_text()
    assert f"evalledger review on http://127.0.0.1:{port}/" in printed
    assert "answering for 127.0.0.1, localhost, ::1" in printed
    assert "GET /queue" in printed  # uvicorn's access log: paths only
    assert f"sign-in failed: login {OTHER_REVIEWER_ROLE!r} from 127.0.0.1" in printed
    assert TEST_PASSWORD not in printed and "a-wrong-password" not in printed


def test_serve_on_every_address_needs_the_names_it_answers_for():
    from tests.cli import run_cli

    refused = run_cli("serve", "--host", "0.0.0.0", "--database-url", "postgresql://nowhere/x")
    assert refused.code == 3, refused
    assert "--host 0.0.0.0 listens on every address: give --allowed-host NAME" in refused.err
    alone = run_cli("serve", "--certfile", os.devnull, "--database-url", "postgresql://nowhere/x")
    assert alone.code == 3 and "--certfile and --keyfile go together" in alone.err


def test_an_app_serving_readers_only_sends_reviewers_to_the_primary(serve, client, web, web_admin, roles):
    """`serve --read-url` (or any app on a standby) serves auditors and RevOps: a reviewer's login is
    refused at sign-in, saying where to go, and leaves no session and no connection behind; a login
    that is both reviewer and auditor reads, and is offered no review queue."""
    base = serve(readers_only=True)
    alone = roles()  # a reviewer no other app of the module holds connections for
    reviewer = client(base)
    refused = reviewer.sign_in(alone)
    assert refused.status_code == 403
    assert ("sign-in refused: this app serves auditors and RevOps from a copy of the ledger that takes no writes "
            "(a standby, or --read-url): reviewers sign in to the review app on the primary") in refused.text
    assert "evalledger_session" not in reviewer.http.cookies
    assert login_connections(web_admin, alone, at_most=0) == 0
    auditor = client(base)
    assert auditor.sign_in(AUDITOR_ROLE).headers["location"] == "/"
    assert auditor.http.get("/").headers["location"] == "/runs"
    both = roles("", ("evalledger_reviewer", "evalledger_auditor"))
    reader = client(base)
    assert reader.sign_in(both).status_code == 303
    assert reader.http.get("/").headers["location"] == "/runs"
    assert reader.http.get(f"/runs/{web.completed_a}").status_code == 200
    assert reader.http.get("/queue").status_code == 403
