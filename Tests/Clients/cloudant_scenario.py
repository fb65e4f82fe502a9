"""The client scenario driven by python-cloudant (PyPI `cloudant`), which
signs in with a session cookie (POST /_session) and sends HEAD before PUT."""
from cloudant.client import CouchDB
from cloudant.document import Document
from cloudant.security_document import SecurityDocument
from requests.exceptions import HTTPError
from scenario_common import HOST, ADMIN, PASSWORD, check, check_members_only, make_member, done

client = CouchDB(ADMIN, PASSWORD, url=HOST, connect=True, auto_renew=True)
check(client.session()["userCtx"]["name"] == ADMIN, "cookie session", client.session())
name = "client_cloudant"
if name in client.all_dbs():
    client.delete_database(name)
db = client.create_database(name, throw_on_exists=True)
check(db.exists(), "the new database exists")

# CRUD and a stale update.
doc = db.create_document({"_id": "poll1", "question": "Tabs or spaces?", "votes": 0})
first_rev = doc["_rev"]
fetched = Document(db, "poll1")
fetched.fetch()
check(fetched["question"] == "Tabs or spaces?", "fetch", dict(fetched))
fetched["votes"] = 1
fetched.save()
check(fetched["_rev"].startswith("2-"), "save", dict(fetched))
stale = Document(db, "poll1")
stale["_rev"] = first_rev
stale["question"] = "stale"
try:
    stale.save()
    check(False, "a stale update was accepted")
except HTTPError as error:
    check(error.response.status_code == 409, "stale update status", error.response.status_code)

# Bulk, listing.
results = db.bulk_docs([{"_id": "a", "type": "ballot", "n": 1}, {"_id": "b", "type": "ballot", "n": 2}, {"_id": "poll1"}])
check([r.get("ok", False) for r in results] == [True, True, False], "bulk_docs", results)
rows = db.all_docs(include_docs=True)["rows"]
check([r["id"] for r in rows] == ["a", "b", "poll1"], "all_docs", rows)

# Changes: normal, longpoll, continuous.
changes = db.changes(since=0)
ids = [c["id"] for c in changes]
check(ids == ["poll1", "a", "b"], "changes", ids)
longpoll = db.changes(feed="longpoll", since=changes.last_seq, timeout=200)
check([c for c in longpoll] == [], "longpoll times out empty")
continuous = db.changes(feed="continuous", since=0, timeout=300)
check([c["id"] for c in continuous if "id" in c] == ["poll1", "a", "b"], "continuous")

# Mango: the query result pages with skip and limit itself.
db.create_query_index(design_document_id="by-n", index_name="by-n", fields=["n"])
found = db.get_query_result({"type": "ballot"}, sort=[{"n": "asc"}], page_size=1)
check([d["_id"] for d in found] == ["a", "b"], "query result", list(found))
raw = db.get_query_result({"type": "ballot"}, raw_result=True, limit=1, sort=[{"n": "asc"}])
again = db.get_query_result({"type": "ballot"}, raw_result=True, limit=1, sort=[{"n": "asc"}], bookmark=raw["bookmark"])
check([d["_id"] for d in again["docs"]] == ["b"], "bookmark paging", again)

# Attachments.
doc = Document(db, "a")
doc.fetch()
doc.put_attachment("greeting.txt", "text/plain", b"hello world")
check(doc.get_attachment("greeting.txt", attachment_type="binary") == b"hello world", "get_attachment")

# _security: with members, anonymous readers are refused.
make_member("votercl", "pwcl")
with SecurityDocument(db) as security:
    security["members"] = {"names": ["votercl"], "roles": []}
    security["admins"] = {"names": [], "roles": []}
member = CouchDB("votercl", "pwcl", url=HOST, connect=True)
check_members_only(name, lambda: member[name]["poll1"]["_id"] == "poll1")
member.disconnect()

client.delete_database(name)
check(name not in client.all_dbs(), "deleted")
client.disconnect()
done("cloudant")
