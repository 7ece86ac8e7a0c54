"""`evalledger doctor`: is this database a sound evalledger ledger?"""

from __future__ import annotations

from dataclasses import dataclass

import psycopg

from evalledger import __version__
from evalledger.core import db, queries
from evalledger.core.migrate import status
from evalledger.core.queries import Queries
from evalledger.core.versions import ledger_message, ledger_versions, newer_ledger_message

from .retention import RETENTION_ROLE

QUERIES = Queries(__package__)

LEDGER_TABLES = ("target", "rubric", "rubric_activation", "reviewer", "prompt_tuner", "brain_analysis_log",
                 "brain_eval_log", "brain_eval_question_score", "legal_hold", "legal_hold_release")
# The guards each ledger table must carry; their absence means the table is not append-only.
GUARD_TRIGGERS = {
    **{t: (f"{t}_00_no_truncate",) for t in LEDGER_TABLES},
    "target": ("target_00_append_only", "target_00_no_truncate"),
    "rubric": ("rubric_00_append_only", "rubric_00_no_truncate", "rubric_05_admit", "rubric_10_fingerprint"),
    "rubric_activation": ("rubric_activation_00_append_only", "rubric_activation_00_no_truncate",
                          "rubric_activation_10_admit"),
    "reviewer": ("reviewer_00_append_only", "reviewer_00_no_truncate"),
    "prompt_tuner": ("prompt_tuner_00_append_only", "prompt_tuner_00_no_truncate", "prompt_tuner_10_admit"),
    "brain_analysis_log": ("brain_analysis_log_00_append_only", "brain_analysis_log_00_no_truncate"),
    "brain_eval_log": ("brain_eval_log_00_append_only", "brain_eval_log_00_no_truncate",
                       "brain_eval_log_10_admit", "brain_eval_log_10_guard_update", "brain_eval_log_20_decide"),
    "brain_eval_question_score": ("brain_eval_question_score_00_append_only",
                                  "brain_eval_question_score_00_no_truncate",
                                  "brain_eval_question_score_10_write"),
    "legal_hold": ("legal_hold_00_append_only", "legal_hold_00_no_truncate"),
    "legal_hold_release": ("legal_hold_release_00_append_only", "legal_hold_release_00_no_truncate",
                           "legal_hold_release_10_admit"),
}
EVENT_TRIGGERS = ("evalledger_ddl_guard_v1", "evalledger_drop_guard_v1")
CODE_ROLE = "evalledger_code"
# What the event triggers refuse (docs/guards.md, "Insiders"); without them, nobody refuses it to
# whoever may act as the code role.
EVENT_TRIGGER_PROTECTIONS = (
    "DDL on ledger objects outside a migration (ALTER TABLE of any kind, CREATE RULE/POLICY/TRIGGER/INDEX, "
    "ALTER POLICY/TRIGGER/FUNCTION, GRANT, REVOKE, ALTER DEFAULT PRIVILEGES)",
    "DISABLE TRIGGER, ENABLE [REPLICA] TRIGGER, NO FORCE / DISABLE ROW LEVEL SECURITY, SET UNLOGGED, "
    "OWNER TO, SET SCHEMA, DETACH PARTITION and rules on ledger tables",
    "dropping a ledger table, column, constraint, index, trigger, policy, rule, view, function or the schema",
)


@dataclass(frozen=True)
class Finding:
    """One check's outcome: level is ok, warn or fail."""

    level: str
    check: str
    detail: str


# Every role the ledger makes: the six that commands act as, the code role that owns the schema and
# the retention role that alone purges. These three own or delete: none may log in.
ALL_ROLES = (*db.ROLES.values(), CODE_ROLE, RETENTION_ROLE)
NOLOGIN_ROLES = ("evalledger_owner", CODE_ROLE, RETENTION_ROLE)


