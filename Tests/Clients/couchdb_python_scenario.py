"""The basic client scenario, driven by couchdb-python (PyPI `couchdb`),
against a running `strata serve` named by COUCHDB_URL (with admin
credentials in the URL). Exits non-zero on the first failed check."""
import os
import sys
import couchdb
from couchdb.http import ResourceConflict, Unauthorized

url = os.environ["COUCHDB_URL"]
server = couchdb.Server(url)
assert server.version() == "3.4.3", server.version()
name = "client_couchdb"
if name in server:
    del server[name]
db = server.create(name)
assert name in server

# CRUD and a stale update.
doc_id, rev = db.save({"_id": "poll1", "question": "Tabs or spaces?", "votes": {"tabs": 0}})
doc = db["poll1"]
assert doc["question"] == "Tabs or spaces?"
doc["votes"]["tabs"] = 1
db.save(doc)
stale = {"_id": "poll1", "_rev": rev, "question": "stale"}
try:
    db.save(stale)
    sys.exit("a stale update was accepted")
except ResourceConflict:
    pass

# Bulk, listing.
results = db.update([{"_id": "a", "type": "ballot"}, {"_id": "b", "type": "ballot"}, {"_id": "poll1"}])
assert [ok for ok, _, _ in results] == [True, True, False], results
rows = list(db.view("_all_docs", include_docs=True))
assert [r.id for r in rows] == ["a", "b", "poll1"], [r.id for r in rows]
assert rows[0].doc["type"] == "ballot"

# The three changes feeds.
changes = db.changes(since=0)
assert [c["id"] for c in changes["results"]] == ["poll1", "a", "b"], changes
last = changes["last_seq"]
longpoll = db.changes(feed="longpoll", since=last, timeout=200)
assert longpoll["results"] == [], longpoll
continuous = list(db.changes(feed="continuous", since=0, timeout=300))
assert [c["id"] for c in continuous if "id" in c] == ["poll1", "a", "b"], continuous
assert "last_seq" in continuous[-1]

# Mango with paging.
found = list(db.find({"selector": {"type": "ballot"}, "limit": 1}))
assert len(found) == 1
db.index()[["_design/bytype", "bytype"]] = ["type"]
status, headers, body = db.resource.post_json("_find", {"selector": {"type": "ballot"}, "sort": ["type"], "limit": 1})
assert status == 200 and len(body["docs"]) == 1, body
status, headers, page2 = db.resource.post_json("_find", {"selector": {"type": "ballot"}, "sort": ["type"], "limit": 1, "bookmark": body["bookmark"]})
assert page2["docs"][0]["_id"] != body["docs"][0]["_id"], (body, page2)

# Attachments.
doc = db["a"]
db.put_attachment(doc, b"hello world", "greeting.txt", "text/plain")
assert db.get_attachment("a", "greeting.txt").read() == b"hello world"
assert db["a"]["_attachments"]["greeting.txt"]["digest"] == "md5-7mkg+nM0HN26sZkLN8KVSA=="  # CouchDB's: the MD5 of the gzip form

# _security: with members, anonymous readers are refused.
db.security = {"admins": {"names": [], "roles": []}, "members": {"names": ["someone"], "roles": []}}
anonymous = couchdb.Server(url.split("@")[0].split("//")[0] + "//" + url.split("@")[-1])
try:
    anonymous[name]["a"]
    sys.exit("an anonymous read of a members-only database was allowed")
except Unauthorized:
    pass

del server[name]
assert name not in server
print("couchdb-python scenario: ok")
