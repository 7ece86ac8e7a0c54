"""The owner's registries: reviewers, prompt tuners, question catalogs, brains under test, view contracts."""

from __future__ import annotations

import uuid
from pathlib import Path

import click
import psycopg

from evalledger.core import db, output
from evalledger.core.errors import EvalledgerError
from evalledger.core.options import LIMIT, database_option, echo_listing, format_options, window_bound

from .. import store as brain_eval
from .shared import parse_uuid


@click.group("reviewer")
def reviewer_group():
    """Register human reviewers."""


@reviewer_group.command("add")
@click.argument("role_name")
@click.option("--name", "display_name", required=True, help="The reviewer's name.")
@click.option("--id", "reviewer_user_id", help="Their reviewer_user_id (default: a new UUID).")
@click.option("--password-prompt", is_flag=True,
              help="Ask for the new login role's password instead of generating one.")
@database_option
def reviewer_add(role_name, display_name, reviewer_user_id, password_prompt):
    """Make ROLE_NAME a reviewer: its login role, then its reviewer_user_id (printed last).

    When the role does not exist it is created (LOGIN, member of evalledger_reviewer) with a
    generated password printed once, or the one --password-prompt asks for; this needs a
    connecting user with CREATEROLE, such as the one that migrated. An existing role is checked
    and, if it is not yet in evalledger_reviewer, granted it. Running it again changes nothing.
    """
    import secrets

    brain_eval.check_role_name(role_name)
    wanted = parse_uuid(reviewer_user_id, "--id") if reviewer_user_id else None
    password = None
    with db.transaction(None) as conn:
        def new_password() -> str:
            nonlocal password
            password = (click.prompt(f"password for {role_name}", hide_input=True, confirmation_prompt=True)
                        if password_prompt else secrets.token_urlsafe(18))
            return password

        state, done = brain_eval.ensure_reviewer_role(conn, role_name, new_password)
        said = {"created": f"role {role_name}: created (LOGIN, member of evalledger_reviewer)",
                "granted": f"role {role_name}: exists; granted evalledger_reviewer",
                "exists": f"role {role_name}: exists, member of evalledger_reviewer"}[done]
        if state.role_exists and not state.can_login:
            said += " (NOLOGIN: give it LOGIN, or grant it to the login roles of people)"
        db.set_local_role(conn, db.ROLES["owner"])
        found = brain_eval.add_reviewer(conn, role_name, display_name, wanted)
    if wanted and found != wanted:
        raise EvalledgerError(f"{role_name} is already registered as reviewer {found}")
    click.echo(said)
    if password is not None and not password_prompt:
        click.echo(f"password for {role_name} (shown this once; give it to the reviewer): {password}")
    click.echo(str(found))


@reviewer_group.command("list")
@format_options
@database_option
def reviewer_list(fmt):
    """List registered reviewers, and whether each login role exists and is in evalledger_reviewer."""
    echo_listing("runner", brain_eval.QUERIES["list_reviewers"], None, fmt=fmt, kind="reviewers",
                 empty="no reviewers registered (evalledger reviewer add)")


@click.group("tuner")
def tuner_group():
    """The prompt-tuner registry that reviewer independence is checked against."""


@tuner_group.command("add")
@click.argument("target_id")
@click.argument("user", metavar="ROLE_OR_USER_ID")
@database_option
def tuner_add(target_id, user):
    """Register ROLE_OR_USER_ID as a prompt tuner of TARGET_ID: none of their runs may then be reviewed by them.

    The identity is the reviewer_user_id a run carries: give a registered reviewer's role name
    (`evalledger reviewer list`) or the UUID your identity system uses for the person. The same
    pair again is "already registered".
    """
    label = user
    with db.transaction("owner") as conn:
        try:
            user_id = uuid.UUID(user)
            label = str(user_id)
        except ValueError:
            brain_eval.check_role_name(user)
            user_id = brain_eval.reviewer_id(conn, user)
            if user_id is None:
                raise EvalledgerError(f"{user!r} is neither a UUID nor a registered reviewer's role "
                                      f"(evalledger reviewer add {user} --name ...)") from None
        try:
            added = brain_eval.add_prompt_tuner_once(conn, target_id, user_id)
        except psycopg.errors.ForeignKeyViolation:
            raise EvalledgerError(f"no target {target_id!r} (evalledger target list)") from None
        except psycopg.errors.StringDataRightTruncation:
            raise EvalledgerError(f"no target {target_id!r}: target ids are at most 16 characters") from None
    who = label if label == str(user_id) else f"{label} ({user_id})"
    click.echo(f"{'registered' if added else 'already registered:'} {who} as a prompt tuner of {target_id}")


