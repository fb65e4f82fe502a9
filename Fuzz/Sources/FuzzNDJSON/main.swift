import FuzzSupport
import Strata

// The NDJSON reader and importer under libFuzzer: `Fuzz/run NDJSON`.
@_cdecl("FuzzNDJSON_main")
public func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { start, count in
        fuzzImport(UnsafeRawBufferPointer(start: start, count: count), format: .ndjson)
        return 0
    }
}
