import FuzzSupport
import Strata

// The JSON reader and importer under libFuzzer: `Fuzz/run JSON`.
@_cdecl("FuzzJSON_main")
public func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { start, count in
        fuzzImport(UnsafeRawBufferPointer(start: start, count: count), format: .json)
        return 0
    }
}