@tuner_group.command("list")
@format_options
@database_option
def tuner_list(fmt):
    """List the prompt tuners of every target (the registry is the owner's: connect as its member)."""
    echo_listing("owner", brain_eval.QUERIES["list_tuners"], None, fmt=fmt, kind="tuners",
                 empty="no prompt tuners registered (evalledger tuner add)")




@click.group("catalog")
def catalog_group():
    """Versioned question catalogs: loaded whole, never changed (a new quarter is a new version)."""


@catalog_group.command("load")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@database_option
def catalog_load(file):
    """Load the question catalog in FILE (JSON; schema: schemas/question_catalog.v1.schema.json).

    A file with any problem is refused whole, every problem listed with its line and field, and
    nothing is written. Loading the same version again with the same content changes nothing.
    """
    from .. import catalog

    try:
        document = catalog.check_file(file)
    except catalog.CatalogError as exc:
        for line in exc.lines:
            click.echo(line, err=True)
        raise EvalledgerError(exc.summary()) from None
    with db.transaction("owner") as conn:
        loaded = catalog.load(conn, document, file.name)
    stale = sum(q["uses_stale_fixture"] for q in document["questions"])
    types = len({q["type"] for q in document["questions"]})
    state = "loaded" if loaded.added else "already loaded, unchanged:"
    click.echo(f"{state} catalog {loaded.catalog_version}: {loaded.question_count} questions "
               f"({stale} stale-fixture, {types} of {len(catalog.QUESTION_TYPES)} types), "
               f"sha256 {loaded.document_sha256}")


_since = window_bound("parse_since", "neither a duration (45s, 30m, 24h, 7d, 2w) nor an ISO 8601 timestamp")
_until = window_bound("parse_timestamp", "not an ISO 8601 timestamp")


@catalog_group.command("draft")
@click.option("--from-capture", "from_capture", is_flag=True,
              help="Draft from the ledger's captured traffic (the one source of drafts, required).")
@click.option("--output", "-o", "output_file", required=True, type=click.Path(dir_okay=False, path_type=Path),
              metavar="FILE", help="Write the draft to FILE (atomically: all of it or nothing).")
@click.option("--since", callback=_since, metavar="DUR|TS",
              help="Inclusive lower bound: a duration back from now (45s, 30m, 24h, 7d, 2w) or a timestamp.")
@click.option("--until", callback=_until, metavar="TS",
              help="Exclusive upper bound (default and latest: now, as the database fixes it, as for export).")
@click.option("--tool", type=click.Choice(["query", "search"]), help="Only captured rows of this tool.")
@click.option("--remote/--local", "remote", default=None,
              help="Only remote callers (agent traffic) or only local ones. [default: both]")
@click.option("--limit", type=LIMIT, metavar="N", help="Read at most the newest N captured rows of the window.")
@click.option("--questions", "wanted", type=LIMIT, default=30, show_default=True, metavar="N",
              help="How many questions to draft (seed 002's harness asks 30).")
@click.option("--catalog-version", "version", metavar="VERSION",
              help="The draft's catalog version. [default: draft- and 8 hex digits of the picked rows]")
