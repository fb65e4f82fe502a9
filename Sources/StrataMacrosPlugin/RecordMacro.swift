import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@Record`: reads the type's stored properties and generates the
/// `GeneratedRecord` conformance (see `Sources/StrataMacros/Record.swift`).
public struct RecordMacro: MemberMacro, ExtensionMacro {
    /// A final class's `init(row:)`: a class's designated initializer must be
    /// in its body. A struct's goes in the extension, so that the memberwise
    /// initializer stays.
    public static func expansion(
        of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard declaration.is(ClassDeclSyntax.self), let model = RecordModel.read(node, declaration, context, report: false) else {
            return []
        }
        return [model.rowInitializer()]
    }

    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax, providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard let model = RecordModel.read(node, declaration, context, report: true) else { return [] }
        let conformance = protocols.isEmpty ? "" : ": " + protocols.map(\.trimmedDescription).joined(separator: ", ")
        let members = model.extensionMembers().joined(separator: "\n\n")
        let decl: DeclSyntax = """
            extension \(raw: type.trimmedDescription)\(raw: conformance) {
            \(raw: members)
            }
            """
        guard let ext = decl.as(ExtensionDeclSyntax.self) else { return [] }
        return [ext]
    }
}

/// `@Column`, `@PrimaryKey`, `@Unique`, `@Ignored`, `@ForeignKey`: markers
/// that `@Record` reads; they generate nothing themselves.
public struct MarkerMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        []
    }
}

// MARK: - The model

/// A stored property of the record.
struct StoredProperty {
    var name: String
    var column: String
    var type: TypeSyntax
    var isOptional: Bool
    var isPrimaryKey: Bool
    var isUnique: Bool
    var foreignKey: AttributeSyntax?
}

struct RecordModel {
    var isClass: Bool
    var access: String
    var table: String?
    var uniqueKeys: String?
    var withoutPrimaryKey: Bool
    var properties: [StoredProperty]
    var primaryKey: [StoredProperty]

    /// Reads the type; nil (after diagnosing, when `report`) when it cannot be
    /// a record.
    static func read(
        _ node: AttributeSyntax, _ declaration: some DeclGroupSyntax, _ context: some MacroExpansionContext, report: Bool
    ) -> RecordModel? {
        var diagnostics: [Diagnostic] = []
        defer { if report { diagnostics.forEach(context.diagnose) } }

        let isClass: Bool
        if declaration.is(StructDeclSyntax.self) {
            isClass = false
        } else if let classDecl = declaration.as(ClassDeclSyntax.self) {
            isClass = true
            if !classDecl.modifiers.contains(where: { $0.name.tokenKind == .keyword(.final) }) {
                // `final` before `class`, on the line `class` was on.
                let keyword = classDecl.classKeyword
                diagnostics.append(Diagnostic(
                    node: keyword, message: RecordDiagnostic.nonFinalClass,
                    fixIt: FixIt(message: RecordFixIt("make the class final"), changes: [
                        .replace(oldNode: Syntax(classDecl), newNode: Syntax(makingFinal(classDecl)))
                    ])))
                return nil
            }
        } else {
            diagnostics.append(Diagnostic(node: node, message: RecordDiagnostic.notStructOrClass))
            return nil
        }

        let modifiers = declaration.modifiers.map(\.name.tokenKind)
        let access = modifiers.contains(.keyword(.public)) || modifiers.contains(.keyword(.open))
            ? "public " : modifiers.contains(.keyword(.package)) ? "package " : ""

        // The macro's arguments.
        var table: String?
        var uniqueKeys: String?
        var withoutPrimaryKey = false
        if case .argumentList(let arguments) = node.arguments {
            for argument in arguments {
                switch argument.label?.text {
                case "table": table = argument.expression.trimmedDescription
                case "uniqueKeys": uniqueKeys = argument.expression.trimmedDescription
                case "withoutPrimaryKey": withoutPrimaryKey = argument.expression.trimmedDescription == "true"
                default: break
                }
            }
        }

        var properties: [StoredProperty] = []
        var failed = false
        for member in declaration.memberBlock.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self) else { continue }
            let kinds = variable.modifiers.map(\.name.tokenKind)
            if kinds.contains(.keyword(.static)) || kinds.contains(.keyword(.class)) { continue }
            let attributes = Attributes(variable.attributes)
            let isLazy = kinds.contains(.keyword(.lazy))
            let isLet = variable.bindingSpecifier.tokenKind == .keyword(.let)
            let bindings = Array(variable.bindings)
            for (position, binding) in bindings.enumerated() {
                if let accessors = binding.accessorBlock, isComputed(accessors) { continue }
                guard let identifier = binding.pattern.as(IdentifierPatternSyntax.self) else { continue }
                let name = identifier.identifier.text.trimmingBackticks
                if attributes.isIgnored {
                    if binding.initializer == nil && !(isOptionalType(binding.typeAnnotation?.type) && !isLet) {
                        diagnostics.append(Diagnostic(node: identifier, message: RecordDiagnostic.ignoredWithoutDefault(name)))
                        failed = true
                    }
                    continue
                }
                if isLazy {
                    diagnostics.append(Diagnostic(
                        node: identifier, message: RecordDiagnostic.lazy(name),
                        fixIt: ignoreFixIt(variable)))
                    failed = true
                    continue
                }
                if isLet && binding.initializer != nil {
                    diagnostics.append(Diagnostic(
                        node: identifier, message: RecordDiagnostic.constantWithValue(name),
                        fixIts: [
                            FixIt(message: RecordFixIt("make it 'var'"), changes: [
                                .replace(oldNode: Syntax(variable.bindingSpecifier), newNode: Syntax(TokenSyntax.keyword(.var, trailingTrivia: .space)))
                            ]),
                            ignoreFixIt(variable),
                        ]))
                    failed = true
                    continue
                }
                // `var a, b: Int`: the type follows the last name.
                guard let type = bindings[position...].lazy.compactMap(\.typeAnnotation).first?.type else {
                    diagnostics.append(Diagnostic(
                        node: identifier, message: RecordDiagnostic.missingType(name),
                        fixIts: inferredTypeFixIt(binding).map { [$0] } ?? []))
                    failed = true
                    continue
                }
                if let problem = unstorable(type) {
                    diagnostics.append(Diagnostic(
                        node: type, message: RecordDiagnostic.unstorable(name, type.trimmedDescription, problem),
                        fixIt: ignoreFixIt(variable)))
                    failed = true
                    continue
                }
                properties.append(StoredProperty(
                    name: name, column: attributes.column ?? name, type: type.trimmed,
                    isOptional: isOptionalType(type), isPrimaryKey: attributes.isPrimaryKey,
                    isUnique: attributes.isUnique, foreignKey: attributes.foreignKey))
            }
        }
        if failed { return nil }

        var primaryKey = properties.filter(\.isPrimaryKey)
        if primaryKey.isEmpty, let id = properties.first(where: { $0.column.lowercased() == "id" }) {
            primaryKey = [id]
        }
        if withoutPrimaryKey {
            if !primaryKey.isEmpty && properties.contains(where: \.isPrimaryKey) {
                diagnostics.append(Diagnostic(node: node, message: RecordDiagnostic.primaryKeyAndWithout))
                return nil
            }
            primaryKey = []
        } else if primaryKey.isEmpty {
            var fixIts: [FixIt] = []
            if let first = declaration.memberBlock.members.lazy.compactMap({ $0.decl.as(VariableDeclSyntax.self) })
                .first(where: { variable in properties.contains { $0.name == variable.bindings.first?.pattern.trimmedDescription } })
            {
                fixIts.append(FixIt(message: RecordFixIt("mark '\(first.bindings.first!.pattern.trimmedDescription)' with @PrimaryKey"), changes: [
                    .replace(oldNode: Syntax(first), newNode: Syntax(adding("PrimaryKey", to: first)))
                ]))
            }
            var withArgument = node
            let argument = LabeledExprSyntax(label: "withoutPrimaryKey", colon: .colonToken(trailingTrivia: .space), expression: ExprSyntax("true"))
            if case .argumentList(var arguments) = node.arguments, !arguments.isEmpty {
                arguments[arguments.index(before: arguments.endIndex)].trailingComma = .commaToken(trailingTrivia: .space)
                arguments.append(argument)
                withArgument.arguments = .argumentList(arguments)
            } else {
                withArgument.leftParen = .leftParenToken()
                withArgument.arguments = .argumentList([argument])
                withArgument.rightParen = .rightParenToken()
            }
            fixIts.append(FixIt(message: RecordFixIt("identify rows by rowid only: withoutPrimaryKey: true"), changes: [
                .replace(oldNode: Syntax(node), newNode: Syntax(withArgument))
            ]))
            diagnostics.append(Diagnostic(node: node, message: RecordDiagnostic.missingPrimaryKey, fixIts: fixIts))
            return nil
        }
        return RecordModel(
            isClass: isClass, access: access, table: table, uniqueKeys: uniqueKeys, withoutPrimaryKey: withoutPrimaryKey,
            properties: properties, primaryKey: primaryKey)
    }

    // MARK: Generated members

    func rowInitializer() -> DeclSyntax {
        var lines = ["\(access)init(row: Strata.RecordRow) throws {"]
        for (position, property) in properties.enumerated() {
            lines.append("    self.\(property.name) = try row.decode(\(typeExpression(property.type)).self, \(position))")
        }
        lines.append("}")
        return DeclSyntax(stringLiteral: lines.joined(separator: "\n"))
    }

    func extensionMembers() -> [String] {
        var members: [String] = []
        var columns = ["\(access)struct Columns {"]
        for property in properties {
            columns.append("    \(access)let \(property.name.escapedIdentifier) = Strata.Column<\(property.type)>(\(literal(property.column)))")
        }
        columns.append("}")
        members.append(columns.joined(separator: "\n"))
        members.append("""
            /// The typed columns: `filter { $0.column > value }`.
            \(access)static var columns: Columns {
                Columns()
            }
            """)
        let definitions = properties.map { "        Strata.RecordColumnDefinition(\(literal($0.column)), \(typeExpression($0.type)).self)," }
        members.append("""
            \(access)static var databaseColumns: [Strata.RecordColumnDefinition] {
                [
            \(definitions.joined(separator: "\n"))
                ]
            }
            """)
        if !isClass {
            members.append(rowInitializer().description)
        }
        var encode = ["\(access)func encodeColumns(into values: inout Strata.RecordValues) throws {"]
        for property in properties {
            let method = primaryKey.count == 1 && primaryKey[0].name == property.name ? "encodePrimaryKey" : "encode"
            encode.append("    try values.\(method)(self.\(property.name))")
        }
        encode.append("}")
        members.append(encode.joined(separator: "\n"))
        if let table {
            members.append("""
                \(access)static var databaseTableName: String {
                    \(table)
                }
                """)
        }
        members.append("""
            \(access)static var databasePrimaryKey: [String] {
                [\(primaryKey.map { literal($0.column) }.joined(separator: ", "))]
            }
            """)
        let single = properties.filter(\.isUnique).map { "[\(literal($0.column))]" }
        if !single.isEmpty || uniqueKeys != nil {
            let body = uniqueKeys.map { single.isEmpty ? $0 : "[\(single.joined(separator: ", "))] + \($0)" } ?? "[\(single.joined(separator: ", "))]"
            members.append("""
                \(access)static var databaseUniqueKeys: [[String]] {
                    \(body)
                }
                """)
        }
        let foreignKeys = properties.compactMap { property in property.foreignKey.map { foreignKey(property, $0) } }
        if !foreignKeys.isEmpty {
            members.append("""
                \(access)static var databaseForeignKeys: [Strata.DatabaseForeignKey] {
                    [
                \(foreignKeys.map { "        \($0)," }.joined(separator: "\n"))
                    ]
                }
                """)
        }
        if primaryKey.count == 1 {
            members.append("""
                \(access)\(isClass ? "" : "mutating ")func didInsert(rowID: Int64, primaryKeyColumn: String) throws {
                    try Strata.assignRowID(rowID, to: &self.\(primaryKey[0].name), tableName: Self.databaseTableName, column: primaryKeyColumn)
                }
                """)
        }
        return members.map { indent($0) }
    }

    /// `Strata.DatabaseForeignKey(["authorID"], references: Author.self, onDelete: .cascade)`.
    func foreignKey(_ property: StoredProperty, _ attribute: AttributeSyntax) -> String {
        var arguments = ["[\(literal(property.column))]"]
        if case .argumentList(let list) = attribute.arguments {
            for argument in list {
                let value = argument.expression.trimmedDescription
                switch argument.label?.text {
                case nil: arguments.append("references: \(value)")
                case "column": arguments.append("columns: [\(value)]")
                case let label?: arguments.append("\(label): \(value)")
                }
            }
        }
        return "Strata.DatabaseForeignKey(\(arguments.joined(separator: ", ")))"
    }
}

// MARK: - Reading declarations

/// The markers on a property.
struct Attributes {
    var column: String?
    var isPrimaryKey = false
    var isUnique = false
    var isIgnored = false
    var foreignKey: AttributeSyntax?

    init(_ list: AttributeListSyntax) {
        for element in list {
            guard case .attribute(let attribute) = element else { continue }
            let name = attribute.attributeName.trimmedDescription
            switch name.split(separator: ".").last.map(String.init) {
            case "Column":
                if case .argumentList(let arguments) = attribute.arguments, let first = arguments.first,
                    let string = first.expression.as(StringLiteralExprSyntax.self)
                {
                    column = string.segments.trimmedDescription
                }
            case "PrimaryKey": isPrimaryKey = true
            case "Unique": isUnique = true
            case "Ignored", "Transient": isIgnored = true
            case "ForeignKey": foreignKey = attribute
            default: break
            }
        }
    }
}

/// Whether a property's accessors make it computed (a getter), rather than
/// stored with observers.
func isComputed(_ accessors: AccessorBlockSyntax) -> Bool {
    switch accessors.accessors {
    case .getter: return true
    case .accessors(let list):
        return list.contains { [.keyword(.get), .keyword(._read), .keyword(._modify)].contains($0.accessorSpecifier.tokenKind) }
    }
}

/// `T?`, `T!` or `Optional<T>`.
func isOptionalType(_ type: TypeSyntax?) -> Bool {
    guard let type else { return false }
    if type.is(OptionalTypeSyntax.self) || type.is(ImplicitlyUnwrappedOptionalTypeSyntax.self) { return true }
    if let identifier = type.as(IdentifierTypeSyntax.self), identifier.name.text == "Optional", identifier.genericArgumentClause != nil {
        return true
    }
    if let member = type.as(MemberTypeSyntax.self), member.name.text == "Optional",
        member.baseType.trimmedDescription == "Swift", member.genericArgumentClause != nil
    {
        return true
    }
    return false
}

/// Why a type cannot be a column, or nil when it may be.
func unstorable(_ type: TypeSyntax) -> String? {
    if let optional = type.as(OptionalTypeSyntax.self) { return unstorable(optional.wrappedType) }
    if type.is(FunctionTypeSyntax.self) { return "a function" }
    if let attributed = type.as(AttributedTypeSyntax.self), attributed.baseType.is(FunctionTypeSyntax.self) { return "a function" }
    if let tuple = type.as(TupleTypeSyntax.self) {
        if tuple.elements.count == 1, let only = tuple.elements.first { return unstorable(only.type) }
        return "a tuple"
    }
    if type.is(SomeOrAnyTypeSyntax.self) { return "an existential" }
    if type.is(MetatypeTypeSyntax.self) { return "a metatype" }
    if let identifier = type.as(IdentifierTypeSyntax.self), ["Any", "AnyObject"].contains(identifier.name.text) {
        return "an existential"
    }
    return nil
}

/// A type to write before `.self`: `(() -> Void)` needs its parentheses,
/// `Int?` and `[String]` do not.
func typeExpression(_ type: TypeSyntax) -> String {
    if type.is(IdentifierTypeSyntax.self) || type.is(MemberTypeSyntax.self) || type.is(OptionalTypeSyntax.self)
        || type.is(ArrayTypeSyntax.self) || type.is(DictionaryTypeSyntax.self)
    {
        return type.trimmedDescription
    }
    if let iuo = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
        return typeExpression(iuo.wrappedType) + "?"
    }
    return "(\(type.trimmedDescription))"
}

/// The type a literal default value gives: `= 0` is an `Int`.
func inferredTypeFixIt(_ binding: PatternBindingSyntax) -> FixIt? {
    guard let value = binding.initializer?.value else { return nil }
    let type: String
    if value.is(IntegerLiteralExprSyntax.self) {
        type = "Int"
    } else if value.is(FloatLiteralExprSyntax.self) {
        type = "Double"
    } else if value.is(StringLiteralExprSyntax.self) {
        type = "String"
    } else if value.is(BooleanLiteralExprSyntax.self) {
        type = "Bool"
    } else {
        return nil
    }
    var fixed = binding
    fixed.pattern = fixed.pattern.trimmed
    fixed.typeAnnotation = TypeAnnotationSyntax(
        colon: .colonToken(trailingTrivia: .space), type: TypeSyntax(IdentifierTypeSyntax(name: .identifier(type))),
        trailingTrivia: .space)
    return FixIt(message: RecordFixIt("add ': \(type)'"), changes: [.replace(oldNode: Syntax(binding), newNode: Syntax(fixed))])
}

/// The class with `final` before `class`, on the line `class` was on.
func makingFinal(_ classDecl: ClassDeclSyntax) -> ClassDeclSyntax {
    var fixed = classDecl
    let trivia = classDecl.modifiers.isEmpty ? classDecl.classKeyword.leadingTrivia : []
    fixed.modifiers.append(DeclModifierSyntax(leadingTrivia: trivia, name: .keyword(.final), trailingTrivia: .space))
    if classDecl.modifiers.isEmpty { fixed.classKeyword.leadingTrivia = [] }
    return fixed
}

/// Adds `@Ignored` before a property.
func ignoreFixIt(_ variable: VariableDeclSyntax) -> FixIt {
    FixIt(message: RecordFixIt("mark it @Ignored"), changes: [
        .replace(oldNode: Syntax(variable), newNode: Syntax(adding("Ignored", to: variable)))
    ])
}

/// The property with `@name` before it.
func adding(_ name: String, to variable: VariableDeclSyntax) -> VariableDeclSyntax {
    var fixed = variable
    let attribute = AttributeSyntax(
        atSign: .atSignToken(leadingTrivia: variable.attributes.isEmpty ? variable.leadingTrivia : []),
        attributeName: TypeSyntax(IdentifierTypeSyntax(name: .identifier(name))), trailingTrivia: .space)
    if variable.attributes.isEmpty {
        fixed.leadingTrivia = []
        if let first = fixed.modifiers.first {
            fixed.modifiers[fixed.modifiers.startIndex] = first.with(\.leadingTrivia, [])
        } else {
            fixed.bindingSpecifier.leadingTrivia = []
        }
    }
    fixed.attributes.append(.attribute(attribute))
    return fixed
}

/// A Swift string literal.
func literal(_ text: String) -> String {
    var escaped = "\""
    for character in text {
        if character == "\\" || character == "\"" { escaped.append("\\") }
        escaped.append(character)
    }
    return escaped + "\""
}

/// Indents every line of a member by four spaces.
func indent(_ text: String) -> String {
    text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.isEmpty ? "" : "    " + $0 }.joined(separator: "\n")
}

extension String {
    var trimmingBackticks: String {
        hasPrefix("`") && hasSuffix("`") && count > 1 ? String(dropFirst().dropLast()) : self
    }

    /// A member name, in backticks when it is a keyword.
    var escapedIdentifier: String {
        ["default", "case", "class", "struct", "enum", "func", "var", "let", "in", "is", "as", "if", "else", "for",
         "while", "return", "switch", "where", "import", "init", "self", "Self", "protocol", "extension", "static",
         "public", "private", "internal", "operator", "throws", "try", "catch", "do", "repeat", "break", "continue",
         "fallthrough", "defer", "guard", "inout", "nil", "true", "false", "super", "subscript", "typealias",
         "associatedtype", "deinit", "fileprivate", "open", "rethrows", "throw", "Any"].contains(self) ? "`\(self)`" : self
    }
}

// MARK: - Diagnostics

enum RecordDiagnostic: DiagnosticMessage {
    case notStructOrClass
    case nonFinalClass
    case missingPrimaryKey
    case primaryKeyAndWithout
    case missingType(String)
    case unstorable(String, String, String)
    case ignoredWithoutDefault(String)
    case constantWithValue(String)
    case lazy(String)

    var message: String {
        switch self {
        case .notStructOrClass:
            "@Record applies to a struct or a final class"
        case .nonFinalClass:
            "@Record needs a final class: a subclass's properties would not be stored"
        case .missingPrimaryKey:
            "@Record needs a primary key to update, save, upsert and delete records: add a property named 'id', mark one or more with @PrimaryKey, or write withoutPrimaryKey: true"
        case .primaryKeyAndWithout:
            "@Record(withoutPrimaryKey: true) contradicts the @PrimaryKey properties"
        case .missingType(let name):
            "'\(name)' needs a type annotation: @Record reads and writes each stored property by its type"
        case .unstorable(let name, let type, let problem):
            "'\(name)' cannot be stored in a column: '\(type)' is \(problem); mark it @Ignored, or store a Codable value"
        case .ignoredWithoutDefault(let name):
            "the ignored property '\(name)' needs a default value, which fetched records get"
        case .constantWithValue(let name):
            "'\(name)' is a constant with a value, so a fetched record cannot read it: make it 'var', or mark it @Ignored"
        case .lazy(let name):
            "the lazy property '\(name)' cannot be stored: mark it @Ignored"
        }
    }

    var diagnosticID: MessageID {
        let id = switch self {
        case .notStructOrClass: "notStructOrClass"
        case .nonFinalClass: "nonFinalClass"
        case .missingPrimaryKey: "missingPrimaryKey"
        case .primaryKeyAndWithout: "primaryKeyAndWithout"
        case .missingType: "missingType"
        case .unstorable: "unstorable"
        case .ignoredWithoutDefault: "ignoredWithoutDefault"
        case .constantWithValue: "constantWithValue"
        case .lazy: "lazy"
        }
        return MessageID(domain: "StrataMacros", id: id)
    }

    var severity: DiagnosticSeverity { .error }
}

struct RecordFixIt: FixItMessage {
    let message: String
    init(_ message: String) { self.message = message }
    var fixItID: MessageID { MessageID(domain: "StrataMacros", id: message) }
}
