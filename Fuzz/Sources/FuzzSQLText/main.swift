import FuzzSupport
import Strata

// Identifiers and values in the SQL Strata writes, under libFuzzer:
// `Fuzz/run SQLText`. The input, decoded as UTF-8, is the text.
@_cdecl("FuzzSQLText_main")
public func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { start, count in
        fuzzIdentifierAndValue(String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self))
        return 0
    }
}