def _roles(conn: psycopg.Connection) -> list[Finding]:
    rows = {r[0]: r[1:] for r in conn.execute(QUERIES["doctor_roles"], {"roles": list(ALL_ROLES)})}
    missing = [r for r in ALL_ROLES if r not in rows]
    if missing:
        return [Finding("fail", "roles", f"missing: {', '.join(missing)}")]
    risky = [name for name in ALL_ROLES if rows[name][0] or rows[name][1]]
    if risky:
        return [Finding("fail", "roles", f"superuser or BYPASSRLS: {', '.join(risky)}")]
    logins = [name for name in NOLOGIN_ROLES if rows[name][2]]
    if logins:
        return [Finding("fail", "roles", f"can log in: {', '.join(logins)}; "
                                         f"{'it' if len(logins) == 1 else 'each'} should be NOLOGIN")]
    return [Finding("ok", "roles", f"all {len(ALL_ROLES)} present; none superuser or BYPASSRLS; "
                                   f"{', '.join(NOLOGIN_ROLES)} NOLOGIN")]


# The application roles commands act as (SET ROLE); a reviewer acts as its own login role.
ACTED_AS = ("owner", "runner", "auditor", "revops")


def _memberships(conn: psycopg.Connection) -> list[Finding]:
    """Can the connecting user SET ROLE to each role the commands act as? Migrating makes it a member
    of evalledger_owner only; without the others every list, run and record fails."""
    wanted = [db.ROLES[r] for r in ACTED_AS]
    user, *_ = conn.execute(QUERIES["doctor_session_user"]).fetchone()
    missing = [r[0] for r in conn.execute(QUERIES["doctor_memberships"], {"roles": wanted})]
    found = [Finding("fail", "memberships", f"{user} cannot act as {', '.join(missing)}, which commands SET ROLE "
                                            f"to: GRANT {', '.join(missing)} TO {user}")] if missing else \
        [Finding("ok", "memberships", f"{user} may act as {', '.join(wanted)}")]
    # Only the retention role purges: without it `retention apply` is refused (not an error elsewhere).
    if conn.execute(QUERIES["doctor_memberships"], {"roles": [RETENTION_ROLE]}).fetchone():
        found.append(Finding("warn", "retention", f"{user} cannot act as {RETENTION_ROLE}, so `evalledger retention "
                                                  f"apply` purges nothing: GRANT {RETENTION_ROLE} TO {user}"))
    return found


def _version(conn: psycopg.Connection) -> list[Finding]:
    """The package's version and the ledger's last migration, and which one is ahead."""
    found = ledger_versions(conn)
    if found is None:
        return [Finding("warn", "version", f"evalledger {__version__}; the ledger's migrations are not readable "
                                           "by this user, so which one is newer is unknown")]
    said = f"evalledger {found.package}, the ledger's last migration {found.last_applied or 'none'}"
    if found.folded:
        return [Finding("fail", "version", f"{said}: {ledger_message(found)}; every command that writes "
                                           "refuses (exit 3)")]
    if found.unknown:
        return [Finding("warn", "version", f"{said}: {newer_ledger_message(found)}; every command that writes "
                                           "refuses (exit 3) until then")]
    if found.pending:
        return [Finding("warn", "version", f"{said}: the package is newer (it brings {', '.join(found.pending)}): "
                                           "run `evalledger db migrate`")]
    return [Finding("ok", "version", f"{said}: they agree")]


def clusters_left_behind() -> list[Finding]:
    """Embedded clusters (root's, outside any home) whose EVALLEDGER_HOME is gone: disk nobody frees."""
    from evalledger.core.embedded import orphaned_clusters

    found = orphaned_clusters()
    if not found:
        return []
    listed = "; ".join(f"{base} (home {home}, {_size_mb(base)} MB)" for base, home in found)
    return [Finding("warn", "embedded clusters", f"{len(found)} outlived {'its' if len(found) == 1 else 'their'} "
                                                 f"EVALLEDGER_HOME: {listed}; remove each with "
                                                 "`EVALLEDGER_HOME=<home> evalledger db reset --yes`")]


def _size_mb(folder) -> int:
    total = 0
    for path in folder.rglob("*"):
        try:
            total += path.stat().st_size if path.is_file() else 0
        except OSError:
            pass
    return round(total / 2**20)


