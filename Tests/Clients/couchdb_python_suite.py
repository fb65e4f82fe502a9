"""Runs couchdb-python's own client test suite (couchdb.tests.client)
against the server named by COUCHDB_URL, and fails when a test fails that
is not listed, with its reason, in couchdb_python_skips.txt — or when a
listed test passes, so that the list stays true."""
import os
import sys
import unittest

here = os.path.dirname(os.path.abspath(__file__))
allowed = {}
with open(os.path.join(here, "couchdb_python_skips.txt")) as listing:
    for line in listing:
        name, _, reason = line.partition("#")
        if name.strip():
            allowed[name.strip()] = reason.strip()

import couchdb.tests.client as suite_module  # noqa: E402 (reads COUCHDB_URL on import)

suite = unittest.defaultTestLoader.loadTestsFromModule(suite_module)
result = unittest.TextTestRunner(stream=open(os.devnull, "w"), verbosity=0).run(suite)


def short(test):
    return test.id().replace("couchdb.tests.client.", "")


failed = {short(test): text for test, text in result.failures + result.errors}
unexpected = sorted(set(failed) - set(allowed))
now_passing = sorted(set(allowed) - set(failed))
for name in unexpected:
    print(f"UNEXPECTED FAILURE {name}\n{failed[name]}")
for name in now_passing:
    print(f"now passes (remove it from couchdb_python_skips.txt): {name}")
passed = result.testsRun - len(failed)
print(f"couchdb-python suite: {passed} passed, {len(failed)} failed ({len(failed) - len(unexpected)} of them listed), of {result.testsRun}")
sys.exit(1 if unexpected or now_passing else 0)