@database_option
def catalog_draft(from_capture, output_file, since, until, tool, remote, limit, wanted, version):
    """Draft a question catalog from captured production traffic into FILE.

    Reads the captured rows of the window [--since, --until) that retrieved something (never a
    row whose scrubbing failed), folds near-duplicates (docs/replay.md says exactly how), and
    picks --questions of them round-robin across strata of tool, detail and remote, preferring
    queries a replay run flagged (a lost source, a recall below its rubric) and remote agent
    traffic. Each question keeps its provenance (the captured rows it stands for) and, as its
    sources, what the brain retrieved for it. The fields a person must write (type, pass
    criteria, expected findings) are marked "FILL IN": `catalog load` refuses the file until
    none is left. The same rows give the same file, byte for byte.
    """
    from evalledger.core import files
    from evalledger.core.windows import iso

    from .. import drafting

    if not from_capture:
        raise EvalledgerError("catalog draft needs --from-capture (captured traffic is the one source of drafts)")
    if since is not None and since.at is not None and until is not None and since.at >= until:
        raise EvalledgerError(f"--since {since.at.isoformat()} is not before --until {until.isoformat()}: "
                              "the window [since, until) would be empty")
    if wanted > drafting.MAX_QUESTIONS:
        raise EvalledgerError(f"--questions {wanted}: a catalog drafts at most {drafting.MAX_QUESTIONS} questions")
    if version is not None:
        import re

        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,31}", version):
            raise EvalledgerError(f"--catalog-version {version!r}: letters, digits, '.', '_' and '-', at most 32, "
                                  "starting with a letter or digit")
    note = lambda line: click.echo(f"draft: {line}", err=True)  # noqa: E731
    with db.connect(role="runner", autocommit=True) as conn:
        made = drafting.draft(conn, drafting.Window(since, until, tool, remote, limit), wanted, version, note=note)
    text = drafting.render(made.document)
    try:
        files.write_atomic(output_file, text)
    except OSError as exc:
        raise EvalledgerError(f"--output {output_file}: cannot write it ({exc.strerror or exc}); nothing was left "
                              "in its place") from None
    questions = made.document["questions"]
    strata = made.document["drafted_from"]["strata"]
    flagged = sum(q["provenance"]["flagged_by_replay"] for q in questions)
    remote_count = sum(q["provenance"]["remote"] for q in questions)
    left = len(list(drafting.blanks(made.document)))
    window = (f"created_at >= {iso(made.since)} and < {iso(made.until)}" if made.since
              else f"created_at < {iso(made.until)}")
    click.echo(f"drafted catalog {made.document['version']}: {len(questions)} questions from {made.rows} captured "
               f"rows ({made.candidates} distinct texts), {window}")
    click.echo(f"  {remote_count} from remote callers, {flagged} flagged by replay; by tool/detail/remote: "
               + ", ".join(f"{k} {v}" for k, v in strata.items()))
    click.echo(f"wrote {output_file}: write its {left} fields marked \"{drafting.BLANK}\", then "
               f"evalledger catalog load {output_file}")


@catalog_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the catalogs as JSON (schema: catalogs.v1).")
@database_option
def catalog_list(as_json):
    """List the loaded catalog versions."""
    from .. import catalog

    with db.transaction("auditor") as conn:
        found = catalog.catalogs(conn)
    if as_json:
        columns = ["catalog_version", "question_count", "stale_count", "type_count", "document_sha256",
                   "source_file", "loaded_at"]
        click.echo(output.listing("json", "catalogs", columns, [[c[k] for k in columns] for c in found]), nl=False)
        return
    if not found:
        click.echo("no catalog loaded (evalledger catalog load FILE)")
    for c in found:
        click.echo(f"{c['catalog_version']:<16} {c['question_count']:>3} questions  {c['stale_count']:>2} stale-fixture  "
                   f"{c['type_count']} types  loaded {c['loaded_at']:%Y-%m-%d %H:%M}  sha256 {c['document_sha256'][:12]}")


