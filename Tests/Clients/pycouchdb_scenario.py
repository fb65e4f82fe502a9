"""The client scenario driven by pycouchdb (PyPI `pycouchdb`)."""
import pycouchdb
from pycouchdb.exceptions import Conflict
from pycouchdb.feedreader import BaseFeedReader
from scenario_common import URL, HOST, check, check_members_only, make_member, done

server = pycouchdb.Server(URL + "/", authmethod="basic")
check(server.version() == "3.4.3", "version", server.version())
name = "client_pycouchdb"
if name in server:
    server.delete(name)
db = server.create(name)
check(name in server, "the new database exists")

# CRUD and a stale update.
doc = db.save({"_id": "poll1", "question": "Tabs or spaces?", "votes": 0})
first_rev = doc["_rev"]
check(db.get("poll1")["question"] == "Tabs or spaces?", "get")
doc["votes"] = 1
doc = db.save(doc)
check(doc["_rev"].startswith("2-"), "update", doc)
try:
    db.save({"_id": "poll1", "_rev": first_rev, "question": "stale"})
    check(False, "a stale update was accepted")
except Conflict:
    pass

# Bulk (pycouchdb sends all_or_nothing=true), listing.
saved = db.save_bulk([{"_id": "a", "type": "ballot", "n": 1}, {"_id": "b", "type": "ballot", "n": 2}])
check([d["_id"] for d in saved] == ["a", "b"] and all("_rev" in d for d in saved), "save_bulk", saved)
rows = list(db.all())
check([r["id"] for r in rows] == ["a", "b", "poll1"] and rows[0]["doc"]["type"] == "ballot", "all", rows)

# Changes: normal (list), longpoll and continuous (its feed reader).
last_seq, results = db.changes_list(since=0)
check([c["id"] for c in results] == ["poll1", "a", "b"], "changes_list", results)
_, empty = db.changes_list(feed="longpoll", since=last_seq, timeout=200)
check(empty == [], "longpoll times out empty", empty)


class Collect(BaseFeedReader):
    def __init__(self):
        super().__init__()
        self.ids = []

    def on_message(self, message):
        if "id" in message:
            self.ids.append(message["id"])


reader = Collect()
db.changes_feed(reader, since=0, timeout=300)
check(reader.ids == ["poll1", "a", "b"], "continuous", reader.ids)

# Mango with paging (mango_pages follows the bookmark).
pages = [[d["_id"] for d in page] for page in db.mango_pages({"type": "ballot"}, 1)]
check([p for p in pages if p] == [["a"], ["b"]], "mango_pages", pages)
check(len(list(db.find({"type": "ballot"}))) == 2, "find")

# Attachments.
doc = db.get("a")
doc = db.put_attachment(doc, b"hello world", filename="greeting.txt", content_type="text/plain")
check(db.get_attachment(doc, "greeting.txt") == b"hello world", "get_attachment")
# CouchDB's digest of a text attachment: the MD5 of its gzip form.
check(db.get("a")["_attachments"]["greeting.txt"]["digest"] == "md5-7mkg+nM0HN26sZkLN8KVSA==", "digest")

# _security: with members, anonymous readers are refused.
make_member("voterpy", "pwpy")
db.resource.put("_security", data=b'{"admins":{"names":[],"roles":[]},"members":{"names":["voterpy"],"roles":[]}}')
member = pycouchdb.Server(HOST.replace("://", "://voterpy:pwpy@") + "/", authmethod="basic")
check_members_only(name, lambda: member.database(name).get("poll1")["_id"] == "poll1")

server.delete(name)
check(name not in server, "deleted")
done("pycouchdb")
