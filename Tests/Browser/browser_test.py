"""The /_utils page in a real browser: Debian's Chromium, headless, driven
by Selenium through Debian's chromedriver, against a `strata serve` that
Tests/Browser/run started on loopback.

Usage: browser_test.py BASE_URL SQLITE_FILE_NAME ARTIFACTS_DIR

Each test prints its name and fails loudly; screenshots of every page go to
ARTIFACTS_DIR (not committed) so a person can look.
"""
import base64
import json
import os
import sys
import time
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import Select, WebDriverWait

BASE, SQLITE_FILE, ARTIFACTS = sys.argv[1].rstrip("/"), sys.argv[2], sys.argv[3]
ADMIN = ("admin", "secret")
WAIT = 60  # generous: a busy CI machine is slow, never wrong

# The seed's documents, pasted into the source editor as a person would.
QUESTIONS = [
    {"_id": "tabs-or-spaces", "question": "Tabs or spaces?",
     "answers": [{"answer": "Tabs", "votes": []}, {"answer": "Spaces", "votes": []}]},
    {"_id": "best-season", "question": "Which season do you like best?",
     "answers": [{"answer": "Spring", "votes": []}, {"answer": "Summer", "votes": []},
                 {"answer": "Autumn", "votes": []}, {"answer": "Winter", "votes": []}]},
]
DESIGN = """{
   "_id": "_design/voting",
   "updates": {
       "addvote": "function(doc, req) { var json = JSON.parse(req.body); doc.answers[parseInt(json.answer)].votes.push(json.uid); return [doc, toJSON(doc)]}"
   }
}"""
XSS = "<img src=x onerror=\"window.__xss=1\"><script>window.__xss=1</script>"


def call(method, path, body=None):
    """The HTTP API from outside the browser, as the seed's app calls it."""
    request = urllib.request.Request(BASE + path, method=method,
                                     data=None if body is None else json.dumps(body).encode())
    request.add_header("Content-Type", "application/json")
    request.add_header("Authorization", "Basic " + base64.b64encode(":".join(ADMIN).encode()).decode())
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for flag in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--window-size=1280,900", "--no-proxy-server"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)
    driver.set_page_load_timeout(WAIT)
    return driver


driver = browser()
# The page re-renders as answers come: an element found a moment ago may be
# gone, which only means "not yet".
wait = WebDriverWait(driver, WAIT, ignored_exceptions=[NoSuchElementException, StaleElementReferenceException])
shots = 0


def shot(name):
    global shots
    shots += 1
    driver.save_screenshot(os.path.join(ARTIFACTS, f"{shots:02d}-{name}.png"))


def find(css):
    return wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, css)))


def click(css):
    wait.until(ec.element_to_be_clickable((By.CSS_SELECTOR, css))).click()


def text_appears(css, text):
    wait.until(ec.text_to_be_present_in_element((By.CSS_SELECTOR, css), text))


def go(hash_):
    """Opens the page afresh at a route (a fresh load: nothing of the page
    before it can be found by mistake)."""
    driver.get("about:blank")
    driver.get(BASE + "/_utils/" + hash_)


def paste(css, text):
    """Replaces a textarea's text, typed as a person pastes it."""
    area = find(css)
    area.send_keys(Keys.CONTROL, "a")
    area.send_keys(Keys.DELETE)
    driver.execute_script("arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'))", area, text)


def no_xss():
    assert driver.execute_script("return window.__xss === undefined"), "a document's or a cell's markup ran"


failures = []


def test(function):
    """Runs a test at once; a failure is reported with its screenshot and
    the next tests still run (each starts from a fresh page load), so one
    run lists every failing test. The script exits non-zero at the end."""
    print("browser test:", function.__name__, flush=True)
    try:
        function()
    except Exception as error:
        shot("FAILED-" + function.__name__)
        print(f"FAILED: {function.__name__}: {type(error).__name__}: {error}", flush=True)
        failures.append(function.__name__)
    return function


