// Readable hang-monitor frames: backtrace_symbols (what the C core uses)
// names only exported symbols, so a frame inside a Swift executable reads
// `app(+0x47ecd)`: its functions are in the file's static symbol table
// (.symtab), and closures are local symbols that even --export-dynamic does
// not export. This file names such frames from the .symtab of the file that
// holds them (read once per file, on the monitor's thread, never in a signal
// handler) and demangles Swift names with the runtime's demangler.

import CRunLoop
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Names the frame at `address` when `frame` (as backtrace_symbols wrote it)
/// has no symbol, and demangles a Swift symbol; otherwise returns `frame`.
/// The result keeps backtrace_symbols' shape: `module(symbol+0xoffset) [address]`.
func readableFrame(_ frame: String, address: UnsafeRawPointer?) -> String {
    guard let open = frame.firstIndex(of: "("), let close = frame.lastIndex(of: ")"), open < close else {
        return frame
    }
    let module = frame[..<open]
    let inside = frame[frame.index(after: open)..<close]
    let rest = frame[frame.index(after: close)...]
    if inside.hasPrefix("+") || inside.isEmpty {
        guard let address, let (symbol, offset) = symbolize(address) else { return frame }
        return "\(module)(\(demangle(symbol))+0x\(String(offset, radix: 16)))\(rest)"
    }
    guard let plus = inside.lastIndex(of: "+") else { return frame }
    let symbol = String(inside[..<plus])
    let demangled = demangle(symbol)
    return demangled == symbol ? frame : "\(module)(\(demangled)\(inside[plus...]))\(rest)"
}

/// The Swift runtime's demangler (exported by libswiftCore).
@_silgen_name("swift_demangle")
private func swiftDemangle(
    _ mangled: UnsafePointer<CChar>, _ length: Int, _ output: UnsafeMutablePointer<CChar>?,
    _ outputSize: UnsafeMutablePointer<Int>?, _ flags: UInt32
) -> UnsafeMutablePointer<CChar>?

/// The demangled form of a Swift symbol; other names unchanged.
func demangle(_ symbol: String) -> String {
    guard symbol.hasPrefix("$s") || symbol.hasPrefix("_T") || symbol.hasPrefix("$S") else { return symbol }
    let text = symbol.withCString { swiftDemangle($0, strlen($0), nil, nil, 0) }
    guard let text else { return symbol }
    defer { free(text) }
    return String(cString: text)
}

/// The demangled name of the function at `address` (with `+0x...` when the
/// address is inside it), or `nil` when no symbol table names it.
func symbolName(at address: UnsafeRawPointer) -> String? {
    guard let (symbol, offset) = symbolize(address) else { return nil }
    return offset == 0 ? demangle(symbol) : "\(demangle(symbol))+0x\(String(offset, radix: 16))"
}

/// The function symbol containing `address` and the offset into it, from the
/// static symbol table of the file mapped there.
private func symbolize(_ address: UnsafeRawPointer) -> (String, Int)? {
    // Dl_info: dli_fname, dli_fbase, dli_sname, dli_saddr.
    var info: (UnsafePointer<CChar>?, UnsafeRawPointer?, UnsafePointer<CChar>?, UnsafeRawPointer?) = (
        nil, nil, nil, nil
    )
    guard withUnsafeMutableBytes(of: &info, { dladdr(address, $0.baseAddress!) }) != 0,
        let path = info.0, let base = info.1
    else { return nil }
    guard
        let table = symbolTables.withLock({ tables -> SymbolTable? in
            let key = String(cString: path)
            if let known = tables[key] { return known }
            let loaded = SymbolTable(path: key)
            tables[key] = loaded
            return loaded
        })
    else { return nil }
    let value = UInt(bitPattern: address)
    let key = table.isPositionIndependent ? value &- UInt(bitPattern: base) : value
    return table.lookup(UInt64(key))
}

