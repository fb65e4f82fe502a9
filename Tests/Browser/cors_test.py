"""CORS in a real browser: a page served from one loopback port syncs a
browser database (localStorage) with `strata serve` on another port, in
headless Chromium, which enforces CORS as it does for any web app.

Usage: cors_test.py STRATA_BINARY ARTIFACTS_DIR

Starts, on free loopback ports, the page's own HTTP server and two
`strata serve`: one with `--cors-origin <the page's origin>
--cors-credentials`, one without CORS. The same page must sync with the
first (a preflighted PUT with Authorization, a cookie session, the
exposed ETag header, the changes feed) and be blocked by the browser from
the second. Everything started here is stopped at the end.
"""
import base64
import http.server
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

STRATA, ARTIFACTS = sys.argv[1], sys.argv[2]
ADMIN = ("admin", "secret")
WAIT = 60

PAGE = """<!doctype html>
<meta charset="utf-8">
<title>A browser app on another origin</title>
<script>
// A small sync client: documents kept in localStorage, pushed with PUT
// (JSON and Authorization make the browser send a preflight) and pulled
// from the changes feed.
const local = {
  all() { return JSON.parse(localStorage.getItem("docs") || "{}"); },
  save(docs) { localStorage.setItem("docs", JSON.stringify(docs)); },
};

async function sync(base, db, authorization) {
  const report = {pushed: [], etags: [], pulled: [], cookieWrite: null, signedInAs: null};
  const headers = {"Content-Type": "application/json"};
  if (authorization) headers["Authorization"] = authorization;
  const docs = local.all();
  for (const [id, doc] of Object.entries(docs)) {
    const answer = await fetch(`${base}/${db}/${encodeURIComponent(id)}`,
                               {method: "PUT", headers, body: JSON.stringify(doc)});
    const body = await answer.json();
    if (!answer.ok) throw new Error(`PUT ${id}: ${answer.status} ${JSON.stringify(body)}`);
    docs[id] = {...doc, _rev: body.rev};
    report.pushed.push(id);
    report.etags.push(answer.headers.get("ETag"));
  }
  const changes = await fetch(`${base}/${db}/_changes?include_docs=true`, {headers});
  for (const row of (await changes.json()).results) {
    docs[row.id] = row.doc;
    report.pulled.push(row.id);
  }
  local.save(docs);
  // A cookie session across origins: sign in, then write with the cookie
  // alone (credentials: "include" needs Access-Control-Allow-Credentials).
  const signIn = await fetch(`${base}/_session`, {method: "POST", credentials: "include",
    headers: {"Content-Type": "application/json"}, body: JSON.stringify({name: "admin", password: "secret"})});
  if (!signIn.ok) throw new Error(`sign in: ${signIn.status}`);
  const session = await fetch(`${base}/_session`, {credentials: "include"});
  report.signedInAs = (await session.json()).userCtx.name;
  const write = await fetch(`${base}/${db}/by-cookie`, {method: "PUT", credentials: "include",
    headers: {"Content-Type": "application/json"}, body: JSON.stringify({via: "cookie"})});
  report.cookieWrite = write.status;
  return report;
}

window.runSync = (base, db, authorization, done) => {
  local.save({"from-the-browser": {note: "written offline in the page"}});
  sync(base, db, authorization).then(
    report => done({ok: true, report}),
    error => done({ok: false, error: String(error)}));
};
</script>
<p>sync page</p>
"""


class Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        data = PAGE.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def serve(data, *options):
    """Starts `strata serve` on a free port; answers the process and its URL."""
    log = open(os.path.join(data, "serve.log"), "w+")
    process = subprocess.Popen([STRATA, "serve", "--data", os.path.join(data, "db"), "--port", "0",
                                "--admin", ":".join(ADMIN), "--password-iterations", "1000", *options],
                               stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        log.seek(0)
        found = re.search(r"http://127\.0\.0\.1:\d+", log.read())
        if found:
            return process, found.group(0)
        if process.poll() is not None:
            break
        time.sleep(0.1)
    log.seek(0)
    process.kill()
    raise SystemExit("strata serve did not start:\n" + log.read())


def call(base, method, path, body=None):
    request = urllib.request.Request(base + path, method=method,
                                     data=None if body is None else json.dumps(body).encode())
    request.add_header("Content-Type", "application/json")
    request.add_header("Authorization", "Basic " + base64.b64encode(":".join(ADMIN).encode()).decode())
    try:
        with urllib.request.urlopen(request, timeout=WAIT) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


page_server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
threading.Thread(target=page_server.serve_forever, daemon=True).start()
origin = f"http://127.0.0.1:{page_server.server_address[1]}"
work = tempfile.mkdtemp()
os.makedirs(os.path.join(work, "cors"))
os.makedirs(os.path.join(work, "plain"))
processes = []
driver = None
try:
    cors_process, cors = serve(os.path.join(work, "cors"), "--cors-origin", origin, "--cors-credentials")
    processes.append(cors_process)
    plain_process, plain = serve(os.path.join(work, "plain"))
    processes.append(plain_process)
    for base in (cors, plain):
        assert call(base, "PUT", "/app")[0] == 201
        assert call(base, "PUT", "/app/from-the-server", {"note": "already there"})[0] == 201

    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for flag in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-proxy-server"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)
    driver.set_script_timeout(WAIT)
    driver.get(origin + "/")
    authorization = "Basic " + base64.b64encode(":".join(ADMIN).encode()).decode()

    print("test: the page syncs with the server that allows its origin")
    result = driver.execute_async_script(
        "window.runSync(arguments[0], 'app', arguments[1], arguments[arguments.length - 1])", cors, authorization)
    assert result["ok"], result
    report = result["report"]
    assert report["pushed"] == ["from-the-browser"], report
    assert report["etags"][0] and report["etags"][0].startswith('"1-'), f"ETag not readable: {report}"
    assert sorted(report["pulled"]) == ["from-the-browser", "from-the-server"], report
    assert report["signedInAs"] == "admin", report
    assert report["cookieWrite"] == 201, report
    status, doc = call(cors, "GET", "/app/from-the-browser")
    assert status == 200 and doc["note"] == "written offline in the page", doc
    assert call(cors, "GET", "/app/by-cookie")[0] == 200
    stored = driver.execute_script("return JSON.parse(localStorage.getItem('docs'))")
    assert stored["from-the-server"]["note"] == "already there", stored
    driver.save_screenshot(os.path.join(ARTIFACTS, "cors-synced.png"))

    print("test: the browser blocks the page from a server without CORS")
    result = driver.execute_async_script(
        "window.runSync(arguments[0], 'app', arguments[1], arguments[arguments.length - 1])", plain, authorization)
    assert not result["ok"] and "Failed to fetch" in result["error"], result
    assert call(plain, "GET", "/app/from-the-browser")[0] == 404, "the blocked preflight must stop the write"
    blocked = [entry["message"] for entry in driver.get_log("browser") if "CORS policy" in entry["message"]]
    assert blocked, "Chromium logged no CORS refusal"
    print("cors tests passed")
finally:
    if driver is not None:
        driver.quit()
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            process.kill()
    page_server.shutdown()
