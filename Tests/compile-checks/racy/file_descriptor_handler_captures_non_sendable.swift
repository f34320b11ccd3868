// A descriptor's handler runs on the loop's thread.
import SwiftRunLoop
final class Buffer { var bytes: [UInt8] = [] }
func go(_ fd: Int32, _ buffer: Buffer) {
    _ = RunLoop.FileDescriptor(fileDescriptor: fd) { _, _ in buffer.bytes.append(0) }
}
