"""The client scenario driven by ibmcloudant (PyPI `ibmcloudant`), which
gzips its request bodies and POSTs to _all_docs and _changes; it also
drives the replication endpoints (_revs_diff, _bulk_get, new_edits=false)."""
from ibm_cloud_sdk_core import ApiException
from ibm_cloud_sdk_core.authenticators import BasicAuthenticator, NoAuthAuthenticator
from ibmcloudant.cloudant_v1 import CloudantV1, BulkDocs, BulkGetQueryDocument, IndexDefinition, IndexField
from scenario_common import HOST, ADMIN, PASSWORD, check, check_members_only, make_member, done


def client(user, password):
    service = CloudantV1(authenticator=BasicAuthenticator(user, password))
    service.set_service_url(HOST)
    return service


service = client(ADMIN, PASSWORD)
check(service.get_server_information().get_result()["version"] == "3.4.3", "server information")
name = "client_ibmcloudant"
try:
    service.delete_database(db=name)
except ApiException:
    pass
check(service.put_database(db=name).get_status_code() == 201, "create db")

# CRUD and a stale update (bodies gzipped).
created = service.post_document(db=name, document={"_id": "poll1", "question": "Tabs or spaces?", "votes": 0}).get_result()
first_rev = created["rev"]
doc = service.get_document(db=name, doc_id="poll1").get_result()
check(doc["question"] == "Tabs or spaces?", "get_document", doc)
doc["votes"] = 1
updated = service.put_document(db=name, doc_id="poll1", document=doc).get_result()
check(updated["rev"].startswith("2-"), "put_document", updated)
try:
    service.put_document(db=name, doc_id="poll1", document={"_id": "poll1", "_rev": first_rev, "question": "stale"})
    check(False, "a stale update was accepted")
except ApiException as error:
    check(error.status_code == 409, "stale update status", error.status_code)

# Bulk, listing.
results = service.post_bulk_docs(db=name, bulk_docs=BulkDocs(docs=[{"_id": "a", "type": "ballot", "n": 1}, {"_id": "b", "type": "ballot", "n": 2}])).get_result()
check([r.get("ok") for r in results] == [True, True], "post_bulk_docs", results)
rows = service.post_all_docs(db=name, include_docs=True).get_result()["rows"]
check([r["id"] for r in rows] == ["a", "b", "poll1"], "post_all_docs", rows)
keyed = service.post_all_docs(db=name, keys=["b", "nope"]).get_result()["rows"]
check(keyed[0]["id"] == "b" and keyed[1] == {"key": "nope", "error": "not_found"}, "post_all_docs keys", keyed)

# Changes: normal, longpoll, continuous.
changes = service.post_changes(db=name, since="0").get_result()
check([c["id"] for c in changes["results"]] == ["poll1", "a", "b"], "post_changes", changes)
longpoll = service.post_changes(db=name, feed="longpoll", since=changes["last_seq"], timeout=200).get_result()
check(longpoll["results"] == [], "longpoll times out empty", longpoll)
stream = service.post_changes_as_stream(db=name, feed="continuous", since="0", timeout=300).get_result()
import json
lines = [json.loads(line) for line in stream.iter_lines() if line]
check([c["id"] for c in lines if "id" in c] == ["poll1", "a", "b"] and "last_seq" in lines[-1], "continuous", lines)

# Mango with paging.
service.post_index(db=name, index=IndexDefinition(fields=[IndexField(n="asc")]), ddoc="by-n", name="by-n")
page1 = service.post_find(db=name, selector={"type": "ballot"}, sort=[{"n": "asc"}], limit=1).get_result()
page2 = service.post_find(db=name, selector={"type": "ballot"}, sort=[{"n": "asc"}], limit=1, bookmark=page1["bookmark"]).get_result()
check([d["_id"] for d in page1["docs"] + page2["docs"]] == ["a", "b"], "post_find paging", (page1, page2))

# Replication endpoints: a revision written with new_edits=false, then
# _revs_diff and _bulk_get as a replicator calls them.
service.post_bulk_docs(db=name, bulk_docs=BulkDocs(docs=[{"_id": "r", "_rev": "1-abc", "n": 9}], new_edits=False))
diff = service.post_revs_diff(db=name, document_revisions={"r": ["1-abc", "2-def"]}).get_result()
check(diff == {"r": {"missing": ["2-def"], "possible_ancestors": ["1-abc"]}}, "post_revs_diff", diff)
got = service.post_bulk_get(db=name, docs=[BulkGetQueryDocument(id="r", rev="1-abc")], revs=True).get_result()
check(got["results"][0]["docs"][0]["ok"]["_revisions"] == {"start": 1, "ids": ["abc"]}, "post_bulk_get", got)

# Attachments.
rev = service.get_document(db=name, doc_id="a").get_result()["_rev"]
service.put_attachment(db=name, doc_id="a", attachment_name="greeting.txt", attachment=b"hello world", content_type="text/plain", rev=rev)
data = service.get_attachment(db=name, doc_id="a", attachment_name="greeting.txt").get_result().content
check(data == b"hello world", "get_attachment", data)

# _security: with members, anonymous readers are refused.
make_member("voteribm", "pwibm")
service.put_security(db=name, members={"names": ["voteribm"], "roles": []}, admins={"names": [], "roles": []})
member = client("voteribm", "pwibm")
check_members_only(name, lambda: member.get_document(db=name, doc_id="poll1").get_result()["_id"] == "poll1")
anonymous = CloudantV1(authenticator=NoAuthAuthenticator())
anonymous.set_service_url(HOST)
try:
    anonymous.get_document(db=name, doc_id="poll1")
    check(False, "an anonymous read of a members-only database was allowed")
except ApiException as error:
    check(error.status_code == 401, "anonymous status", error.status_code)

service.delete_database(db=name)
done("ibmcloudant")
