import FuzzSupport
import Strata

// The CSV reader and importer under libFuzzer: `Fuzz/run CSV`.
@_cdecl("FuzzCSV_main")
public func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { start, count in
        fuzzImport(UnsafeRawBufferPointer(start: start, count: count), format: .csv)
        return 0
    }
}
