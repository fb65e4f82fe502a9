// SwiftPM links an executable target's entry point as `<Target>_main` (so
// tests can link the module), which leaves no room for libFuzzer's own
// `main`. Each target's `<Target>_main` hands control to libFuzzer's driver
// instead, with the target's test function.

@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// Runs libFuzzer with `callback` as the test function, with the process's
/// arguments (`-max_total_time=30 corpus/` and so on).
public func runFuzzer(
    _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt {
    var count = argc
    var arguments = argv
    return withUnsafeMutablePointer(to: &count) { countPointer in
        withUnsafeMutablePointer(to: &arguments) { argumentsPointer in
            LLVMFuzzerRunDriver(countPointer, argumentsPointer, callback)
        }
    }
}
