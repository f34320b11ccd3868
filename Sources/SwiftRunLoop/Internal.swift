// Internal plumbing shared by the wrappers: a lock, the closure boxes that
// C contexts own, and conversions between C and Swift values.
//
// Ownership model (the same for timers, sources, observers and descriptors):
// - A Swift wrapper owns one reference to its C object (released in deinit).
// - The C object's context `info` is a `CallbackBox`; the C retain/release
//   callbacks count the references the C side holds. When that count drops to
//   zero (the C object released its info at invalidation or when it was
//   freed) the box drops its closure, so whatever the closure captured is
//   released promptly even if the Swift wrapper is still alive.
// - A box never holds its wrapper strongly (a timer's box finds its wrapper
//   back through a weak reference), so no cycle runs through a closure.
// - A callout copies the closure out of the box before calling it, so a
//   closure that invalidates its own object is not freed while it runs.

import CRunLoop
import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A pthread mutex in a class, so it has a stable address.
final class Lock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    @inline(__always)
    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Takes the lock, for a callout's hot path: a closure handed out of
    /// `withLock`'s generic result is re-abstracted, which allocates a thunk
    /// context per call; reading it between `lock()` and `unlock()` does not.
    @inline(__always)
    func lock() { pthread_mutex_lock(mutex) }

    /// Releases the lock taken by `lock()`.
    @inline(__always)
    func unlock() { pthread_mutex_unlock(mutex) }
}

/// The object a C context's `info` points at. The C side's references are
/// counted so that the closure can be dropped as soon as the C object lets go
/// of its info (see the file comment). Subclasses hold the closure.
class CallbackBox: @unchecked Sendable {
    /// The references the C side holds (an atomic: no lock on the paths
    /// that make and drop C objects).
    private let cReferences = Atomic<Int>(0)

    /// The box's lock: one of a fixed pool, picked by address, so that a box
    /// costs one allocation (timers and sources are made by the thousand).
    /// Critical sections are a few loads and stores, never a callout.
    final var lock: Lock {
        let address = UInt(bitPattern: Unmanaged.passUnretained(self).toOpaque())
        return boxLocks[Int((address >> 4) & UInt(boxLockCount - 1))]
    }

    /// Drops the closure (and anything it captured). Called with no lock held.
    func dropCallbacks() {}

    fileprivate func cRetain() {
        cReferences.add(1, ordering: .relaxed)
    }

    fileprivate func cRelease() {
        if cReferences.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { dropCallbacks() }
    }

    /// The pointer to put in a C context's `info` (not retained: the C create
    /// function calls `retain`; keep the box alive across that call).
    var info: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
}

/// The lock pool of `CallbackBox.lock`.
private let boxLocks: [Lock] = (0..<boxLockCount).map { _ in Lock() }

/// A power of two, so picking a box's lock is a mask, not a division.
private let boxLockCount = 64

/// A box for one closure taking `Argument`: what a source, observer or
/// signal source's C info points at.
final class HandlerBox<Argument>: CallbackBox, @unchecked Sendable {
    private var handler: (@Sendable (Argument) -> Void)?

    init(_ handler: @escaping @Sendable (Argument) -> Void) {
        self.handler = handler
    }

    /// Calls the handler (if not dropped yet); the closure is copied out
    /// first, so it survives being dropped while it runs.
    func call(_ argument: Argument) {
        let lock = self.lock
        lock.lock()
        let handler = self.handler
        lock.unlock()
        handler?(argument)
    }

    override func dropCallbacks() {
        let lock = self.lock
        lock.lock()
        let handler = self.handler
        self.handler = nil
        lock.unlock()
        _ = handler  // released here, outside the lock
    }
}

/// C `retain` callback for contexts whose info is a `CallbackBox`.
let callbackBoxRetain: @convention(c) (UnsafeRawPointer?) -> UnsafeRawPointer? = { info in
    guard let info else { return nil }
    let box = Unmanaged<CallbackBox>.fromOpaque(info)
    _ = box.retain()
    box.takeUnretainedValue().cRetain()
    return info
}

/// C `release` callback for contexts whose info is a `CallbackBox`.
let callbackBoxRelease: @convention(c) (UnsafeRawPointer?) -> Void = { info in
    guard let info else { return }
    let box = Unmanaged<CallbackBox>.fromOpaque(info)
    box.takeUnretainedValue().cRelease()
    box.release()
}

/// A C object reference owned by a Swift object (one RLRetain'd reference,
/// released in deinit). Sendable: RLRetain/RLRelease are thread-safe and the
/// pointer never changes.
final class CObject: @unchecked Sendable {
    let pointer: OpaquePointer

    /// Adopts a reference the caller already owns (from a Create function).
    init(adopting pointer: OpaquePointer) {
        self.pointer = pointer
    }

    /// Takes a new reference.
    init(retaining pointer: OpaquePointer) {
        self.pointer = pointer
        _ = RLRetain(UnsafeRawPointer(pointer))
    }

    deinit {
        RLRelease(UnsafeRawPointer(pointer))
    }
}

/// Stops the process when the C core could not make an object (out of memory
/// or file descriptors), as Swift does when an allocation fails; the APIs
/// that Foundation makes non-failable stay so.
func outOfResources<T>(_ what: String) -> T {
    fatalError("\(what): the C core could not make it (out of memory or file descriptors)")
}

/// The text of RLCopyDescription for any C object.
func describe(_ object: OpaquePointer) -> String {
    guard let text = RLCopyDescription(UnsafeRawPointer(object)) else { return "(null)" }
    defer { free(text) }
    return String(cString: text)
}

/// Takes a malloc'd C string: returns its text and frees it.
func takeCString(_ text: UnsafeMutablePointer<CChar>?) -> String? {
    guard let text else { return nil }
    defer { free(text) }
    return String(cString: text)
}

extension Date {
    /// The CF absolute time (seconds since 2001-01-01) of this date.
    var absoluteTime: RLAbsoluteTime { timeIntervalSinceReferenceDate }

    init(absoluteTime: RLAbsoluteTime) {
        self.init(timeIntervalSinceReferenceDate: absoluteTime)
    }
}

/// A value guarded by a `Lock`.
final class Locked<Value>: @unchecked Sendable {
    private let lock = Lock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        try lock.withLock { try body(&value) }
    }
}
