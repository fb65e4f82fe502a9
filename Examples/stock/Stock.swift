import ArgumentParser
import ExampleSupport
import Foundation
import Strata

/// `stock`: the seeds' Core Data stock control, with Codable records.
@main
struct Stock: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stock",
        abstract: "Keep products with their price and units in stock.",
        subcommands: [Add.self, List.self, Adjust.self]
    )
}

struct Product: DatabaseRecord, Sendable {
    var id: Int64?
    var name: String
    var price: Double
    var units: Int

    static let databaseTableName = "products"
    static let databaseUniqueKeys = [["name"]]
    static let name = Column<String>("name")
    static let price = Column<Double>("price")
    static let units = Column<Int>("units")

    static func open(_ path: String) throws -> DatabaseQueue {
        let queue = try openDatabase(path)
        var migrator = Migrator()
        migrator.register("v1: products") { db in try db.create(table: Product.self) }
        try migrator.migrate(queue)
        return queue
    }
}

struct Add: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Add a product.")
    @Option(name: .long, help: "The database file.") var db: String
    @Argument var name: String
    @Argument var price: Double
    @Argument var units: Int

    func validate() throws {
        if price < 0 { throw ValidationError("The price cannot be negative.") }
        if units < 0 { throw ValidationError("Units cannot be negative.") }
    }

    func run() async throws {
        try await reportingErrors("stock") {
            let queue = try Product.open(db)
            let product = Product(id: nil, name: name, price: price, units: units)
            do {
                let saved = try await queue.write { db in try product.inserted(db) }
                print("added \(saved.name) (#\(saved.id ?? 0))")
            } catch SQLiteError.constraintUnique {
                throw ValidationError("a product named \"\(name)\" exists")
            }
        }
    }
}

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List products sorted by name, optionally filtered.")
    @Option(name: .long, help: "The database file.") var db: String
    @Option(name: .long, help: "Only products with fewer units than this.") var below: Int?
    @Option(name: .long, help: "Only products at most this price.") var maxPrice: Double?

    func run() async throws {
        try await reportingErrors("stock") {
            let queue = try Product.open(db)
            var query = Product.table.order(Product.name)
            if let below { query = query.filter(Product.units < below) }
            if let maxPrice { query = query.filter(Product.price <= maxPrice) }
            let selected = query
            let products = try await queue.read { db in try Product.fetchAll(db, selected) }
            for product in products {
                print("\(product.name)\t\(String(format: "%.2f", product.price))\t\(product.units)")
            }
        }
    }
}

struct Adjust: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Add or remove units of a product.")
    @Option(name: .long, help: "The database file.") var db: String
    @Argument var name: String
    @Option(name: .customLong("by"), parsing: .unconditional, help: "Units to add (negative to remove): --by -2.") var change: Int

    func run() async throws {
        try await reportingErrors("stock") {
            let queue = try Product.open(db)
            let (name, change) = (self.name, self.change)
            let units = try await queue.write { db -> Int in
                guard var product = try Product.fetchOne(db, keys: ["name": name]) else {
                    throw ValidationError("no product named \"\(name)\"")
                }
                guard product.units + change >= 0 else {
                    throw ValidationError("only \(product.units) units of \(name) in stock")
                }
                product.units += change
                try product.update(db)
                return product.units
            }
            print("\(name): \(units) units")
        }
    }
}
