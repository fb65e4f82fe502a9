"""The client scenario driven by couchdb3 (PyPI `couchdb3`)."""
import couchdb3
from couchdb3.exceptions import ConflictError
from scenario_common import URL, ADMIN, PASSWORD, HOST, check, check_members_only, make_member, done

server = couchdb3.Server(HOST, user=ADMIN, password=PASSWORD)
check(server.up(), "server up")
name = "client_couchdb3"
if name in server.all_dbs():
    server.delete(name)
db = server.create(name)
check(name in server.all_dbs(), "the new database is listed")

# CRUD and a stale update.
doc_id, ok, rev = db.save({"_id": "poll1", "question": "Tabs or spaces?", "votes": 0})
check(ok and rev.startswith("1-"), "save", rev)
doc = db.get("poll1")
check(doc["question"] == "Tabs or spaces?", "get", doc)
doc["votes"] = 1
_, ok, rev2 = db.save(doc)
check(rev2.startswith("2-"), "update", rev2)
try:
    db.save({"_id": "poll1", "_rev": rev, "question": "stale"})
    check(False, "a stale update was accepted")
except ConflictError:
    pass

# Bulk, listing.
results = db.bulk_docs([{"_id": "a", "type": "ballot", "n": 1}, {"_id": "b", "type": "ballot", "n": 2}, {"_id": "poll1"}])
check([r.get("ok", False) for r in results] == [True, True, False], "bulk_docs", results)
check(results[2]["error"] == "conflict", "bulk_docs conflict", results)
rows = db.all_docs(include_docs=True)
check([r.id for r in rows.rows] == ["a", "b", "poll1"], "all_docs", rows)
check(rows.total_rows == 3, "all_docs total_rows", rows.total_rows)

# Changes: normal, longpoll, continuous.
changes = db.changes(since="0")
check([c["id"] for c in changes["results"]] == ["poll1", "a", "b"], "changes", changes)
longpoll = db.changes(feed="longpoll", since=changes["last_seq"], timeout=200)
check(longpoll["results"] == [], "longpoll times out empty", longpoll)
with db.changes_stream(since="0", timeout=300) as stream:
    seen = [c for c in stream]
check([c["id"] for c in seen if "id" in c] == ["poll1", "a", "b"], "continuous", seen)

# Mango with paging.
db.save_index(index={"fields": ["n"]}, ddoc="by-n", name="by-n")
page1 = db.find({"type": "ballot"}, limit=1, sort=[{"n": "asc"}])
check([d["_id"] for d in page1["docs"]] == ["a"], "find page 1", page1)
page2 = db.find({"type": "ballot"}, limit=1, sort=[{"n": "asc"}], bookmark=page1["bookmark"])
check([d["_id"] for d in page2["docs"]] == ["b"], "find page 2", page2)

# Attachments.
_, ok, _ = db.put_attachment("a", "greeting.txt", content=b"hello world", content_type="text/plain", rev=db.rev("a"))
check(ok, "put_attachment")
attachment = db.get_attachment("a", "greeting.txt")
check(attachment.content == b"hello world", "get_attachment", attachment)
# CouchDB's digest of a text attachment: the MD5 of its gzip form (zlib at
# level 8), which CouchDB keeps; couchdb3 reads Content-MD5, which CouchDB 3
# does not send for it (nor does strata serve).
check(db.get("a")["_attachments"]["greeting.txt"]["digest"] == "md5-7mkg+nM0HN26sZkLN8KVSA==", "digest", db.get("a"))

# _security: with members, anonymous readers are refused.
make_member("voter3", "pw3")
db.update_security(admins={"names": [], "roles": []}, members={"names": ["voter3"], "roles": []})
member = couchdb3.Server(HOST, user="voter3", password="pw3").get(name)
check_members_only(name, lambda: member.get("poll1")["_id"] == "poll1")

server.delete(name)
check(name not in server.all_dbs(), "deleted")
done("couchdb3")
