#!/usr/bin/env python3
"""`strata shell` at a real terminal: tmux runs it in a pane, send-keys types,
capture-pane reads the screen. Each step waits for what the screen must show,
with a generous limit, never a fixed sleep.

Usage: shell_test.py STRATA_BINARY ARTIFACTS_FOLDER

The screens at the end of each test are kept in ARTIFACTS_FOLDER.
"""
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import traceback

STRATA = os.path.abspath(sys.argv[1])
ARTIFACTS = sys.argv[2]
# The tmux servers' settings: a pane stays after its process ends, so that
# its exit status can be read.
CONFIGURATION = os.path.join(tempfile.gettempdir(), f"strata-shell-test-{os.getpid()}.tmux.conf")
LIMIT = 60.0  # seconds a screen may take to show what it must, on a loaded machine
PROMPT = "strata> "
# Lines are read with their trailing spaces trimmed: an empty prompt reads
# "strata>", an empty continuation prompt "   ...>".
EMPTY_PROMPT = "strata>"
CONTINUATION = "   ...>"


class Pane:
    """One `strata` process in a tmux pane of its own server."""

    count = 0

    def __init__(self, command, env, width=100, height=40):
        Pane.count += 1
        self.socket = f"strata-shell-test-{os.getpid()}-{Pane.count}"
        self.target = "shell"
        environment = " ".join(f"{key}={shlex.quote(value)}" for key, value in env.items())
        # The exit status is printed after the process: tmux's own
        # pane_dead_status is not always set when the pane is seen dead.
        script = f"env {environment} {command}; echo \"[exit status $?]\""
        self.tmux("-f", CONFIGURATION, "new-session", "-d", "-s", self.target, "-x", str(width), "-y", str(height),
                  f"sh -c {shlex.quote(script)}")

    def tmux(self, *arguments):
        result = subprocess.run(["tmux", "-L", self.socket, *arguments], capture_output=True, text=True)
        if result.returncode != 0:
            raise AssertionError(f"tmux {' '.join(arguments)}: {result.stderr.strip()}")
        return result.stdout

    def keys(self, *keys):
        """Presses keys by tmux's names: Enter, Left, C-c, …"""
        self.tmux("send-keys", "-t", self.target, *keys)

    def type(self, text):
        """Types text literally (a final ";" escaped from tmux's parser)."""
        if text.endswith(";"):
            text = text[:-1] + "\\;"
        self.tmux("send-keys", "-t", self.target, "-l", text)

    def enter(self, text):
        self.type(text)
        self.keys("Enter")

    def screen(self):
        """The pane's text from the start of its history, wrapped lines
        joined, trailing spaces trimmed."""
        text = self.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", self.target)
        return "\n".join(line.rstrip() for line in text.split("\n")).rstrip("\n")

    def lines(self):
        return self.screen().split("\n")

    def wait_for(self, check, what):
        """Waits until check(screen) is true; fails showing the screen."""
        deadline = time.monotonic() + LIMIT
        while True:
            screen = self.screen()
            if check(screen):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"waited {LIMIT:.0f} s for {what}; the screen:\n{screen}")
            time.sleep(0.05)

    def wait_for_text(self, text, count=1):
        return self.wait_for(lambda screen: screen.count(text) >= count, f"{text!r} ×{count}")

    def wait_for_prompt(self):
        """Waits for an empty prompt on the last line."""
        return self.wait_for_line(EMPTY_PROMPT)

    def wait_for_line(self, text):
        """Waits until the last line (the one being edited) reads `text`."""
        return self.wait_for(lambda screen: screen.split("\n")[-1] == text, f"the last line to read {text!r}")

    def run(self, text):
        """Enters a line and waits for the next prompt; returns the screen."""
        before = len(self.lines())
        self.enter(text)
        # The screen is read from the start of its history: it only grows.
        return self.wait_for(lambda screen: len(screen.split("\n")) > before and screen.split("\n")[-1] == EMPTY_PROMPT,
                             f"the prompt after {text!r}")

    def output_of(self, text):
        """Runs a line and returns the lines it printed."""
        screen = self.run(text)
        lines = screen.split("\n")
        start = max(index for index, line in enumerate(lines) if line.endswith(text) and line.startswith(PROMPT))
        return lines[start + 1:-1]

    def edited_line(self):
        """The text on the prompt line being edited (the last line)."""
        return self.lines()[-1]

    def exit_status(self):
        """The process's exit status once it ended, else None."""
        found = re.search(r"^\[exit status (\d+)\]$", self.screen(), re.MULTILINE)
        return int(found.group(1)) if found else None

    def wait_for_exit(self):
        deadline = time.monotonic() + LIMIT
        while (status := self.exit_status()) is None:
            if time.monotonic() > deadline:
                raise AssertionError(f"the shell did not exit; the screen:\n{self.screen()}")
            time.sleep(0.05)
        return status

    def close(self, name):
        try:
            with open(os.path.join(ARTIFACTS, f"{name}.txt"), "w") as file:
                file.write(self.screen())
        finally:
            subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