def main_text_nodes():
    """The text nodes placed directly in <main>, as the page shows them."""
    return driver.execute_script(
        "return [...document.getElementById('main').childNodes].filter(n => n.nodeType === 3).map(n => n.textContent)")


@test
def sign_out_is_hidden_while_signed_out():
    go("")
    find("#login-name")
    assert not find("#signout").is_displayed(), "Sign out is shown to a visitor who is not signed in"


@test
def sign_in_as_an_admin():
    go("")
    find("#login-name").send_keys("admin")
    find("#login-password").send_keys("wrong")
    click("#login-submit")
    text_appears(".error", "Sign-in refused")
    shot("sign-in-refused")
    password = find("#login-password")
    password.clear()
    password.send_keys("secret", Keys.ENTER)  # the keyboard is enough
    text_appears("#who", "admin")
    find("#create-db")
    shot("databases")


@test
def the_new_database_name_is_checked_in_the_browser():
    # Chromium compiles a pattern attribute with the `v` flag; one it cannot
    # compile is ignored (and logged on every load), so nothing is checked.
    verdict = driver.execute_script("""
        const input = document.getElementById('new-db-name');
        try { new RegExp('^(?:' + input.pattern + ')$', 'v'); } catch (e) { return 'invalid pattern: ' + e.message; }
        input.value = 'Bad Name';
        const refused = input.validity.patternMismatch;
        input.value = 'good_name(1)+more/x-y$';
        const accepted = !input.validity.patternMismatch;
        input.value = '';
        return refused && accepted ? 'ok' : 'refused ' + refused + ', accepted ' + accepted;""")
    assert verdict == "ok", verdict


@test
def the_seeds_futon_steps():
    # "Create database": voting.
    find("#new-db-name").send_keys("voting")
    click("#create-db")
    text_appears("h1", "voting")
    # "New document", "Source", paste the JSON, "Save" — for each question
    # and for the design document.
    for source in [json.dumps(q, indent=3) for q in QUESTIONS] + [DESIGN]:
        go("#/db/voting")
        click("#new-doc")
        find("#source")
        paste("#source", source)
        shot("new-document")
        click("#save")
        wanted = json.loads(source)["_id"]
        wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "h1").text == wanted)
    go("#/db/voting")
    text_appears("tbody", "_design/voting")
    text_appears("tbody", "tabs-or-spaces")
    shot("documents")
    # The seed's update call from outside now works.
    status, answer = call("POST", "/voting/_design/voting/_update/addvote/tabs-or-spaces", {"answer": 1, "uid": "device-1"})
    assert status == 201, (status, answer)
    status, question = call("GET", "/voting/tabs-or-spaces")
    assert question["answers"][1]["votes"] == ["device-1"], question


@test
def no_stray_text_under_a_documents_table():
    go("#/db/voting")
    text_appears("tbody", "tabs-or-spaces")
    stray = [t for t in main_text_nodes() if t.strip()]
    assert not stray, f"text outside any element under the page: {stray}"


@test
def a_prefix_search_counts_its_own_results():
    total = call("GET", "/voting")[1]["doc_count"]
    go("#/db/voting")
    find("#id-prefix").send_keys("tabs", Keys.ENTER)
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "tbody tr")) == 1)
    text = find("main").text
    assert f"{total} documents" not in text, f"the database's total ({total}) beside one result"
    assert "1 document" in text, text
    shot("prefix-search")


@test
def the_documents_list_shows_fields_json_conflicts_and_design_documents():
    call("PUT", "/voting/clash?new_edits=false", {"_id": "clash", "_rev": "1-aaaa", "side": "a"})
    call("PUT", "/voting/clash?new_edits=false", {"_id": "clash", "_rev": "1-bbbb", "side": "b"})
    go("#/db/voting")
    text_appears("tbody", "clash")
    row = [r for r in driver.find_elements(By.CSS_SELECTOR, "tbody tr") if r.text.startswith("clash")][0]
    assert row.find_elements(By.CSS_SELECTOR, ".conflict-mark"), "a conflicted document is not marked"
    # Chosen fields as columns.
    Select(find("#show-as")).select_by_visible_text("chosen fields")
    find("#show-fields").send_keys("question, answers.0.answer", Keys.ENTER)
    text_appears("thead", "answers.0.answer")
    text_appears("tbody", "Tabs or spaces?")
    text_appears("tbody", "Spring")
    shot("documents-fields")
    # Documents as JSON.
    Select(find("#show-as")).select_by_visible_text("documents (JSON)")
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "tbody pre"))
    text_appears("tbody", '"question": "Tabs or spaces?"')
    # Design documents only.
    click("#design-only")
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "tbody tr")
               and all(r.text.startswith("_design/") for r in d.find_elements(By.CSS_SELECTOR, "tbody tr")))


