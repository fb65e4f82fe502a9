"""SIGKILL during a write burst: every write the server acknowledged (201)
is there after a restart, and the SQLite file passes PRAGMA integrity_check.

Usage: durability_scenario.py PATH_TO_STRATA. Starts and stops its own
`strata serve` on a free loopback port; bounded in count and time."""
import http.client
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import base64

strata = sys.argv[1]
data = tempfile.mkdtemp(prefix="strata-durability-")
AUTH = {"Authorization": "Basic " + base64.b64encode(b"admin:secret").decode()}


def start():
    proc = subprocess.Popen([strata, "serve", "--data", data, "--port", "0", "--admin", "admin:secret"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    deadline = time.time() + 60
    while time.time() < deadline:
        line = proc.stdout.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", line or "")
        if m:
            return proc, int(m.group(1))
    proc.kill()
    sys.exit("strata serve did not start within 60 s")


def request(port, method, path, body=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request(method, path, body=body, headers={**AUTH, "Content-Type": "application/json"})
    r = conn.getresponse()
    payload = r.read()
    conn.close()
    return r.status, payload


proc, port = start()
assert request(port, "PUT", "/burst")[0] == 201
acknowledged = []
lock = threading.Lock()
stop = threading.Event()


def writer(n):
    i = 0
    while not stop.is_set() and i < 5000:
        doc_id = f"w{n}-{i}"
        try:
            status, _ = request(port, "PUT", f"/burst/{doc_id}", b'{"payload":"%s"}' % (b"x" * 200))
        except Exception:
            return  # the server is gone
        if status == 201:
            with lock:
                acknowledged.append(doc_id)
        i += 1


threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
for t in threads:
    t.start()
deadline = time.time() + 60
while time.time() < deadline:
    with lock:
        if len(acknowledged) >= 300:
            break
    time.sleep(0.01)
os.kill(proc.pid, signal.SIGKILL)
proc.wait()
stop.set()
for t in threads:
    t.join()
with lock:
    acked = list(acknowledged)
assert len(acked) >= 300, f"only {len(acked)} writes acknowledged before the deadline"

proc, port = start()
try:
    status, body = request(port, "POST", "/burst/_all_docs", ('{"keys":%s}' % str(acked).replace("'", '"')).encode())
    assert status == 200, body
    import json
    rows = json.loads(body)["rows"]
    missing = [r["key"] for r in rows if "error" in r]
    assert not missing, f"{len(missing)} acknowledged writes lost, e.g. {missing[:5]}"
finally:
    proc.terminate()
    proc.wait()
check = subprocess.run([strata, "sql", os.path.join(data, "burst.couch.sqlite"), "PRAGMA integrity_check"],
                       capture_output=True, text=True)
assert check.returncode == 0 and "ok" in check.stdout, check.stdout + check.stderr
print(f"durability scenario: ok ({len(acked)} acknowledged writes survived SIGKILL, integrity_check ok)")