def _guards(conn: psycopg.Connection) -> list[Finding]:
    present = {(t, g): enabled for t, g, enabled in conn.execute(QUERIES["doctor_triggers"])}
    missing = [f"{t}.{g}" for t, names in GUARD_TRIGGERS.items() for g in names if (t, g) not in present]
    weak = [f"{t}.{g}" for (t, g), enabled in present.items() if enabled != "A"]
    unforced = [r[0] for r in conn.execute(QUERIES["doctor_unforced_rls"])]
    findings = []
    if missing:
        findings.append(Finding("fail", "guard triggers", f"missing: {', '.join(missing)}"))
    if weak:
        findings.append(Finding("fail", "guard triggers", f"not ENABLE ALWAYS: {', '.join(weak)}"))
    if unforced:
        findings.append(Finding("fail", "row-level security", f"not enabled and forced on: {', '.join(unforced)}"))
    if not findings:
        count = sum(len(names) for names in GUARD_TRIGGERS.values())
        findings.append(Finding("ok", "guard triggers", f"{count} present, all ENABLE ALWAYS; RLS forced on every table"))
    return findings


def _code(conn: psycopg.Connection) -> list[Finding]:
    """The code role owns every ledger object, cannot log in, and no login may act as it but the
    installer where no superuser installed; nobody else creates names in the schema; every definer
    function resolves names in pg_catalog only."""
    row = conn.execute(QUERIES["doctor_code_role"]).fetchone()
    if row is None:
        return [Finding("fail", "code", f"role {CODE_ROLE} missing: the ledger has no code owner")]
    can_login, privileged, members = row
    findings = []
    if can_login or privileged:
        findings.append(Finding("fail", "code", f"{CODE_ROLE} can log in or is superuser/BYPASSRLS"))
    if members:
        findings.append(Finding("warn", "code", f"logins that may act as {CODE_ROLE} and so lift every guard: "
                                                f"{', '.join(members)} (expected only where no superuser "
                                                "installed: the installer)"))
    not_owned = [r[0] for r in conn.execute(QUERIES["doctor_not_owned_by_code"])]
    if not_owned:
        findings.append(Finding("fail", "code", f"not owned by {CODE_ROLE}: {', '.join(not_owned)}"))
    creators = [r[0] for r in conn.execute(QUERIES["doctor_schema_creators"])]
    if creators:
        findings.append(Finding("fail", "code", f"may create names in schema evalledger: {', '.join(creators)}"))
    unsafe = [r[0] for r in conn.execute(QUERIES["doctor_unsafe_definers"])]
    if unsafe:
        findings.append(Finding("fail", "code", "SECURITY DEFINER without search_path = pg_catalog, pg_temp: "
                                                f"{', '.join(unsafe)}"))
    if not findings:
        findings.append(Finding("ok", "code", f"{CODE_ROLE} owns every ledger object, no login acts as it; "
                                              "no one else creates in the schema; definer code reads pg_catalog only"))
    return findings


def _event_triggers(conn: psycopg.Connection) -> list[Finding]:
    found = dict(conn.execute(QUERIES["doctor_event_triggers"], {"names": list(EVENT_TRIGGERS)}).fetchall())
    if not found:
        return [Finding("warn", "event triggers",
                        "absent: the user who migrated was not a superuser (managed servers do not allow "
                        f"event triggers), so whoever may act as {CODE_ROLE} is not refused: "
                        + "; ".join(EVENT_TRIGGER_PROTECTIONS) + "; see docs/guards.md")]
    weak = [f"{name} ({state})" for name, state in found.items() if state != "A"]
    missing = [name for name in EVENT_TRIGGERS if name not in found]
    if missing or weak:
        return [Finding("fail", "event triggers", f"missing: {missing}; not ENABLE ALWAYS: {weak}")]
    return [Finding("ok", "event triggers", "DDL allow-list and DROP guards present, ENABLE ALWAYS")]


