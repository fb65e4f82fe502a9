"""What every client scenario shares: the server's address from
COUCHDB_URL (admin credentials in it), a check that names what failed, and
raw requests for the few steps a client library has no call for."""
import json
import os
import sys
import urllib.parse
import urllib.request

URL = os.environ["COUCHDB_URL"].rstrip("/")
_parts = urllib.parse.urlsplit(URL)
ADMIN = _parts.username or "admin"
PASSWORD = _parts.password or ""
HOST = f"{_parts.scheme}://{_parts.hostname}:{_parts.port}"


def check(condition, what, detail=None):
    if not condition:
        sys.exit(f"FAILED: {what}" + (f": {detail!r}" if detail is not None else ""))


def raw(method, path, body=None, user=None, headers=None):
    """One request without the client library; answers (status, JSON)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(HOST + path, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    if user is not None:
        import base64
        request.add_header("Authorization", "Basic " + base64.b64encode(user.encode()).decode())
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            text = answer.read()
            return answer.status, json.loads(text) if text.strip() else None
    except urllib.error.HTTPError as error:
        text = error.read()
        return error.code, json.loads(text) if text.strip() else None


def check_members_only(db, member_read):
    """With members set, anonymous is refused (401), a member reads."""
    status, body = raw("GET", f"/{db}/poll1")
    check(status == 401 and body["error"] == "unauthorized", "an anonymous read of a members-only database", (status, body))
    check(member_read(), "a member's read of a members-only database")


def make_member(name, password):
    status, body = raw("PUT", f"/_users/org.couchdb.user:{name}",
                       {"name": name, "password": password, "type": "user", "roles": []},
                       user=f"{ADMIN}:{PASSWORD}")
    check(status in (201, 409), "creating a user", (status, body))


def done(client):
    print(f"{client} scenario: ok")