@test
def several_documents_deleted_at_once():
    for name in ["gone-1", "gone-2", "kept"]:
        call("PUT", "/voting/" + name, {"n": 1})
    go("#/db/voting?prefix=gone")
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "tbody tr")) == 2)
    assert not find("#delete-selected").is_enabled()
    for box in driver.find_elements(By.CSS_SELECTOR, "tbody input.pick"):
        box.click()
    click("#delete-selected")
    driver.switch_to.alert.accept()
    wait.until(lambda d: call("GET", "/voting/gone-1")[0] == 404 and call("GET", "/voting/gone-2")[0] == 404)
    assert call("GET", "/voting/kept")[0] == 200
    text_appears("main", "No document id starts with that.")


@test
def a_conflict_is_shown_with_the_current_revision():
    go("#/db/voting/doc/best-season")
    find("#source")
    # Someone else saves the document meanwhile.
    status, current = call("GET", "/voting/best-season")
    current["question"] = "Which season, really?"
    status, saved = call("PUT", "/voting/best-season", current)
    assert status == 201
    text = find("#source").get_attribute("value").replace('"Which season do you like best?"', '"Best season?"')
    paste("#source", text)
    click("#save")
    text_appears("#conflict", saved["rev"])
    shot("conflict")
    click("#conflict button")
    click("#save")
    wait.until(lambda d: call("GET", "/voting/best-season")[1]["question"] == "Best season?")


@test
def conflicting_revisions_and_picking_the_winner():
    call("PUT", "/voting/split?new_edits=false", {"_id": "split", "_rev": "2-aaaa", "v": "a", "_revisions": {"start": 2, "ids": ["aaaa", "1111"]}})
    call("PUT", "/voting/split?new_edits=false", {"_id": "split", "_rev": "2-bbbb", "v": "b", "_revisions": {"start": 2, "ids": ["bbbb", "1111"]}})
    go("#/db/voting/doc/split")
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".conflict")) == 2)
    shot("conflicts")
    # Keep the losing one: the winner is deleted.
    keep = [c for c in driver.find_elements(By.CSS_SELECTOR, ".conflict") if "2-aaaa" in c.text][0]
    keep.find_element(By.TAG_NAME, "button").click()
    wait.until(lambda d: call("GET", "/voting/split?conflicts=true")[1].get("_rev") == "2-aaaa"
               and "_conflicts" not in call("GET", "/voting/split?conflicts=true")[1])


@test
def markup_in_a_document_shows_as_text():
    call("PUT", "/voting/xss", {"title": XSS})
    call("PUT", "/voting/" + urllib.request.quote("<b>bold</b>", safe=""), {"x": 1})
    go("#/db/voting")
    text_appears("tbody", "<b>bold</b>")
    assert not driver.find_elements(By.CSS_SELECTOR, "tbody b"), "an id became markup"
    go("#/db/voting/doc/xss")
    assert json.dumps(XSS)[1:-1] in find("#source").get_attribute("value")
    go("#/db/voting/find")
    paste("#mango", json.dumps({"selector": {"_id": "xss"}}))
    click("#run-find")
    text_appears("#find-result", "window.__xss=1")
    assert "null" not in find("#find-result").text.split("\n")[0], "a stray null above the results"
    assert not driver.find_elements(By.CSS_SELECTOR, "#find-result img, #find-result script")
    no_xss()
    shot("mango")