/// glibc's dladdr (declared only under _GNU_SOURCE, so not imported); `info`
/// points at a Dl_info.
@_silgen_name("dladdr")
private func dladdr(_ address: UnsafeRawPointer?, _ info: UnsafeMutableRawPointer) -> Int32

/// The symbol tables read so far, by file path (nil entries: unreadable).
private let symbolTables = Locked<[String: SymbolTable?]>([:])

/// The function symbols of one ELF file, sorted by address.
private final class SymbolTable: Sendable {
    private let starts: [UInt64]
    private let entries: [(start: UInt64, size: UInt64, name: String)]
    let isPositionIndependent: Bool

    /// Reads the .symtab of an ELF64 file; nil when it has none or is not readable.
    init?(path: String) {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_size > 64 else { return nil }
        let size = Int(status.st_size)
        guard let map = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), map != MAP_FAILED else { return nil }
        defer { munmap(map, size) }
        let file = UnsafeRawBufferPointer(start: map, count: size)
        func load<T: FixedWidthInteger>(_ offset: Int, as: T.Type) -> T? {
            guard offset >= 0, offset + MemoryLayout<T>.size <= size else { return nil }
            return file.loadUnaligned(fromByteOffset: offset, as: T.self)
        }
        // ELF64, little-endian only (x86_64, aarch64).
        guard file[0] == 0x7f, file[1] == 0x45, file[2] == 0x4c, file[3] == 0x46, file[4] == 2, file[5] == 1,
            let type = load(16, as: UInt16.self), let sectionsAt = load(0x28, as: UInt64.self),
            let sectionSize = load(0x3a, as: UInt16.self), let sectionCount = load(0x3c, as: UInt16.self),
            sectionSize >= 64
        else { return nil }
        isPositionIndependent = type == 3  // ET_DYN
        var found: [(start: UInt64, size: UInt64, name: String)] = []
        for index in 0..<Int(sectionCount) {
            let header = Int(sectionsAt) + index * Int(sectionSize)
            guard load(header + 4, as: UInt32.self) == 2,  // SHT_SYMTAB
                let offset = load(header + 24, as: UInt64.self), let length = load(header + 32, as: UInt64.self),
                let link = load(header + 40, as: UInt32.self)
            else { continue }
            let stringsHeader = Int(sectionsAt) + Int(link) * Int(sectionSize)
            guard let stringsAt = load(stringsHeader + 24, as: UInt64.self),
                let stringsLength = load(stringsHeader + 32, as: UInt64.self),
                Int(stringsAt) + Int(stringsLength) <= size
            else { continue }
            for symbol in stride(from: Int(offset), to: Int(offset + length) - 23, by: 24) {
                guard let info = load(symbol + 4, as: UInt8.self), info & 0xf == 2,  // STT_FUNC
                    let nameAt = load(symbol, as: UInt32.self), nameAt < stringsLength,
                    let value = load(symbol + 8, as: UInt64.self), value != 0,
                    let length = load(symbol + 16, as: UInt64.self)
                else { continue }
                let start = Int(stringsAt) + Int(nameAt)
                let end = file[start..<Int(stringsAt + stringsLength)].firstIndex(of: 0) ?? start
                found.append((value, length, String(decoding: file[start..<end], as: UTF8.self)))
            }
        }
        guard !found.isEmpty else { return nil }
        found.sort { $0.start < $1.start }
        entries = found
        starts = found.map(\.start)
    }

    /// The symbol whose range holds `address`, and the offset into it.
    func lookup(_ address: UInt64) -> (String, Int)? {
        var low = 0, high = starts.count
        while low < high {  // first start > address
            let middle = (low + high) / 2
            if starts[middle] <= address { low = middle + 1 } else { high = middle }
        }
        guard low > 0 else { return nil }
        let entry = entries[low - 1]
        let offset = address - entry.start
        guard offset < max(entry.size, 1) else { return nil }
        return (entry.name, Int(offset))
    }
}