def _large_objects(conn: psycopg.Connection) -> list[Finding]:
    """Any login may store large objects (outside every ledger table) unless a superuser revoked
    their creation, as the baseline does where it can: quiet when revoked."""
    creators = [r[0] for r in conn.execute(QUERIES["doctor_large_object_creation"])]
    if not creators:
        return []
    return [Finding("warn", "large objects", f"PUBLIC may still call {', '.join(creators)}: any login can store data "
                                             "outside the ledger; a superuser revokes it (REVOKE EXECUTE ... FROM PUBLIC)")]


def _capture_failures(conn: psycopg.Connection) -> list[Finding]:
    """Seed 001: warn when captures failed in the last 24 hours, with a count per reason.

    Quiet (no finding) when there were none, when the capture tables are not there, and when the
    connecting user may not read them: doctor then says nothing rather than something untrue."""
    try:
        if not conn.execute(QUERIES["doctor_capture_installed"]).fetchone()[0]:
            return []
        counts = conn.execute(QUERIES["doctor_capture_failures"]).fetchall()
    except psycopg.errors.InsufficientPrivilege:
        return []
    total = sum(n for _, n in counts)
    if not total:
        return []
    per_reason = ", ".join(f"{reason} {n}" for reason, n in counts)
    return [Finding("warn", "capture failures", f"{total} in the last 24 hours ({per_reason}); "
                                                "see evalledger.eval_capture_failures")]


def _capture_dropped() -> list[Finding]:
    """Captured rows this EVALLEDGER_HOME's processes dropped (neither stored nor spooled: the
    spool's disk refused them), from the count beside the spool; quiet when there were none."""
    from evalledger.suites.capture.settings import spool_path
    from evalledger.suites.capture.spool import Spool

    count = Spool(spool_path()).dropped
    try:
        dropped = count.read()
    except (OSError, ValueError) as exc:
        return [Finding("warn", "capture dropped", f"{count.path} is unreadable ({exc}): captured rows may have been "
                                                   "dropped; see docs/capture.md")]
    if not dropped.rows:
        return []
    return [Finding("warn", "capture dropped", f"{dropped.rows} captured rows were neither stored nor spooled, "
                                               f"from {dropped.first_at} to {dropped.last_at} (the spool refused "
                                               f"them: {dropped.last_error}); they are lost. Once the disk is "
                                               f"fixed, delete {count.path} to clear this")]


# A standby whose primary has said nothing for this long has probably lost it (the primary sends a
# keepalive at least every wal_sender_timeout / 2, 30 s by default).
PRIMARY_SILENT_S = 90


def _replication(conn: psycopg.Connection) -> list[Finding]:
    """On a standby, its lag behind the primary; on a primary, its standbys, idle slots and WAL archive."""
    if conn.execute(queries.get("in_recovery")).fetchone()[0]:
        status, host, port, behind, silent, since_commit, receiving = conn.execute(QUERIES["doctor_standby"]).fetchone()
        if not receiving:
            return [Finding("fail", "replica", "a standby that receives no WAL: its primary is down or unreachable "
                                               "(see the standby's server.log); it serves what it had")]
        if host is None:
            return [Finding("warn", "replica", "a standby; its lag is hidden from this user (grant it pg_read_all_stats)")]
        commit = f"; last commit replayed {since_commit:.0f} s ago" if since_commit is not None else ""
        detail = (f"standby of {host}:{port}, {status}: {max(behind or 0, 0):.0f} bytes of the primary's WAL not yet "
                  f"replayed, primary last heard {silent:.1f} s ago{commit}")
        return [Finding("warn" if status != "streaming" or silent > PRIMARY_SILENT_S else "ok", "replica", detail)]
    findings = []
    standbys = conn.execute(QUERIES["doctor_standbys"]).fetchall()
    if standbys:
        listed = "; ".join(f"{name or where} ({state}, replay lag {lag or 0:.1f} s, {behind or 0:.0f} bytes)"
                           for where, name, state, lag, behind in standbys)
        findings.append(Finding("ok", "standbys", f"{len(standbys)} streaming: {listed}"))
    for slot, held in conn.execute(QUERIES["doctor_idle_slots"]):
        findings.append(Finding("warn", "replication slots", f"{slot} has no standby and keeps {held / 2**20:.0f} MB of "
                                                             "WAL here, growing: start its replica, or drop the slot if "
                                                             f"the replica is gone: SELECT pg_drop_replication_slot('{slot}')"))
    mode, last, age, failed, failing = conn.execute(QUERIES["doctor_archiver"]).fetchone()
    if mode != "off" and failing:
        findings.append(Finding("fail", "wal archive", f"archiving fails (last failure: segment {failed}); WAL piles "
                                                       "up in pg_wal until it works again: see the server's log"))
    elif mode != "off":
        findings.append(Finding("ok", "wal archive", f"on; last segment {last} archived {age:.0f} s ago" if last
                                else "on; no segment archived yet"))
    return findings


