import Foundation
import Strata
import StrataTestHelpers
import Testing

private struct Abort: Error {}

@Suite struct TransactionTests {
    func makeAccounts(_ storage: TestStorage) throws -> Database {
        let db = try storage.makeDatabase()
        try db.execute(sql: """
            CREATE TABLE accounts(id INTEGER PRIMARY KEY, balance INT NOT NULL CHECK (balance >= 0));
            INSERT INTO accounts VALUES (1, 100), (2, 0);
            """)
        return db
    }

    func balances(_ db: Database) throws -> [Int] {
        try Int.fetchAll(db, sql: "SELECT balance FROM accounts ORDER BY id")
    }

    @Test(arguments: TestStorage.allCases)
    func commitsWhenTheClosureReturns(_ storage: TestStorage) throws {
        let db = try makeAccounts(storage)
        let moved = try db.transaction {
            try db.execute(sql: "UPDATE accounts SET balance = balance - 30 WHERE id = 1")
            try db.execute(sql: "UPDATE accounts SET balance = balance + 30 WHERE id = 2")
            #expect(db.isInsideTransaction)
            return 30
        }
        #expect(moved == 30)
        #expect(!db.isInsideTransaction)
        #expect(try balances(db) == [70, 30])
    }

    @Test(arguments: TestStorage.allCases)
    func rollsBackWhenTheClosureThrows(_ storage: TestStorage) throws {
        let db = try makeAccounts(storage)
        #expect(throws: Abort.self) {
            try db.transaction {
                try db.execute(sql: "UPDATE accounts SET balance = balance + 30 WHERE id = 2")
                throw Abort()
            }
        }
        expectError(.constraintCheck) {
            try db.transaction(.immediate) {
                try db.execute(sql: "UPDATE accounts SET balance = balance + 500 WHERE id = 2")
                try db.execute(sql: "UPDATE accounts SET balance = balance - 500 WHERE id = 1")
            }
        }
        #expect(!db.isInsideTransaction)
        #expect(try balances(db) == [100, 0])
    }

    @Test(arguments: [TransactionKind.deferred, .immediate, .exclusive])
    func runsEachKind(_ kind: TransactionKind) throws {
        let path = try makeTemporaryPath()
        let db = try Database(path: path)
        try db.execute(sql: "CREATE TABLE t(a)")
        var configuration = Configuration()
        configuration.busyTimeout = .zero
        let other = try Database(path: path, configuration: configuration)
        try db.transaction(kind) {
            // Deferred takes no lock until needed; immediate and exclusive lock
            // out other writers at once.
            if kind == .deferred {
                try other.execute(sql: "INSERT INTO t VALUES ('other')")
            } else {
                expectError(.busy) { try other.execute(sql: "INSERT INTO t VALUES ('other')") }
            }
            try db.execute(sql: "INSERT INTO t VALUES ('mine')")
        }
        #expect(try String.fetchAll(other, sql: "SELECT a FROM t ORDER BY a") == (kind == .deferred ? ["mine", "other"] : ["mine"]))
    }

    @Test(arguments: TestStorage.allCases)
    func nestsSavepoints(_ storage: TestStorage) throws {
        let db = try storage.makeDatabase()
        try db.execute(sql: "CREATE TABLE log(message TEXT)")
        try db.transaction {
            try db.execute(sql: "INSERT INTO log VALUES ('outer')")
            try? db.savepoint {
                try db.execute(sql: "INSERT INTO log VALUES ('inner, rolled back')")
                throw Abort()
            }
            try db.savepoint {
                try db.execute(sql: "INSERT INTO log VALUES ('inner, kept')")
                try? db.transaction {  // nested transaction: a savepoint
                    try db.execute(sql: "INSERT INTO log VALUES ('innermost, rolled back')")
                    throw Abort()
                }
            }
            #expect(db.isInsideTransaction)
        }
        #expect(try String.fetchAll(db, sql: "SELECT message FROM log") == ["outer", "inner, kept"])
    }

    @Test func aSavepointOutsideATransactionActsAsOne() throws {
        let db = try Database()
        try db.execute(sql: "CREATE TABLE t(a)")
        #expect(throws: Abort.self) {
            try db.savepoint {
                try db.execute(sql: "INSERT INTO t VALUES (1)")
                #expect(db.isInsideTransaction)
                throw Abort()
            }
        }
        try db.savepoint { try db.execute(sql: "INSERT INTO t VALUES (2)") }
        #expect(!db.isInsideTransaction)
        #expect(try Int.fetchAll(db, sql: "SELECT a FROM t") == [2])
    }

    @Test func aFailedCommitRollsBack() throws {
        let db = try Database()
        try db.execute(sql: """
            CREATE TABLE parents(id INTEGER PRIMARY KEY);
            CREATE TABLE children(parentID INTEGER REFERENCES parents(id) DEFERRABLE INITIALLY DEFERRED);
            """)
        // The deferred foreign key is only checked at COMMIT.
        expectError(.constraintForeignKey) {
            try db.transaction {
                try db.execute(sql: "INSERT INTO children VALUES (42)")
            }
        }
        #expect(!db.isInsideTransaction)
        #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM children") == 0)
    }

    @Test func manualTransactionsForFMDBStyleCode() throws {
        let db = try Database()
        try db.execute(sql: "CREATE TABLE t(a)")
        try db.beginTransaction()
        try db.execute(sql: "INSERT INTO t VALUES (1)")
        expectError(.error) { try db.beginTransaction() }  // no nesting of BEGIN
        try db.commit()
        try db.beginTransaction(.immediate)
        try db.execute(sql: "INSERT INTO t VALUES (2)")
        try db.rollback()
        #expect(try Int.fetchAll(db, sql: "SELECT a FROM t") == [1])
        expectError(.error) { try db.commit() }
    }
}
