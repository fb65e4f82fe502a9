import Dispatch
import Foundation
import Hummingbird
import NIOCore
import ServiceLifecycle
import StrataDocuments
import StrataSync
import StrataQueryServers

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
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("[") && trimmed.hasSuffix("]") {
                section = String(trimmed.dropFirst().dropLast()).trimmingCharacters(in: .whitespaces)
            } else if section == "admins", !trimmed.hasPrefix(";"), !trimmed.hasPrefix("#"), let equals = trimmed.firstIndex(of: "=") {
                let name = trimmed[..<equals].trimmingCharacters(in: .whitespaces)
                let value = trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: .whitespaces)
                if let hash = PasswordHash(configValue: value) {
                    admins[name] = hash
                } else {
                    let hash = PasswordHash(password: value, iterations: iterations)
                    admins[name] = hash
                    lines.append("\(name) = \(hash.configValue)")
                    rewritten = true
                    continue
                }
            }
            lines.append(line)
        }
        if rewritten { try lines.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8) }
        return admins
    }
}