def child_processes(parent):
    """The processes whose parent is `parent`, from /proc."""
    children = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as file:
                    # pid (command) state ppid …: the command may hold spaces.
                    fields = file.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == parent:
                children.append(int(name))
    return children


def expect(condition, message):
    if not condition:
        raise AssertionError(message)


class Tests:
    def __init__(self, folder):
        self.folder = folder
        self.database = os.path.join(folder, "notes.sqlite")
        self.history = os.path.join(folder, "history")
        self.env = {"STRATA_HISTORY": self.history, "LANG": "C.UTF-8", "TERM": "xterm-256color"}

    def shell(self, arguments=None):
        arguments = arguments if arguments is not None else [self.database]
        return Pane(" ".join(shlex.quote(part) for part in [STRATA, *arguments]), self.env)

    def test_statements_over_lines_and_errors_that_do_not_end_the_shell(self, pane):
        pane.wait_for_text("Enter .help for the dot commands")
        pane.wait_for_prompt()
        pane.enter("CREATE TABLE notes(")
        pane.wait_for_text(CONTINUATION)
        pane.run("  id INTEGER PRIMARY KEY, title TEXT);")
        pane.run("INSERT INTO notes(title) VALUES ('first'), ('second');")
        expect(pane.output_of("SELECT id, title FROM notes ORDER BY id;") ==
               ["id  title", "--  ------", "1   first", "2   second"], pane.screen())
        printed = pane.output_of("SELECT * FROM nowhere;")
        expect(printed == ["Error: SQLite error 1 (SQL logic error): no such table: nowhere - while executing: SELECT * FROM nowhere;"],
               printed)
        expect(pane.output_of(".frobnicate") == ['Error: unknown command ".frobnicate": enter ".help" for the list'], pane.screen())
        expect(pane.output_of("SELECT count(*) AS n FROM notes;") == ["n", "-", "2"], pane.screen())
        expect(pane.exit_status() is None, "the shell ended after an error")

    def test_line_editing_keys(self, pane):
        pane.wait_for_prompt()
        # Home, End and Left to insert in the middle.
        pane.type("ELECT 'wrld' AS greeting")
        pane.keys("Home")
        pane.type("S")
        pane.keys("End")
        pane.keys(*(["Left"] * 16))
        pane.type("o")
        pane.wait_for_line("strata> SELECT 'world' AS greeting")
        pane.keys("C-e")
        expect(pane.output_of(";") == ["greeting", "--------", "world"], pane.screen())
        # Ctrl-W cuts the word before the cursor; Backspace a character.
        pane.type("SELECT 1 + garbage")
        pane.keys("C-w")
        pane.type("2x")
        pane.keys("BSpace")
        expect(pane.output_of(";")[-1] == "3", pane.screen())
        # Ctrl-U cuts the whole line before the cursor.
        pane.type("DROP TABLE notes")
        pane.keys("C-u")
        expect(pane.output_of("SELECT 'kept' AS t;")[-1] == "kept", pane.screen())
        # Ctrl-A, then Ctrl-F/Right, Delete and Ctrl-K.
        pane.type("SELECT x8 AS n; junk")
        pane.keys("C-a", "C-f", "C-f", "C-f", "C-f", "C-f", "C-f", "Right", "DC")
        pane.keys("Right", "Right", "Right", "Right", "Right", "Right", "Right", "C-k")
        pane.wait_for_line("strata> SELECT 8 AS n;")
        expect(pane.output_of("")[-1] == "8", pane.screen())
        # Word moves: Alt-B back over a word, Ctrl-T swaps two characters.
        pane.type("SELECT 'ab' AS tset")
        pane.keys("M-b", "Right", "Right", "C-t")
        pane.wait_for_line("strata> SELECT 'ab' AS test")
        pane.keys("End")
        expect(pane.output_of(";")[0] == "test", pane.screen())
        # Text beyond ASCII is edited by character.
        pane.type("SELECT 'hllo wörld' AS w")
        pane.keys(*(["Left"] * 15))
        pane.type("é")
        pane.keys("End")
        expect(pane.output_of(";")[-1] == "héllo wörld", pane.screen())

    def test_history_up_down_and_across_sessions(self, pane):
        pane.wait_for_prompt()
        pane.run("SELECT 'one' AS h;")
        pane.run("SELECT 'two' AS h;")
        pane.keys("Up", "Up")
        pane.wait_for_line("strata> SELECT 'one' AS h;")
        pane.keys("Down")
        pane.wait_for_line("strata> SELECT 'two' AS h;")
        pane.keys("Down")
        pane.wait_for_line("strata>")
        pane.keys("C-p")
        expect(pane.output_of("")[-1] == "two", pane.screen())
        pane.enter(".quit")
        expect(pane.wait_for_exit() == 0, "exit status")
        # A new session finds the lines typed in the last one.
        again = self.shell()
        try:
            again.wait_for_prompt()
            again.keys("Up")
            again.wait_for_line("strata> .quit")
            again.keys("Up")
            again.wait_for_line("strata> SELECT 'two' AS h;")
            again.keys("C-d")
            again.keys("C-u", "C-d")
            expect(again.wait_for_exit() == 0, "Ctrl-D on an empty line ends the shell")
        finally:
            again.close("history-second-session")

    def test_ctrl_c_drops_a_line_and_stops_a_running_statement(self, pane):
        pane.wait_for_prompt()
        # At the continuation prompt, Ctrl-C drops the unfinished statement.
        pane.enter("SELECT 'dropped'")
        pane.wait_for_text(CONTINUATION)
        pane.keys("C-c")
        pane.wait_for_line("strata>")
        expect(pane.output_of("SELECT 'after' AS a;") == ["a", "-----", "after"], pane.screen())
        # A statement that would never end: Ctrl-C stops it and the shell stays.
        runaway = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c;"
        before = len(pane.lines())
        pane.enter(runaway)
        # A Ctrl-C that lands before the statement starts is read as a key at
        # the next prompt; press again until the statement reports it.
        deadline = time.monotonic() + LIMIT
        while "Error: interrupted" not in pane.screen():
            expect(time.monotonic() < deadline, f"Ctrl-C did not stop the statement:\n{pane.screen()}")
            pane.keys("C-c")
            end = time.monotonic() + 1
            while "Error: interrupted" not in pane.screen() and time.monotonic() < end:
                time.sleep(0.05)
        pane.wait_for(lambda screen: len(screen.split("\n")) > before + 1 and screen.split("\n")[-1] == EMPTY_PROMPT,
                      "the prompt after the interruption")
        expect(pane.output_of("SELECT 'still here' AS s;")[-1] == "still here", pane.screen())
        expect(pane.exit_status() is None, "the shell ended on Ctrl-C")

    def test_modes_dot_commands_import_export_and_timer(self, pane):
        pane.wait_for_prompt()
        csv = os.path.join(self.folder, "people.csv")
        with open(csv, "w") as file:
            file.write("name,age\nann,30\nbob,41\n")
        expect(pane.output_of(f".import {csv}") == ["imported 2 rows into people"], pane.screen())
        expect(pane.output_of(".tables") == ["notes   people"], pane.screen())
        expect(pane.output_of(".schema people")[0].startswith('CREATE TABLE "people"'), pane.screen())
        pane.run(".mode line")
        expect(pane.output_of("SELECT name, age FROM people ORDER BY age;") ==
               ["name = ann", " age = 30", "", "name = bob", " age = 41"], pane.screen())
        pane.run(".mode csv")
        pane.run(".headers off")
        expect(pane.output_of("SELECT name, age FROM people ORDER BY age;") == ["ann,30", "bob,41"], pane.screen())
        exported = os.path.join(self.folder, "older.json")
        expect(pane.output_of(f".export {exported} SELECT name FROM people WHERE age > 40") ==
               [f"exported 1 rows to {exported}"], pane.screen())
        with open(exported) as file:
            expect(file.read() == '[\n{"name":"bob"}\n]\n', "the exported file")
        pane.run(".timer on")
        printed = pane.output_of("SELECT 1;")
        expect(len(printed) == 2 and printed[1].startswith("Run Time: real "), printed)
        pane.run(".timer off")
        pane.run(".mode table")
        pane.run(".headers on")
        shown = pane.output_of(".show")
        expect("    mode: table" in shown and f"database: {self.database}" in shown, shown)

    def test_a_long_line_scrolls_sideways(self, pane):
        pane.wait_for_prompt()
        text = "SELECT '" + "abcdefghij" * 15 + "' AS long;"
        pane.type(text)
        # The line is 100 columns wide: the end of the text shows, not its start.
        pane.wait_for(lambda screen: screen.split("\n")[-1].endswith("hij' AS long;"), "the end of the long line")
        last = pane.edited_line()
        expect(len(last) < 100 and not last.startswith(PROMPT + "SELECT"), last)
        pane.keys("C-a")
        pane.wait_for(lambda screen: screen.split("\n")[-1].startswith(PROMPT + "SELECT 'abcdefghij"), "the start of the long line")
        expect(len(pane.edited_line()) < 100, pane.edited_line())
        printed = pane.output_of("")
        expect(printed[-1] == "abcdefghij" * 15, printed)

    def test_sigterm_at_the_prompt_gives_the_terminal_back(self, _pane):
        # Killed while the line editor holds the terminal raw, the shell puts
        # its settings back: the terminal echoes and reads lines again.
        command = (f"{shlex.quote(STRATA)} {shlex.quote(self.database)}; echo \"[strata status $?]\"; "
                   "stty -a | tr ' ;' '\\n\\n' | grep -x -e -isig -e isig -e -icanon -e icanon -e -echo -e echo | tr '\\n' ' '; echo")
        pane = Pane(command, self.env)
        try:
            pane.wait_for_prompt()
            shell_pid = pane.tmux("display-message", "-p", "-t", pane.target, "#{pane_pid}").strip()
            children = child_processes(int(shell_pid))
            expect(len(children) == 1, f"the shell's process: {children}")
            os.kill(children[0], signal.SIGTERM)
            pane.wait_for_text("[exit status")
            screen = pane.screen()
            expect("[strata status 143]" in screen, screen)
            expect("isig icanon echo" in screen, screen)
        finally:
            pane.close("sigterm")

    def test_piped_input_at_a_terminal(self, _pane):
        # Standard input from a pipe, standard output the terminal: no
        # prompt, no editing, the rows printed, the exit status of a script.
        script = os.path.join(self.folder, "script.sql")
        with open(script, "w") as file:
            file.write("SELECT 'piped' AS p;\nSELECT nope;\n")
        pane = Pane(f"sh -c {shlex.quote(f'cat {shlex.quote(script)} | {shlex.quote(STRATA)} {shlex.quote(self.database)}')}", self.env)
        try:
            status = pane.wait_for_exit()
            screen = pane.screen()
            expect(status == 1, f"exit status {status}")
            expect(PROMPT not in screen and "piped" in screen and "Error: near line 2:" in screen, screen)
        finally:
            pane.close("piped-input")


def main():
    os.makedirs(ARTIFACTS, exist_ok=True)
    with open(CONFIGURATION, "w") as file:
        file.write("set -g remain-on-exit on\n")
    failures = []
    with tempfile.TemporaryDirectory() as folder:
        tests = Tests(folder)
        names = [name for name in dir(Tests) if name.startswith("test_")]
        # In the order written: later tests use the tables earlier ones made.
        names.sort(key=lambda name: getattr(Tests, name).__code__.co_firstlineno)
        for name in names:
            pane = tests.shell()
            try:
                getattr(tests, name)(pane)
                print(f"ok  {name}")
            except Exception:
                failures.append(name)
                print(f"FAIL {name}\n{traceback.format_exc()}")
            finally:
                pane.close(name)
    if failures:
        print(f"{len(failures)} of {len(names)} shell tests failed: {', '.join(failures)}")
        sys.exit(1)
    print(f"all {len(names)} shell tests passed")


if __name__ == "__main__":
    main()
