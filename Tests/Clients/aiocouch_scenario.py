"""The client scenario driven by aiocouch (PyPI `aiocouch`, asyncio and
aiohttp), which sends HEAD before PUT."""
import asyncio
from aiocouch import CouchDB, ConflictError, UnauthorizedError
from scenario_common import HOST, ADMIN, PASSWORD, check, check_members_only, make_member, raw, done


async def main():
    async with CouchDB(HOST, user=ADMIN, password=PASSWORD) as couchdb:
        name = "client_aiocouch"
        if name in await couchdb.keys():
            await (await couchdb[name]).delete()
        db = await couchdb.create(name)
        check(name in await couchdb.keys(), "the new database is listed")

        # CRUD and a stale update.
        doc = await db.create("poll1", data={"question": "Tabs or spaces?", "votes": 0})
        await doc.save()
        first_rev = doc.rev
        again = await db["poll1"]
        check(again["question"] == "Tabs or spaces?", "get", again.json)
        again["votes"] = 1
        await again.save()
        check(again.rev.startswith("2-"), "update", again.rev)
        stale = await db["poll1"]
        stale.rev = first_rev
        stale["question"] = "stale"
        try:
            await stale.save()
            check(False, "a stale update was accepted")
        except ConflictError:
            pass
        try:
            await db.create("poll1")
            check(False, "create of an existing id was allowed")
        except ConflictError:
            pass

        # Bulk, listing.
        async with db.create_docs() as bulk:
            bulk.create("a", data={"type": "ballot", "n": 1})
            bulk.create("b", data={"type": "ballot", "n": 2})
        check([r.get("ok") for r in bulk.response] == [True, True], "create_docs", bulk.response)
        ids = [key async for key in db.akeys()]
        check(ids == ["a", "b", "poll1"], "all_docs keys", ids)
        docs = [d async for d in db.values()]
        check([d.id for d in docs] == ["a", "b", "poll1"] and docs[0]["type"] == "ballot", "all_docs values")

        # Changes: normal, longpoll, continuous.
        normal = [e.json["id"] async for e in db.changes(since=0)]
        check(normal == ["poll1", "a", "b"], "changes", normal)
        longpoll = [e async for e in db.changes(feed="longpoll", since="now", timeout=200)]
        check(longpoll == [], "longpoll times out empty", longpoll)
        continuous = [e.json["id"] async for e in db.changes(feed="continuous", since=0, timeout=300) if "id" in e.json]
        check(continuous == ["poll1", "a", "b"], "continuous", continuous)

        # Mango (aiocouch follows the bookmark itself), and paging by hand.
        await db.index({"fields": ["n"]}, ddoc="by-n", name="by-n")
        found = [d.id async for d in db.find({"type": "ballot"}, sort=[{"n": "asc"}])]
        check(found == ["a", "b"], "find", found)
        path = f"/{name}/_find"
        _, page1 = raw("POST", path, {"selector": {"type": "ballot"}, "sort": [{"n": "asc"}], "limit": 1}, user=f"{ADMIN}:{PASSWORD}")
        _, page2 = raw("POST", path, {"selector": {"type": "ballot"}, "sort": [{"n": "asc"}], "limit": 1, "bookmark": page1["bookmark"]}, user=f"{ADMIN}:{PASSWORD}")
        check([d["_id"] for d in page1["docs"] + page2["docs"]] == ["a", "b"], "bookmark paging", (page1, page2))

        # Attachments.
        a = await db["a"]
        attachment = a.attachment("greeting.txt")
        await attachment.save(b"hello world", "text/plain")
        check(await attachment.fetch() == b"hello world", "attachment fetch")

        # _security: with members, anonymous readers are refused.
        make_member("voterai", "pwai")
        async with await db.security() as security:
            security.add_member("voterai")

        async def member_reads():
            async with CouchDB(HOST, user="voterai", password="pwai") as member:
                return (await (await member[name]).get("poll1"))["question"] == "Tabs or spaces?"

        check(await member_reads(), "a member's read")
        check_members_only(name, lambda: True)
        try:
            async with CouchDB(HOST, user="voterai", password="wrong") as intruder:
                await intruder.check_credentials()
            check(False, "a wrong password was accepted")
        except UnauthorizedError:
            pass

        await db.delete()
        check(name not in await couchdb.keys(), "deleted")
    done("aiocouch")


asyncio.run(main())