@test
def mango_indexes_and_explain():
    go("#/db/voting/find")
    find("#indexes")
    find("#index-fields").send_keys("question")
    find("#index-name").send_keys("by-question", Keys.ENTER)
    text_appears("#indexes", "by-question")
    paste("#mango", json.dumps({"selector": {"question": {"$gt": None}}}))
    click("#explain-find")
    text_appears("#explain-index", "by-question")
    shot("mango-explain")
    row = wait.until(lambda d: [r for r in d.find_elements(By.CSS_SELECTOR, "#indexes tbody tr") if "by-question" in r.text])[0]
    row.find_element(By.CSS_SELECTOR, "button.danger").click()
    driver.switch_to.alert.accept()
    wait.until(lambda d: "by-question" not in d.find_element(By.ID, "indexes").text)
    assert all(i["name"] != "by-question" for i in call("GET", "/voting/_index")[1]["indexes"])


@test
def the_changes_feed_is_live():
    go("#/db/voting/changes")
    find("#changes li")
    call("PUT", "/voting/arrived-live", {"n": 1})
    text_appears("#changes", "arrived-live")
    shot("changes")


@test
def a_views_query_with_couchdbs_options():
    status, _ = call("PUT", "/voting/_design/stats", {"views": {"answers": {
        "map": "function(doc) { if (doc.question) emit(doc._id, doc.answers.length); }", "reduce": "_sum"}}})
    assert status == 201
    go("#/db/voting/views")
    Select(find("#view-name")).select_by_visible_text("stats/answers")
    click("#run-view")
    # Reduced over the whole view: 2 + 4 answers.
    text_appears("#view-result", "6")
    assert len(driver.find_elements(By.CSS_SELECTOR, "#view-result tbody tr")) == 1
    # Grouped by key: one row a question.
    Select(find("#view-group")).select_by_visible_text("group by key")
    click("#run-view")
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#view-result tbody tr")) == 2)
    text_appears("#view-result", '"tabs-or-spaces"')
    # The rows themselves with their documents, for one key.
    click("#view-reduce")
    click("#view-include_docs")
    find("#view-key").send_keys('"best-season"')
    click("#run-view")
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#view-result tbody tr")) == 1)
    text_appears("#view-result", "Autumn")
    assert "best-season" in find("#view-result a").text
    shot("view-rows")
    # The query is in the address: a bookmark opens the same rows.
    bookmarked = driver.current_url
    go("")
    driver.get(bookmarked)
    text_appears("#view-result", "Autumn")
    # A key that is not JSON is refused in the page.
    key = find("#view-key")
    key.clear()
    key.send_keys("best-season", Keys.ENTER)
    text_appears("#view-result .error", "not JSON")


@test
def attachments_are_uploaded_opened_and_deleted():
    path = os.path.join(ARTIFACTS, "note for the doc.txt")
    with open(path, "w") as f:
        f.write("hello from the browser\n")
    go("#/db/voting/doc/tabs-or-spaces")
    text_appears("main", "No attachments.")
    find("#att-file").send_keys(path)
    click("#att-upload")
    link = wait.until(lambda d: d.find_element(By.XPATH, "//a[text()='note for the doc.txt']"))
    body = driver.execute_async_script("fetch(arguments[0]).then(r => r.text()).then(arguments[1])", link.get_attribute("href"))
    assert body == "hello from the browser\n", body
    assert call("GET", "/voting/tabs-or-spaces")[1]["_attachments"]["note for the doc.txt"]["length"] == 23
    shot("attachment")
    row = link.find_element(By.XPATH, "ancestor::tr")
    row.find_element(By.CSS_SELECTOR, "button.danger").click()
    driver.switch_to.alert.accept()
    wait.until(lambda d: "_attachments" not in call("GET", "/voting/tabs-or-spaces")[1])
    text_appears("main", "No attachments.")


@test
def security_and_a_replication_with_its_progress():
    go("#/db/voting/security")
    find("#security")
    shot("security")
    go("#/replication")
    find("#rep-source").send_keys("voting")
    find("#rep-target").send_keys("voting-copy")
    click("#rep-start")
    text_appears("#rep-jobs", "completed")
    shot("replication")
    status, info = call("GET", "/voting-copy")
    assert status == 200 and info["doc_count"] >= 5, info


