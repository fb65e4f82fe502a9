import FuzzSupport
import Strata

// The TSV reader and importer under libFuzzer: `Fuzz/run TSV`.
@_cdecl("FuzzTSV_main")
public func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { start, count in
        fuzzImport(UnsafeRawBufferPointer(start: start, count: count), format: .tsv)
        return 0
    }
}