@catalog_group.command("show")
@click.argument("version")
@click.argument("question_id", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the stored document (or the one question) as JSON.")
@database_option
def catalog_show(version, question_id, as_json):
    """Show the questions of catalog VERSION (or only QUESTION_ID): type, stale flag, sources, criteria,
    and, for a question drafted from captured traffic, the captured rows it came from."""
    import json

    from .. import catalog

    from evalledger.core.windows import iso

    with db.transaction("auditor") as conn:
        questions = catalog.questions(conn, version)
        document = catalog.document(conn, version) if as_json and not question_id else None
        drawn = catalog.provenance(conn, version)
        counts = {q.get("id"): (q.get("provenance") or {}).get("captured")
                  for q in catalog.document(conn, version)["questions"]} if drawn else {}
    if question_id:
        questions = [q for q in questions if q["question_id"] == question_id]
        if not questions:
            raise EvalledgerError(f"catalog {version} has no question {question_id}")
    if as_json:
        shown = document if document is not None else {
            "id": questions[0]["question_id"], "type": questions[0]["question_type"],
            "text": questions[0]["question_text"], "uses_stale_fixture": questions[0]["uses_stale_fixture"],
            "sources": questions[0]["sources"], "pass_criteria": questions[0]["pass_criteria"]}
        if document is None and questions[0]["question_id"] in drawn:
            shown["provenance"] = {
                "captures": [{"id": p["capture_id"], "created_at": iso(p["capture_created_at"])}
                             for p in drawn[questions[0]["question_id"]]],
                "captured": counts.get(questions[0]["question_id"])}
        click.echo(json.dumps(shown, indent=2))
        return
    for q in questions:
        stale = "  STALE FIXTURE" if q["uses_stale_fixture"] else ""
        click.echo(f"{q['question_id']}  {q['question_type']}{stale}")
        click.echo(f"  {q['question_text']}")
        click.echo("  sources: " + ", ".join(
            s["id"] + (f" (as of {s['as_of']}, stale)" if s.get("stale") else "") for s in q["sources"]))
        click.echo("  passes when: " + catalog.describe_criteria(q["pass_criteria"]))
        for finding in q["pass_criteria"].get("expected_findings", []):
            click.echo(f"  expects: {finding}")
        rows = drawn.get(q["question_id"])
        if rows:
            total = counts.get(q["question_id"]) or len(rows)
            listed = ", ".join(f"{p['capture_id']} ({iso(p['capture_created_at'])})" for p in rows[:5])
            more = f", and {len(rows) - 5} more listed" if len(rows) > 5 else ""
            click.echo(f"  drawn from: {total} captured row{'s' if total != 1 else ''}: capture {listed}{more}")


@click.group("brain")
def brain_group():
    """Brains under test: each model, system prompt and lever enum is a version of its own."""


def _echo_brain(v, prefix: str = "") -> None:
    label = f"  label {v.version_label}" if v.version_label else ""
    levers = ", ".join(v.levers) if v.levers else "none"
    click.echo(f"{prefix}{v.target_id} version {v.version}: {v.model_spec}{label}")
    click.echo(f"  system_prompt_hash {v.system_prompt_hash}")
    click.echo(f"  levers {levers}")


@brain_group.command("add")
@click.argument("target_id")
@click.option("--model", required=True, metavar="PROVIDER:MODEL", help="The brain's model, e.g. anthropic:claude-sonnet-4-6.")
@click.option("--prompt-file", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The system prompt (UTF-8 text); the database stores it and computes its SHA-256.")
@click.option("--label", "version_label", help="A human-readable version label, e.g. pipeline_brain_v3.")
@click.option("--lever", "levers", multiple=True, metavar="ACTION_TYPE",
              help="An allowed proposed_actions[].action_type (repeat for each): the brain's lever enum.")
@database_option
def brain_add(target_id, model, prompt_file, version_label, levers):
    """Register a version of brain TARGET_ID; the same model, prompt and levers again is the same version."""
    from evalledger.core import reader

    from .. import brains

    prompt = reader.read_text(prompt_file, "prompt file")  # a BOM dropped, CRLF read as LF, before hashing
    with db.transaction("owner") as conn:
        version, added = brains.add(conn, target_id, model, prompt, version_label, levers)
    _echo_brain(version, "registered " if added else "already registered: ")


@brain_group.command("list")
@click.argument("target_id", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the versions as JSON (schema: brain_versions.v1).")
@database_option
def brain_list(target_id, as_json):
    """List the registered versions of every brain (or of TARGET_ID), oldest first."""
    from .. import brains

    with db.transaction("auditor") as conn:
        found = brains.versions(conn, target_id)
    if as_json:
        columns = ["target_id", "version", "model_spec", "version_label", "system_prompt_hash", "levers", "created_at"]
        click.echo(output.listing("json", "brain_versions", columns, [[getattr(v, k) for k in columns] for v in found]),
                   nl=False)
        return
    if not found:
        click.echo("no brain versions registered (evalledger brain add)")
    for v in found:
        _echo_brain(v)


@brain_group.command("show")
@click.argument("target_id")
@click.argument("version", required=False)
@database_option
def brain_show(target_id, version):
    """Show VERSION of TARGET_ID (a number or label; default: the latest), with its system prompt."""
    from .. import brains

    with db.transaction("auditor") as conn:
        found = brains.resolve(conn, target_id, version)
    _echo_brain(found)
    click.echo("  system prompt:")
    for line in found.system_prompt.splitlines():
        click.echo(f"    {line}")


@click.group("contracts")
def contracts_group():
    """The view-contracts hash: the brain-ready views a brain reads, canonicalised with sqlglot."""


@contracts_group.command("hash")
@click.option("--schema", metavar="NAME", help="The schema of the brain-ready views (live, or their qualifier in --dir files).")
@click.option("--views-url", metavar="URL", help="The database the brain reads (default: the ledger's database).")
@click.option("--dir", "folder", type=click.Path(file_okay=False, path_type=Path),
              help="A folder of CREATE VIEW files (*.sql) instead of live views.")
@click.option("--json", "as_json", is_flag=True, help="Print the hash, source and views as JSON (schema: contracts_hash.v1).")
@database_option
def contracts_hash(schema, views_url, folder, as_json):
    """Print brain_view_contracts_hash and the views it covers.

    The same views hash the same from the live database (any PostgreSQL 14+) and from files,
    whatever their whitespace, comments, keyword case or redundant parentheses; any change of
    meaning changes the hash.
    """
    import json

    from .. import contracts

    if folder and views_url:
        raise EvalledgerError("--dir and --views-url name two sources: give one")
    if folder:
        found = contracts.from_folder(folder, schema)
    elif schema:
        url = views_url or db.database_url()
        with db.connect(url) as conn:
            found = contracts.from_database(conn, schema, db.describe(url))
    else:
        raise EvalledgerError("give --schema (live views, at --views-url or the ledger's database) or --dir")
    if as_json:
        click.echo(json.dumps(found.as_json(), indent=2))
        return
    click.echo(f"brain_view_contracts_hash {found.sha256}")
    click.echo(f"  source {found.source} ({contracts.CANON_VERSION})")
    click.echo(f"  {len(found.views)} view{'s' if len(found.views) != 1 else ''}:")
    for view in sorted(found.views, key=lambda v: v.name):
        click.echo(f"    {view.name:<40} {view.sha256[:12]}")


@contracts_group.command("dump")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@click.option("--schema", metavar="NAME", required=True, help="The schema of the brain-ready views.")
@click.option("--views-url", metavar="URL", help="The database the brain reads (default: the ledger's database).")
@database_option
def contracts_dump(folder, schema, views_url):
    """Write each live view of --schema to FOLDER/<view>.sql, for `contracts hash --dir FOLDER`."""
    from .. import contracts

    url = views_url or db.database_url()
    with db.connect(url) as conn:
        written = contracts.dump(conn, schema, db.describe(url), folder)
    click.echo(f"wrote {len(written)} view file{'s' if len(written) != 1 else ''} to {folder}")


def read_contracts(views_schema, views_url, views_dir):
    from .. import contracts

    if views_dir and (views_schema and views_url):
        raise EvalledgerError("--views-dir and --views-url name two sources: give one")
    if views_dir:
        return contracts.from_folder(views_dir, views_schema)
    if not views_schema:
        raise EvalledgerError("the view contracts: give --views-schema (live views) or --views-dir (CREATE VIEW files)")
    url = views_url or db.database_url()
    with db.connect(url) as conn:
        return contracts.from_database(conn, views_schema, db.describe(url))