@test
def a_toast_leaves_with_its_page():
    go("#/db/voting/security")
    find("#security")
    find("details summary").click()
    click("#save-security")
    wait.until(lambda d: "show" in d.find_element(By.ID, "toast").get_attribute("class"))
    driver.execute_script("location.hash = '#/'")  # in the page: no reload
    find("#create-db")
    assert "show" not in find("#toast").get_attribute("class"), "the security page's toast is shown on the databases page"


@test
def security_names_and_roles_are_added_and_removed():
    go("#/db/voting/security")
    find("#add-members-names").send_keys("ana", Keys.ENTER)
    wait.until(lambda d: call("GET", "/voting/_security")[1]["members"]["names"] == ["ana"])
    text_appears("#members-names", "ana")
    roles = call("GET", "/voting/_security")[1]["admins"]["roles"]
    find("#add-admins-roles").send_keys("editors", Keys.ENTER)
    wait.until(lambda d: call("GET", "/voting/_security")[1]["admins"]["roles"] == roles + ["editors"])
    assert not [t for t in main_text_nodes() if t.strip()] and "null" not in find("main").text.split()
    shot("security-lists")
    find("#members-names button").click()
    wait.until(lambda d: call("GET", "/voting/_security")[1]["members"]["names"] == [])
    wait.until(lambda d: [li for li in d.find_elements(By.CSS_SELECTOR, "#admins-roles li") if "editors" in li.text])[0] \
        .find_element(By.TAG_NAME, "button").click()
    wait.until(lambda d: call("GET", "/voting/_security")[1]["admins"]["roles"] == roles)


@test
def a_database_open_to_everyone_is_marked():
    call("PUT", "/wide-open", None)
    call("PUT", "/wide-open/_security", {"admins": {"names": [], "roles": []}, "members": {"names": [], "roles": []}})
    go("")
    row = wait.until(lambda d: [r for r in d.find_elements(By.CSS_SELECTOR, "tbody tr") if r.text.startswith("wide-open")])[0]
    assert row.find_elements(By.CSS_SELECTOR, ".open-mark"), "the open database is not marked"
    voting = [r for r in driver.find_elements(By.CSS_SELECTOR, "tbody tr") if r.text.startswith("voting ") or r.text.startswith("voting\n")]
    assert voting and not voting[0].find_elements(By.CSS_SELECTOR, ".open-mark"), "a closed database is marked open"
    go("#/db/wide-open/security")
    text_appears("#open-mark", "Open to everyone")
    call("DELETE", "/wide-open")


@test
def the_replication_form_forgets_the_password():
    go("#/replication")
    with_password = BASE.replace("http://", "http://admin:secret@", 1) + "/voting"
    find("#rep-source").send_keys(with_password)
    find("#rep-target").send_keys("voting-by-url")
    click("#rep-start")
    text_appears("#rep-jobs", "voting-by-url")
    assert "secret" not in find("#rep-source").get_attribute("value"), "the password stays in the form"
    assert "secret" not in find("main").text, "the password is shown"
    shot("replication-by-url")


@test
def replication_credentials_have_their_own_fields():
    go("#/replication")
    find("#rep-source").send_keys(BASE + "/voting")
    find("#rep-source-user").send_keys("admin")
    find("#rep-source-password").send_keys("secret")
    find("#rep-target").send_keys("voting-by-fields")
    click("#rep-start")
    text_appears("#rep-jobs", "voting-by-fields")
    wait.until(lambda d: call("GET", "/voting-by-fields")[0] == 200
               and call("GET", "/voting-by-fields")[1]["doc_count"] == call("GET", "/voting")[1]["doc_count"])
    for field in ["#rep-source", "#rep-source-user", "#rep-source-password"]:
        assert find(field).get_attribute("value") == "", field + " keeps what was typed"
    assert "secret" not in find("main").text