# How long journal entries may wait for a seal, and a newer block for a digest, before doctor warns.
SEAL_DUE_HOURS = 24
# How long a transaction that may write the ledger may stay open before doctor names it (a seal waits for it).
WRITER_OPEN_SECONDS = 60.0


def _journal(conn: psycopg.Connection) -> list[Finding]:
    """The journal covers every ledger table, a block was sealed within a day of any entry waiting,
    and a digest was taken of the blocks sealed since (read as the owner role, which reads the journal)."""
    from evalledger.ledger.journal import QUERIES as LEDGER

    if not conn.execute(LEDGER["installed"]).fetchone()[0]:
        return []
    try:
        conn.execute(psycopg.sql.SQL("SET ROLE {}").format(psycopg.sql.Identifier(db.ROLES["owner"])))
        try:
            problems = conn.execute(LEDGER["coverage"]).fetchall()
        except psycopg.errors.UndefinedFunction:
            # A ledger older than this package checks its coverage with the version it has, which
            # this package no longer names: the version line already says to migrate.
            problems = [("", "coverage not checked: the ledger lacks this package's journal_coverage_v2 "
                             "(run `evalledger db migrate`)")]
        sealed_at, digest_at, waiting_since, newest = conn.execute(LEDGER["health"]).fetchone()
        due = conn.execute(QUERIES["doctor_hours_ago"], {"hours": SEAL_DUE_HOURS}).fetchone()[0]
    except (psycopg.errors.InsufficientPrivilege, psycopg.errors.InvalidParameterValue):
        return []  # the connecting user may not act as the owner role: the memberships check says so
    finally:
        conn.execute(queries.get("reset_session"))
        conn.execute(QUERIES["doctor_search_path"])
    findings = [Finding("fail" if table else "warn", "journal", f"{table} {problem}".strip()) for table, problem in problems]
    try:  # as the connecting login, which sees the age of every transaction when it is the installer
        held = conn.execute(LEDGER["writers_open"], {"seconds": WRITER_OPEN_SECONDS}).fetchall()
    except (psycopg.errors.InsufficientPrivilege, psycopg.errors.UndefinedFunction):
        held = []  # a login that may not ask, or a ledger without this package's migrations (the version line says)
    for pid, login, age in held:
        who = f"{login} (pid {pid})" if pid is not None else f"{login}'s prepared transaction"
        since = f"open for {_duration(age)}" if age is not None else "open (its age is not visible to this login)"
        findings.append(Finding("warn", "journal", f"{who} holds a transaction that may write the ledger {since}: every "
                                                   "seal leaves the entries after it unsealed until it ends"))
    if waiting_since is not None and waiting_since < due:
        findings.append(Finding("warn", "journal", f"entries written since {waiting_since:%Y-%m-%d %H:%M} UTC are not "
                                                   f"sealed (no block for over {SEAL_DUE_HOURS} hours): run "
                                                   "`evalledger ledger seal`, from a scheduler"))
    if newest is not None and digest_at is None:
        findings.append(Finding("warn", "journal", "no digest was ever taken: verify has nothing kept outside to hold "
                                                   "the blocks to; run `evalledger ledger digest --out FILE` and keep "
                                                   "FILE where the database's superuser cannot reach"))
    elif newest is not None and digest_at < due and sealed_at > digest_at:
        findings.append(Finding("warn", "journal", f"the newest digest is from {digest_at:%Y-%m-%d %H:%M} UTC and blocks "
                                                   "were sealed since: take one (`evalledger ledger digest --out FILE`)"))
    if not findings:
        findings.append(Finding("ok", "journal", "every ledger table journalled; blocks sealed and digested"
                                if newest is not None else "every ledger table journalled; nothing sealed yet"))
    return findings


