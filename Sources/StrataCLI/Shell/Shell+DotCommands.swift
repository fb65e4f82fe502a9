import Foundation
import Strata

/// A dot command's line: its name and its words, split at spaces; a word in
/// single or double quotes may hold spaces.
struct DotCommandLine {
    let name: String
    let arguments: [String]
    /// The text after each argument, as typed: `.export FILE SELECT …`
    /// takes the query whole.
    private let remainders: [Substring]

    init(_ line: String) {
        var words: [String] = []
        var remainders: [Substring] = []
        var rest = Substring(line.dropFirst())
        while true {
            rest = rest.drop(while: \.isWhitespace)
            guard let first = rest.first else { break }
            var word = ""
            if first == "'" || first == "\"" {
                rest = rest.dropFirst()
                while let character = rest.first, character != first {
                    word.append(character)
                    rest = rest.dropFirst()
                }
                rest = rest.dropFirst()
            } else {
                word = String(rest.prefix { !$0.isWhitespace })
                rest = rest.dropFirst(word.count)
            }
            words.append(word)
            remainders.append(rest.drop(while: \.isWhitespace))
        }
        self.name = words.first ?? ""
        self.arguments = Array(words.dropFirst())
        self.remainders = Array(remainders.dropFirst())
    }

    /// The text typed after argument `index`, spaces trimmed.
    func text(after index: Int) -> String {
        String(remainders[index]).trimmingCharacters(in: .whitespaces)
    }
}

extension Shell {
    /// The dot commands, with their help lines, in `.help`'s order.
    static let dotCommands: [(name: String, usage: String, help: String)] = [
        ("bail", ".bail on|off", "Stop a script at the first error (off)"),
        ("exit", ".exit [CODE]", "Leave the shell with an exit code"),
        ("export", ".export [--FORMAT] FILE TABLE|QUERY", "Write a table or a query to a CSV, TSV, JSON or NDJSON file"),
        ("headers", ".headers on|off", "Name the columns above the rows (on)"),
        ("help", ".help", "Show this list"),
        ("import", ".import [--FORMAT] [--create|--replace] [--text] [--no-header] [--skip-bad-lines] FILE [TABLE]",
         "Load a CSV, TSV, JSON or NDJSON file into a table (by default the file's base name), in one transaction"),
        ("indexes", ".indexes [TABLE]", "List the indexes, or those of the tables matching TABLE"),
        ("mode", ".mode [table|csv|tsv|json|ndjson|line|list]", "Show or set how rows print (table)"),
        ("quit", ".quit", "Leave the shell"),
        ("read", ".read FILE", "Run the SQL and dot commands of a file"),
        ("schema", ".schema [PATTERN]", "Show the CREATE statements, or those of the tables matching PATTERN"),
        ("show", ".show", "Show the current settings"),
        ("tables", ".tables [PATTERN]", "List the tables and views, or those matching PATTERN"),
        ("timer", ".timer on|off", "Print the time each SQL run took (off)"),
    ]

    /// Runs a dot command. Returns false when the session must end.
    func runDotCommand(_ text: String, at line: Int, in source: String?) -> Bool {
        let command = DotCommandLine(text)
        do {
            try runDotCommand(command, at: line, in: source)
            return requestedExit == nil
        } catch {
            report(error, at: line, in: source)
            return !bails
        }
    }