@test
def an_unreachable_source_creates_no_target():
    go("#/replication")
    find("#rep-source").send_keys("http://127.0.0.1:9/nowhere")
    find("#rep-target").send_keys("never-made")
    assert find("#rep-create").is_selected()
    click("#rep-start")
    text_appears("#rep-jobs", "never-made")

    def tried(_):
        docs = call("GET", "/_scheduler/docs")[1]["docs"]
        return any(d["target"] == "never-made" and d["state"] in ("crashing", "failed") for d in docs)
    wait.until(tried)
    shot("replication-unreachable")
    assert call("GET", "/never-made")[0] == 404, "the target was created though the source could not be reached"
    for doc in call("GET", "/_scheduler/docs")[1]["docs"]:
        if doc["target"] == "never-made":
            rev = call("GET", "/_replicator/" + doc["doc_id"])[1]["_rev"]
            call("DELETE", f"/_replicator/{doc['doc_id']}?rev={rev}")


@test
def underscores_stay_visible_in_links():
    go("")
    link = find("a[href='#/db/_replicator']")
    offset = driver.execute_script("return getComputedStyle(arguments[0]).textUnderlineOffset", link)
    assert offset.endswith("px") and float(offset[:-2]) >= 3, f"the underline covers underscores (offset {offset})"


@test
def deleting_a_document_and_a_database():
    go("#/db/voting/doc/arrived-live")
    click("#delete-doc")
    driver.switch_to.alert.accept()
    wait.until(lambda d: call("GET", "/voting/arrived-live")[0] == 404)
    go("")
    row = wait.until(lambda d: [r for r in d.find_elements(By.CSS_SELECTOR, "tbody tr") if r.text.startswith("voting-copy")])
    row[0].find_element(By.TAG_NAME, "button").click()
    driver.switch_to.alert.accept()
    wait.until(lambda d: call("GET", "/voting-copy")[0] == 404)


@test
def browsing_an_imported_sqlite_file():
    go("#/sqlite")
    click(f"a[href='#/sqlite/{SQLITE_FILE}']")
    text_appears("h1", SQLITE_FILE)
    shot("sqlite-file")
    click("a[href$='/books']")
    text_appears("#row-count", "of 10001")
    # Sort by year, newest first: two clicks on the heading.
    click("button.sort[data-column='original_publication_year']")
    text_appears("button.sort[data-column='original_publication_year']", "▲")
    click("button.sort[data-column='original_publication_year']")
    text_appears("button.sort[data-column='original_publication_year']", "▼")
    first = find("tbody tr").text
    assert "2017" in first, first
    shot("sqlite-sorted")
    # Filter by a column's value.
    Select(find("#filter-column")).select_by_visible_text("authors")
    find("#filter-value").send_keys("Suzanne Collins", Keys.ENTER)
    # The filtered page, not the one before it (whose rows go stale).
    wait.until(lambda d: "of 10001" not in d.find_element(By.ID, "row-count").text)
    rows = driver.find_elements(By.CSS_SELECTOR, "tbody tr")
    assert rows and all("Suzanne Collins" in r.text for r in rows), [r.text for r in rows]
    shot("sqlite-filtered")
    # The export link carries the filter, through the export code.
    href = find("#export-csv").get_attribute("href")
    csv = driver.execute_async_script("fetch(arguments[0]).then(r => r.text()).then(arguments[1])", href)
    lines = csv.strip().split("\n")
    assert lines[0].startswith("book_id,") and len(lines) == len(rows) + 1, lines[:3]
    # A cell holding markup shows as text.
    Select(find("#filter-column")).select_by_visible_text("book_id")
    value = find("#filter-value")
    value.clear()
    value.send_keys("10001", Keys.ENTER)
    text_appears("tbody", "window.__xss=1")
    assert not driver.find_elements(By.CSS_SELECTOR, "tbody img, tbody script")
    no_xss()
    shot("sqlite-markup-cell")


