import Foundation
import StrataDocuments

/// The `[admins]` section of a CouchDB-style ini file.
enum AdminConfiguration {
    /// The admins listed in `file`; plain-text passwords are hashed and the
    /// file rewritten with the hashes, so no password stays on disk.
    static func load(_ file: URL, iterations: Int) throws -> [String: PasswordHash] {
        let text: String
        do { text = try String(contentsOf: file, encoding: .utf8) } catch {
            throw DocumentError(.internalError, "cannot read the config file \(file.path): \(error.localizedDescription)")
        }
        var admins: [String: PasswordHash] = [:]
        var section = ""
        var lines: [String] = []
        var rewritten = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            switch IniFile.line(line) {
            case .section(let name):
                section = name
            case .entry(let name, let value) where section == "admins":
                if let hash = PasswordHash(configValue: value) {
                    admins[name] = hash
                } else {
                    let hash = PasswordHash(password: value, iterations: iterations)
                    admins[name] = hash
                    lines.append("\(name) = \(hash.configValue)")
                    rewritten = true
                    continue
                }
            default:
                break
            }
            lines.append(String(line))
        }
        if rewritten { try lines.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8) }
        return admins
    }
}
