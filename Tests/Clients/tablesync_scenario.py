"""Synced tables seen by a real CouchDB client: a device file's `notes`
table synced with `strata sync` (the binary in argv[1]) through the
`strata serve` named by COUCHDB_URL, and the same documents read and
written by couchdb-python (PyPI `couchdb`). Rows are documents any client
reads and writes: their members, `$table`, a BLOB as an attachment, and
what the client writes arrives as rows. Exits non-zero on the first
failed check."""
import csv
import io
import os
import subprocess
import sys
import tempfile

import couchdb

from scenario_common import URL, check

strata = sys.argv[1]
server = couchdb.Server(URL + "/")
name = "client_tables"
if name in server:
    del server[name]
db = server.create(name)
device = os.path.join(tempfile.mkdtemp(), "device.sqlite")


def sql(statement):
    """Runs SQL on the device file; answers the rows (CSV, header dropped)."""
    done = subprocess.run([strata, "sql", device, statement, "--format", "csv"], capture_output=True, text=True)
    check(done.returncode == 0, f"strata sql {statement}", done.stderr)
    return list(csv.reader(io.StringIO(done.stdout)))[1:]


def sync():
    done = subprocess.run([strata, "sync", device, f"{URL}/{name}", "--tables", "notes"], capture_output=True, text=True)
    check(done.returncode == 0, "strata sync", done.stderr)
    return done.stdout.strip()


sql("CREATE TABLE notes(id TEXT PRIMARY KEY NOT NULL, title TEXT, body TEXT, n INTEGER, photo BLOB)")
sql("INSERT INTO notes VALUES ('n1', 'Groceries', 'milk', 9007199254740993, x'00ff10')")
check(sync() == "sent 1 documents, received 0", "the first sync")

# The client reads the row as a document.
doc = db["notes:n1"]
check(doc["$table"] == "notes" and doc["title"] == "Groceries" and doc["body"] == "milk", "the row's members", doc)
check(doc["n"] == 9007199254740993, "an integer past 2^53, exact", doc["n"])
check("photo" not in doc and doc["_attachments"]["photo"]["content_type"] == "application/octet-stream",
      "the BLOB as an attachment", doc)
check(db.get_attachment("notes:n1", "photo").read() == b"\x00\xff\x10", "the attachment's bytes")

# The client writes: an edit, a new row, an attachment; they arrive as rows.
doc["title"] = "Groceries for Sunday"
db.save(doc)
db.save({"_id": "notes:web", "$table": "notes", "title": "From Python", "body": None, "n": 3})
db.put_attachment(db["notes:web"], b"\x01\x02", "photo", "image/png")
check(sync() == "sent 0 documents, received 2", "the second sync")
check(sql("SELECT id, title, n, hex(photo) FROM notes ORDER BY id")
      == [["n1", "Groceries for Sunday", "9007199254740993", "00FF10"], ["web", "From Python", "3", "0102"]],
      "the client's writes as rows", sql("SELECT id, title, n, hex(photo) FROM notes ORDER BY id"))

# A deletion by the client deletes the row; one on the device reaches the client.
db.delete(db["notes:web"])
sql("DELETE FROM notes WHERE id = 'n1'")
check(sync() == "sent 1 documents, received 1", "the third sync")
check(sql("SELECT count(*) FROM notes") == [["0"]], "both rows deleted")
check("notes:n1" not in db, "the device's deletion on the server")

del server[name]
print("tablesync scenario (couchdb-python): ok")