@test
def any_column_filter_keeps_the_value():
    go(f"#/sqlite/{SQLITE_FILE}/books")
    text_appears("#row-count", "of 10001")
    Select(find("#filter-column")).select_by_visible_text("(any column)")
    find("#filter-value").send_keys("Suzanne Collins", Keys.ENTER)
    wait.until(lambda d: "of 10001" not in d.find_element(By.ID, "row-count").text)
    rows = driver.find_elements(By.CSS_SELECTOR, "tbody tr")
    assert rows and all("Suzanne Collins" in r.text for r in rows), [r.text for r in rows]
    assert find("#filter-value").get_attribute("value") == "Suzanne Collins"
    shot("sqlite-any-column")


@test
def the_next_page_starts_at_the_top():
    go(f"#/sqlite/{SQLITE_FILE}/books")
    text_appears("#row-count", "Rows 1–50")
    driver.execute_script("window.scrollTo(0, document.body.scrollHeight)")
    click("#next-page")
    text_appears("#row-count", "Rows 51–100")
    assert driver.execute_script("return window.scrollY") == 0, "page 2 opens scrolled to its bottom"


@test
def filters_combine_as_datasettes():
    go(f"#/sqlite/{SQLITE_FILE}/books")
    text_appears("#row-count", "of 10001")
    for col, op, val in [("authors", "contains", "King"), ("original_publication_year", ">", "2000")]:
        click("#add-filter")
        row = driver.find_elements(By.CSS_SELECTOR, ".filter-row")[-1]
        Select(row.find_element(By.CSS_SELECTOR, ".filter-col")).select_by_visible_text(col)
        Select(row.find_element(By.CSS_SELECTOR, ".filter-op")).select_by_value(op)
        row.find_element(By.CSS_SELECTOR, ".filter-val").send_keys(val)
    click("#filter")
    wait.until(lambda d: "of 10001" not in d.find_element(By.ID, "row-count").text)
    years = driver.execute_script("""
        const headings = [...document.querySelectorAll('thead th')].map(th => th.textContent.trim());
        const index = headings.findIndex(h => h.startsWith('original_publication_year'));
        return [...document.querySelectorAll('tbody tr')].map(tr => tr.children[index].textContent);""")
    rows = driver.find_elements(By.CSS_SELECTOR, "tbody tr")
    assert rows and all("King" in r.text for r in rows), [r.text for r in rows][:3]
    assert years and all(float(y) > 2000 for y in years), years
    # The filters are in the address and in the export.
    assert "filters=" in driver.current_url
    href = find("#export-csv").get_attribute("href")
    csv = driver.execute_async_script("fetch(arguments[0]).then(r => r.text()).then(arguments[1])", href)
    assert len(csv.strip().split("\n")) == len(rows) + 1 or len(rows) == 50
    # is null needs no value.
    Select(driver.find_elements(By.CSS_SELECTOR, ".filter-row .filter-op")[1]).select_by_value("null")
    click("#filter")
    text_appears("#row-count", "No rows.")
    shot("sqlite-filters")


@test
def a_wide_table_stays_readable():
    go(f"#/sqlite/{SQLITE_FILE}/books")
    find("tbody tr")
    first = find("tbody td")
    assert driver.execute_script("return getComputedStyle(arguments[0]).position", first) == "sticky", "the first column scrolls away"
    # Numbers' headings are aligned with them.
    heading = find("thead th:nth-child(1)")
    assert driver.execute_script("return getComputedStyle(arguments[0]).textAlign", heading) == "right", "book_id's heading is not aligned"
    # The sorted column, the table's last, is brought into view.
    last = driver.find_elements(By.CSS_SELECTOR, "button.sort")[-1]
    column = last.get_attribute("data-column")
    last.click()
    text_appears(f"button.sort[data-column='{column}']", "▲")
    inside = driver.execute_script("""
        const button = document.querySelector(`button.sort[data-column="${arguments[0]}"]`);
        const box = button.closest('.scroll').getBoundingClientRect(), r = button.getBoundingClientRect();
        return r.left >= box.left - 1 && r.right <= box.right + 1;""", column)
    assert inside, "the sorted column is out of view"
    # A file's column lists break between names, not inside them.
    go(f"#/sqlite/{SQLITE_FILE}")
    cell = find("td.columns")
    assert driver.execute_script("return getComputedStyle(arguments[0]).wordBreak", cell) != "break-all"