    private func runDotCommand(_ command: DotCommandLine, at line: Int, in source: String?) throws {
        let arguments = command.arguments
        // A command may be shortened, as in sqlite3 (`.tab`, `.h on`), when
        // only one command starts so.
        let matches = Self.dotCommands.filter { $0.name.hasPrefix(command.name) }
        let name = matches.first(where: { $0.name == command.name })?.name ?? (matches.count == 1 ? matches[0].name : command.name)
        if matches.count > 1 && !matches.contains(where: { $0.name == command.name }) {
            throw ShellError("\".\(command.name)\" could be \(matches.map { "." + $0.name }.joined(separator: " or "))")
        }
        func expectArguments(_ range: ClosedRange<Int>) throws {
            guard range.contains(arguments.count) else {
                let usage = Self.dotCommands.first { $0.name == name }?.usage ?? "." + name
                throw ShellError("usage: \(usage)")
            }
        }
        switch name {
        case "bail":
            try expectArguments(1...1)
            bails = try Self.flag(arguments[0])
        case "exit", "quit":
            try expectArguments(0...(name == "exit" ? 1 : 0))
            guard let code = arguments.first.map({ Int32($0) }) ?? 0 else { throw ShellError("usage: .exit [CODE]") }
            exit(code)
        case "export":
            try export(command)
        case "headers":
            try expectArguments(1...1)
            output.showsHeaders = try Self.flag(arguments[0])
        case "help":
            let width = Self.dotCommands.map(\.usage.count).filter { $0 < 40 }.max() ?? 0
            Terminal.write(Self.dotCommands.map { command in
                let padding = command.usage.count < width ? String(repeating: " ", count: width - command.usage.count) : "\n" + String(repeating: " ", count: width)
                return command.usage + padding + "  " + command.help + "\n"
            }.joined())
        case "import":
            try importFile(command)
        case "indexes":
            try expectArguments(0...1)
            let names = try interruptibly {
                try String.fetchAll(db, sql: """
                    SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name LIKE ? ORDER BY name
                    """, arguments: [arguments.first ?? "%"])
            }
            Terminal.write(Self.columns(names))
        case "mode":
            try expectArguments(0...1)
            guard let name = arguments.first else {
                Terminal.write("current output mode: \(output.mode.rawValue)\n")
                return
            }
            guard let mode = ShellOutput.Mode(name: name) else {
                throw ShellError("unknown mode \"\(name)\": use one of \(ShellOutput.Mode.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            output.mode = mode
        case "read":
            try expectArguments(1...1)
            if !read(file: arguments[0], at: line, in: source) && requestedExit == nil {
                // An error in the file with `.bail on` ends the session too.
                exit(1)
            }
        case "schema":
            try expectArguments(0...1)
            let statements = try interruptibly {
                try String.fetchAll(db, sql: """
                    SELECT sql FROM sqlite_schema
                    WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND tbl_name LIKE ?
                    ORDER BY tbl_name = name DESC, rowid
                    """, arguments: [arguments.first ?? "%"])
            }
            Terminal.write(statements.map { $0 + ";\n" }.joined())
        case "show":
            try expectArguments(0...0)
            Terminal.write("""
                    bail: \(bails ? "on" : "off")
                 headers: \(output.showsHeaders ? "on" : "off")
                    mode: \(output.mode.rawValue)
                   timer: \(showsTimer ? "on" : "off")
                database: \(path)

                """)
        case "tables":
            try expectArguments(0...1)
            let names = try interruptibly {
                try String.fetchAll(db, sql: """
                    SELECT name FROM sqlite_schema
                    WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name LIKE ?
                    ORDER BY name
                    """, arguments: [arguments.first ?? "%"])
            }
            Terminal.write(Self.columns(names))
        case "timer":
            try expectArguments(1...1)
            showsTimer = try Self.flag(arguments[0])
        default:
            throw ShellError("unknown command \".\(command.name)\": enter \".help\" for the list")
        }
    }

    /// `.import [--FORMAT] [--create|--replace] [--text] [--no-header]
    /// [--skip-bad-lines] FILE [TABLE]`, through Strata's import.
    private func importFile(_ command: DotCommandLine) throws {
        var options = ImportOptions()
        var positional: [String] = []
        for argument in command.arguments {
            switch argument {
            case "--csv", "--tsv", "--json", "--ndjson": options.format = DataFormat(rawValue: String(argument.dropFirst(2)))
            case "--create": options.mode = .create
            case "--replace": options.mode = .replace
            case "--append": options.mode = .append
            case "--text": options.isAllText = true
            case "--no-header": options.hasHeader = false
            case "--skip-bad-lines": options.skipsBadRecords = true
            case let option where option.hasPrefix("--"): throw ShellError(".import has no option \(option)")
            default: positional.append(argument)
            }
        }
        guard (1...2).contains(positional.count) else { throw ShellError("usage: \(Self.dotCommands.first { $0.name == "import" }!.usage)") }
        let url = URL(fileURLWithPath: positional[0])
        if options.format == nil && DataFormat(fileExtension: url.pathExtension) == nil {
            throw ShellError("cannot tell the format of \(url.path) from its extension; add --csv, --tsv, --json or --ndjson")
        }
        let table = positional.count > 1 ? positional[1] : nil
        let importOptions = options
        let result = try interruptibly { try db.importFile(url, into: table, options: importOptions) }
        for skipped in result.skippedRecords {
            FileHandle.standardError.write(Data("skipped \(skipped)\n".utf8))
        }
        Terminal.write("imported \(result.rowCount) rows into \(result.tableName)"
            + (result.skippedRecords.isEmpty ? "" : ", skipped \(result.skippedRecords.count)") + "\n")
    }

    /// `.export [--FORMAT] FILE TABLE|QUERY`, through Strata's export; the
    /// format comes from the file's extension unless given.
    private func export(_ command: DotCommandLine) throws {
        var format: DataFormat?
        var index = 0
        let arguments = command.arguments
        while index < arguments.count, arguments[index].hasPrefix("--") {
            guard let given = DataFormat(rawValue: String(arguments[index].dropFirst(2))) else {
                throw ShellError(".export has no option \(arguments[index])")
            }
            format = given
            index += 1
        }
        guard index + 1 < arguments.count else { throw ShellError("usage: \(Self.dotCommands.first { $0.name == "export" }!.usage)") }
        let url = URL(fileURLWithPath: arguments[index])
        let what = command.text(after: index)
        // A query starts with SELECT, WITH or VALUES; else one word names a table.
        let firstWord = what.prefix { $0.isLetter }.lowercased()
        let isQuery = ["select", "with", "values"].contains(firstWord) || arguments.count > index + 2
        let sql = isQuery ? what : "SELECT * FROM \(quoteIdentifier(arguments[index + 1]))"
        let options = ExportOptions(format: format ?? DataFormat(fileExtension: url.pathExtension) ?? .csv)
        let count = try interruptibly { try db.export(sql: sql, to: url, options: options) }
        Terminal.write("exported \(count) rows to \(url.path)\n")
    }

    /// on/off, as sqlite3 takes them.
    static func flag(_ word: String) throws -> Bool {
        switch word.lowercased() {
        case "on", "yes", "true", "1": return true
        case "off", "no", "false", "0": return false
        default: throw ShellError("\"\(word)\" is not on or off")
        }
    }

    /// Names in columns across the terminal's width, as sqlite3's `.tables`.
    static func columns(_ names: [String]) -> String {
        guard let width = names.map(\.count).max() else { return "" }
        let perLine = max(1, (Terminal.columns + 2) / (width + 2))
        let lineCount = (names.count + perLine - 1) / perLine
        var text = ""
        for line in 0..<lineCount {
            let row = stride(from: line, to: names.count, by: lineCount).map { names[$0] }
            text += row.enumerated().map { index, name in
                index == row.count - 1 ? name : name + String(repeating: " ", count: width - name.count)
            }.joined(separator: "  ") + "\n"
        }
        return text
    }
}
