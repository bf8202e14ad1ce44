"""The audit of a snapshot: ``accounts_export`` writes the table as AWS exports it to S3,
``accounts_audit --from-export`` reads that (from a directory, or from S3) and finds what
the live audit finds; ``--from-findings`` confirms the candidates another engine found."""

import csv
import gzip
import json
from pathlib import Path

import pytest
from django.core.management import CommandError

from accounts import audit
from accounts.audit import joining
from accounts.audit.checking import Scope
from accounts.audit.findings import FACTOR_KINDS
from accounts.audit.reading import Reader
from accounts.audit.rows import RowFiles, SegmentRows
from accounts.audit.scope import audited_models
from accounts.tables import epoch_now, plain_client
from tests.audit.test_audit_join import comparable, every_kind  # noqa: F401 (fixture)
from tests.seeding import delete_lock, seed_accounts, write_locks
from tests.staff import run_command

pytestmark = pytest.mark.dynamodb_local


def findings_of(document):
    return sorted((finding["kind"], finding["key"], tuple(finding["holders"])) for finding in document["findings"])


def export_of_the_table(tmp_path):
    _, out, _ = run_command("accounts_export", str(tmp_path / "export"), "--segments", "3")
    return Path(out.strip())


def test_the_export_has_the_layout_aws_writes(ddb, tmp_path):
    seed_accounts(5)

    folder = export_of_the_table(tmp_path)

    summary = json.loads((folder / "manifest-summary.json").read_text())
    assert folder.parent.name == "AWSDynamoDB"
    assert (summary["outputFormat"], summary["itemCount"]) == ("DYNAMODB_JSON", 21)
    assert summary["manifestFilesS3Key"] == f"AWSDynamoDB/{folder.name}/manifest-files.json"
    files = [json.loads(line) for line in (folder / "manifest-files.json").read_text().splitlines()]
    assert sum(entry["itemCount"] for entry in files) == 21
    lines = []
    for entry in files:
        assert entry["dataFileS3Key"].startswith(f"AWSDynamoDB/{folder.name}/data/")
        with gzip.open(folder / "data" / entry["dataFileS3Key"].rsplit("/", 1)[1], "rt") as data:
            lines.extend(json.loads(line) for line in data)
    assert {"PK", "SK"} <= set(lines[0]["Item"]) and lines[0]["Item"]["PK"].keys() == {"S"}


def test_the_audit_of_an_export_finds_what_the_live_audit_finds(every_kind, tmp_path):  # noqa: F811
    export_of_the_table(tmp_path)
    live = comparable(audit.run_audit())

    status, out, _ = run_command("accounts_audit", "--json", "--from-export", str(tmp_path / "export"))

    document = json.loads(out)
    assert status == 1
    assert findings_of(document) == findings_of(live)
    assert [document["scanned"][name] for name in ("items", "accounts", "locks")] == [
        live["scanned"][name] for name in ("items", "accounts", "locks")
    ]
    assert {finding["kind"] for finding in document["findings"]} == set(audit.KINDS)


def test_a_finding_of_the_export_gone_from_the_table_is_not_reported(ddb, tmp_path):
    accounts = seed_accounts(3)
    delete_lock(f"UNIQ#EMAIL#{accounts[0].email}")
    write_locks({"UNIQ#HANDLE#ghost": "ACCT#nobody"})
    export_of_the_table(tmp_path)
    # After the snapshot: the missing lock is back; the orphan stays.
    write_locks({f"UNIQ#EMAIL#{accounts[0].email}": accounts[0].PK})

    report = audit.run_export_audit(str(tmp_path / "export"))

    assert [(finding.kind, finding.key) for finding in report.findings] == [(audit.ORPHANED, "UNIQ#HANDLE#ghost")]


def test_the_audit_reads_an_export_from_s3(ddb, tmp_path, monkeypatch):
    from moto import mock_aws

    accounts = seed_accounts(4)
    delete_lock(f"UNIQ#EMAIL#{accounts[1].email}")
    folder = export_of_the_table(tmp_path)
    expected = findings_of(comparable(audit.run_audit()))
    # moto's S3, and DynamoDB Local still answering the confirmation's reads.
    with mock_aws(config={"core": {"passthrough": {"services": ["dynamodb"]}}}):
        s3 = audit.exports._s3_client()
        s3.create_bucket(Bucket="exports-bucket")
        for path in folder.rglob("*"):
            if path.is_file():
                key = f"nightly/{path.relative_to(folder.parent.parent)}"
                s3.put_object(Bucket="exports-bucket", Key=key, Body=path.read_bytes())

        status, out, _ = run_command("accounts_audit", "--json", "--from-export", "s3://exports-bucket/nightly")

    assert status == 1
    assert findings_of(json.loads(out)) == expected
    assert expected == [("missing", f"UNIQ#EMAIL#{accounts[1].email}", (accounts[1].PK,))]


def test_a_source_without_an_export_is_a_command_error(ddb, tmp_path):
    with pytest.raises(CommandError, match="holds no DynamoDB export"):
        run_command("accounts_audit", "--from-export", str(tmp_path))


def test_the_candidates_another_engine_found_are_confirmed_and_repaired(every_kind, tmp_path):  # noqa: F811
    live = comparable(audit.run_audit())
    rows_directory = tmp_path / "rows"
    # Athena's answer to findings.sql: the candidates as CSV with a header, NULL as empty.
    answer = tmp_path / "athena.csv"
    with answer.open("w", newline="") as out:
        writer = csv.writer(out, quoting=csv.QUOTE_ALL)
        writer.writerow(["subject", "namespace", "lock_key", "pk", "detail"])
        for row in candidates_from_a_fresh_scan(rows_directory):
            writer.writerow(["" if value is None else value for value in row])

    status, out, _ = run_command("accounts_audit", "--json", "--from-findings", str(answer))

    assert status == 1
    assert findings_of(json.loads(out)) == findings_of(live)
    # A damaged item's rewrite and the claims of its locks race (each repair is guarded:
    # the loser writes nothing, "changed"); the same answer again, confirmed again, repairs them.
    _, out, _ = run_command("accounts_audit", "--json", "--repair", "--from-findings", str(answer))
    outcomes = {result["outcome"] for result in json.loads(out)["not_repaired"]}
    _, out, _ = run_command("accounts_audit", "--json", "--repair", "--from-findings", str(answer))

    assert outcomes <= {"not_repairable", "changed"}
    assert {finding["kind"] for finding in json.loads(out)["remaining"]} == {
        audit.DUPLICATE,
        audit.TRANSIENT,
        audit.INVALID,
        audit.UNDECLARED,
        *FACTOR_KINDS,
    }


def candidates_from_a_fresh_scan(rows_directory):
    """Rows of the table read as an audit reads them, and the query's answer over them."""
    scope = Scope(audited_models())
    reader = Reader(plain_client(), scope.models[0].Meta.table_name)
    files = RowFiles(rows_directory, "segment-00000-000000")
    last_key = None
    while True:
        items, last_key, _ = reader.scan_page(0, 1, last_key, attributes=scope.attributes)
        page = SegmentRows()
        page.add_page(items, scope, epoch_now())
        files.write(page)
        if last_key is None:
            break
    files.close()
    return [(c.subject, c.namespace, c.lock_key, c.pk, c.detail) for c in joining.candidates(rows_directory)]