@test
def long_values_links_and_a_shareable_query():
    go(f"#/sqlite/{SQLITE_FILE}")
    long_sql = "SELECT printf('%.300c', 'x') AS long, 'https://example.com/a_b' AS link, 7 AS n"
    paste("#sql", long_sql)
    click("#run-sql")
    cell = find("#sql-result td.long")
    assert len(cell.text) < 150 and "…" in cell.text, cell.text
    cell.find_element(By.CSS_SELECTOR, "button.more").click()
    wait.until(lambda d: "x" * 300 in d.find_element(By.CSS_SELECTOR, "#sql-result td.long").text)
    link = find("#sql-result a.url")
    assert link.get_attribute("href") == "https://example.com/a_b" and "noopener" in link.get_attribute("rel")
    assert "num" in find("#sql-result thead th:nth-child(3)").get_attribute("class")
    # The query is in the address: opening it again runs it (the file is read-only).
    shared = driver.current_url
    assert "sql=" in shared
    go("")
    driver.get(shared)
    find("#sql-result td.long")
    assert find("#sql").get_attribute("value") == long_sql


@test
def the_sql_box_runs_queries_and_shows_sqlites_errors():
    go(f"#/sqlite/{SQLITE_FILE}")
    paste("#sql", "SELECT authors, count(*) AS books FROM books GROUP BY authors ORDER BY books DESC LIMIT 5")
    click("#run-sql")
    text_appears("#sql-result", "Stephen King")
    shot("sql-result")
    paste("#sql", "SELEC nothing")
    find("#sql").send_keys(Keys.CONTROL, Keys.ENTER)
    text_appears("#sql-result .error", 'near "SELEC": syntax error')
    paste("#sql", "DELETE FROM books")
    click("#run-sql")
    text_appears("#sql-result .error", "read-only")
    shot("sql-errors")
    assert call("POST", f"/_sqlite/{SQLITE_FILE}/_query", {"sql": "SELECT count(*) FROM books"})[1]["rows"] == [[10001]]


@test
def readable_on_a_phone():
    driver.set_window_size(390, 844)
    go("#/db/voting/doc/tabs-or-spaces")
    find("#source")
    width = driver.execute_script("return document.documentElement.scrollWidth")
    assert width <= 400, f"the page is {width}px wide on a 390px screen"
    shot("phone-document")
    go(f"#/sqlite/{SQLITE_FILE}/books")
    find("tbody tr")
    shot("phone-table")
    # Each page fits the screen; what is wider scrolls inside its own box.
    for route, ready in [(f"#/sqlite/{SQLITE_FILE}/books", "tbody tr"), ("#/replication", "#rep-jobs table"),
                         (f"#/sqlite/{SQLITE_FILE}", "#sql"), ("#/db/voting", "tbody tr"), ("#/db/voting/views", "#view-name")]:
        go(route)
        find(ready)
        width = driver.execute_script("return document.documentElement.scrollWidth")
        assert width <= 400, f"{route} is {width}px wide on a 390px screen"
    shot("phone-replication")
    # The tabs and the top bar keep to one line each.
    go("#/db/voting")
    find(".tabs a")
    # On one line: their vertical middles differ by less than a line's height.
    spreads = driver.execute_script("""
        const spread = (selector) => {
            const middles = [...document.querySelectorAll(selector)].map(e => { const r = e.getBoundingClientRect(); return r.top + r.height / 2; });
            return Math.max(...middles) - Math.min(...middles);
        };
        return [spread('.tabs a'), spread('.top > *')];""")
    assert spreads[0] < 10 and spreads[1] < 10, f"not on one line: tabs' middles {spreads[0]}px apart, the top bar's {spreads[1]}px"
    shot("phone-tabs")


driver.quit()
if failures:
    print(f"browser tests FAILED: {', '.join(failures)}; {shots} screenshots in {ARTIFACTS}")
    sys.exit(1)
print(f"browser tests passed; {shots} screenshots in {ARTIFACTS}")
