// RunLoop.ResourceError: why an object that needs the system's resources
// (descriptors, memory, a thread) could not be made.

import CRunLoop
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension RunLoop {
    /// The system refused what an object needed (a descriptor, memory, a
    /// thread), or an argument made the object impossible: thrown by the
    /// throwing initialisers of ``RunLoop/FileDescriptor``, ``MessagePort``,
    /// signal sources (``RunLoop/Source/init(signal:order:onSignal:)``,
    /// ``RunLoop/signals(_:forMode:)``) and ``RunLoopThread``.
    ///
    /// The run loop's C core reports these failures by returning nothing,
    /// without promising what `errno` says. So ``code`` is:
    /// - `EBADF` or `EINVAL` when the Swift layer found the argument wrong
    ///   itself before asking the core (a descriptor that is not open, a
    ///   signal that cannot be caught, a negative capacity);
    /// - otherwise the `errno` the failing call left, but only when it names
    ///   a shortage the core documents for that call (`ENOMEM`, `EMFILE`,
    ///   `ENFILE`, and `EAGAIN` for a thread);
    /// - `nil` when the reason is unavailable.
    ///
    /// Programmer errors elsewhere in the library (a misuse the code could
    /// have avoided) still stop the process; these are the failures a
    /// program may meet at run time and recover from (close descriptors,
    /// retry later, report and exit).
    public struct ResourceError: Error, Sendable, Hashable, CustomStringConvertible {
        /// What could not be made, as the Swift call that failed
        /// (`"RunLoopThread(name: \"worker\")"`, say).
        public let operation: String
        /// The POSIX error code (`ENOMEM`, `EMFILE`, `EINVAL`...), or `nil`
        /// when the reason is unavailable (see the type's documentation).
        public let code: Int32?

        /// Makes an error; the library throws these, tests may compare with them.
        public init(operation: String, code: Int32?) {
            self.operation = operation
            self.code = code
        }

        /// The operation and the system's wording of the code.
        public var description: String {
            guard let code else { return "\(operation) failed (reason unavailable)" }
            return "\(operation) failed: \(String(cString: strerror(code))) (errno \(code))"
        }
    }
}

/// Runs a C constructor that returns nothing on failure, with `errno`
/// cleared first; on failure throws with the `errno` it left if that is one
/// of `shortages` (what the constructor documents), or with no code.
func makeOrThrow<T>(
    _ operation: @autoclosure () -> String, shortages: Set<Int32> = [ENOMEM, EMFILE, ENFILE],
    _ make: () -> T?
) throws(RunLoop.ResourceError) -> T {
    errno = 0
    if let made = make() { return made }
    let left = errno
    throw RunLoop.ResourceError(operation: operation(), code: shortages.contains(left) ? left : nil)
}