def _pricing(conn: psycopg.Connection) -> list[Finding]:
    """pricing.json's prices were taken within 90 days of the database's day (UTC)."""
    from evalledger.judges.pricing import price_age

    today = conn.execute(QUERIES["database_clock"]).fetchone()[0].date()
    fresh, detail = price_age(today)
    return [Finding("ok" if fresh else "warn", "pricing", detail)]


def _plans(conn: psycopg.Connection) -> list[Finding]:
    """Issue 36: a suite whose latest runs cannot detect its own regression threshold at 80% power
    (plan_v1, over each subject's last 20 completed runs; `evalledger plan` shows the whole plan).

    Quiet when every threshold is detectable, when there are no runs to plan from, and when the
    connecting user may not read the runs."""
    try:
        with conn.transaction():
            rows = conn.execute(QUERIES["doctor_undetectable_thresholds"]).fetchall()
    except psycopg.errors.InsufficientPrivilege:
        return []
    subjects: dict[tuple[str, str], list[tuple]] = {}
    for suite, subject, measure, n, mde, threshold in rows:
        subjects.setdefault((suite, subject), []).append((measure, n, mde, threshold))
    return [Finding("warn", "plan", f"{suite} {subject}: its runs cannot detect its own regression threshold "
                                    f"{measures[0][3]:g} at 80% power ("
                                    + ", ".join(f"{m} detects {mde:.3g} with {n} "
                                                f"{'questions' if suite == 'brain-eval' else 'judges'}"
                                                for m, n, mde, _ in measures)
                                    + f"); `evalledger plan --suite {suite} --drop {measures[0][3]:g}` says the sample "
                                    "it needs")
            for (suite, subject), measures in subjects.items()]


def _writes(conn: psycopg.Connection) -> list[Finding]:
    """A primary whose sessions for this login start read-only refuses every command that writes
    (a standby's replica line says so already). A warning: a reader's login may be read-only on purpose."""
    if conn.execute(queries.get("in_recovery")).fetchone()[0]:
        return []
    starts_read_only = db.read_only_sessions(conn)
    return [Finding("warn", "writes", starts_read_only)] if starts_read_only else []


def _duration(seconds: float) -> str:
    """seconds as people read an age: s, min, h or days."""
    for unit, size in (("days", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.0f} s"


def diagnose(url: str) -> list[Finding]:
    """Every check, in order; stops after a failed connection or missing schema."""
    findings = [Finding("ok", "database", f"reachable at {db.describe(url)}")]
    state = status(url)
    if state.pending:
        findings.append(Finding("fail", "migrations", f"pending: {', '.join(state.pending)} "
                                                      "(run `evalledger db migrate`)"))
    else:
        findings.append(Finding("ok", "migrations", f"current ({len(state.applied)} applied)"))
    with db.connect(url, autocommit=True, writes=False) as conn:
        findings += _version(conn)
        findings += _writes(conn)
        findings += _roles(conn)
        findings += _memberships(conn)
        if not conn.execute(QUERIES["doctor_schema_exists"]).fetchone()[0]:
            return findings + _capture_dropped()
        findings += _guards(conn)
        findings += _code(conn)
        findings += _event_triggers(conn)
        findings += _journal(conn)
        findings += _large_objects(conn)
        findings += _capture_failures(conn)
        findings += _capture_dropped()
        findings += _replication(conn)
        findings += _pricing(conn)
        if not state.pending:  # plan_v1 came with a migration: a ledger behind is told to migrate above
            findings += _plans(conn)
    return findings
