// RunLoop.FileDescriptor: CF's CFFileDescriptor (RLFileDescriptor) for Linux.

import CRunLoop
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension RunLoop {
    /// A file descriptor watched by run loops for readability and/or
    /// writability, with a handler called on the loop's thread.
    ///
    /// macOS's `CFFileDescriptor` (Foundation has no equivalent; swift-corelibs
    /// Foundation has none on Linux). Each callback type is one-shot: once the
    /// descriptor is ready for it, the handler is called once with that type
    /// and the type is disabled; call ``enableCallBacks(_:)`` (typically in the
    /// handler) to keep watching. End-of-file, hang-up and errors count as
    /// readiness, so the handler's `read`/`write` sees them.
    ///
    /// Add it to a loop with ``RunLoop/add(_:forMode:)-(RunLoop.FileDescriptor,_)``. The run loop keeps it alive
    /// while it is scheduled, and it stays alive until ``invalidate()``:
    /// invalidate it when done (as with CF), which also releases the handler
    /// and closes the descriptor if `closeOnInvalidate` was set.
    ///
    /// `Sendable`: its handler is `@Sendable` (it runs on the loop's thread)
    /// and its operations are safe from any thread.
    public final class FileDescriptor: Sendable {
        /// The kinds of readiness a ``RunLoop/FileDescriptor`` reports.
        ///
        /// CF's `kCFFileDescriptorReadCallBack` and `kCFFileDescriptorWriteCallBack`.
        public struct CallBackTypes: OptionSet, Hashable, Sendable {
            /// The bits, equal to CF's.
            public let rawValue: UInt
            /// Makes a set from CF's bits.
            public init(rawValue: UInt) { self.rawValue = rawValue }
            /// Ready for reading (or at end of file, hung up, in error).
            public static let read = CallBackTypes(rawValue: 1 << 0)
            /// Ready for writing (or in error).
            public static let write = CallBackTypes(rawValue: 1 << 1)
        }

        let object: CObject
        let box: FileDescriptorBox

        init(retaining ref: OpaquePointer, box: FileDescriptorBox) {
            self.object = CObject(retaining: ref)
            self.box = box
        }

        /// Wraps `fileDescriptor`, with no callback enabled yet, or throws
        /// why it cannot.
        ///
        /// CF's `CFFileDescriptorCreate`.
        ///
        /// ```swift
        /// import SwiftRunLoop
        /// #if canImport(Glibc)
        /// import Glibc
        /// #endif
        ///
        /// let input = try RunLoop.FileDescriptor(watching: STDIN_FILENO) { descriptor, _ in
        ///     var buffer = [UInt8](repeating: 0, count: 4096)
        ///     if read(descriptor.fileDescriptor, &buffer, buffer.count) > 0 {
        ///         descriptor.enableCallBacks(.read)
        ///     }
        /// }
        /// RunLoop.main.add(input, forMode: .default)
        /// input.enableCallBacks(.read)
        /// ```
        ///
        /// - Parameters:
        ///   - fileDescriptor: An open descriptor; it is not duplicated.
        ///   - closeOnInvalidate: Whether ``invalidate()`` closes it.
        ///   - handler: Called on the run loop's thread with this object and
        ///     the types it is ready for (those types are then disabled).
        /// - Throws: ``RunLoop/ResourceError`` with `EBADF` when
        ///   `fileDescriptor` is not open; with `ENOMEM`, `EMFILE` or `ENFILE`
        ///   (or no code when the system did not say) when out of memory or
        ///   descriptors. The descriptor is not closed then.
        public convenience init(
            watching fileDescriptor: Int32, closeOnInvalidate: Bool = false,
            handler: @escaping @Sendable (RunLoop.FileDescriptor, CallBackTypes) -> Void
        ) throws(RunLoop.ResourceError) {
            let operation = "RunLoop.FileDescriptor(watching: \(fileDescriptor))"
            guard fileDescriptor >= 0, fcntl(fileDescriptor, F_GETFD) >= 0 else {
                throw RunLoop.ResourceError(operation: operation, code: EBADF)
            }
            let box = FileDescriptorBox(handler)
            let ref = try makeOrThrow(operation) {
                Self.makeDescriptor(fileDescriptor, closeOnInvalidate: closeOnInvalidate, box: box)
            }
            self.init(adopting: ref, box: box)
        }

        /// Wraps `fileDescriptor`, with no callback enabled yet.
        ///
        /// CF's `CFFileDescriptorCreate`. ``init(watching:closeOnInvalidate:handler:)``
        /// does the same and throws an error that says why it failed.
        ///
        /// - Parameters:
        ///   - fileDescriptor: An open descriptor; it is not duplicated.
        ///   - closeOnInvalidate: Whether ``invalidate()`` closes it.
        ///   - handler: Called on the run loop's thread with this object and
        ///     the types it is ready for (those types are then disabled).
        /// - Returns: `nil` when `fileDescriptor` is not open, or when out of
        ///   descriptors or memory (the descriptor is then not closed).
        public convenience init?(
            fileDescriptor: Int32, closeOnInvalidate: Bool = false,
            handler: @escaping @Sendable (RunLoop.FileDescriptor, CallBackTypes) -> Void
        ) {
            let box = FileDescriptorBox(handler)
            guard let ref = Self.makeDescriptor(fileDescriptor, closeOnInvalidate: closeOnInvalidate, box: box)
            else { return nil }
            self.init(adopting: ref, box: box)
        }

        /// Takes over the reference to a new C descriptor whose info is `box`.
        private init(adopting ref: OpaquePointer, box: FileDescriptorBox) {
            self.object = CObject(adopting: ref)
            self.box = box
            box.setWrapper(self)
        }

        private static func makeDescriptor(
            _ fileDescriptor: Int32, closeOnInvalidate: Bool, box: FileDescriptorBox
        ) -> OpaquePointer? {
            var context = RLFileDescriptorContext(
                version: 0, info: box.info, retain: callbackBoxRetain,
                release: callbackBoxRelease, copyDescription: nil)
            return withExtendedLifetime(box) {
                RLFileDescriptorCreate(fileDescriptor, closeOnInvalidate, fileDescriptorTrampoline, &context)
            }
        }

        /// The wrapped descriptor (still returned after invalidation).
        public var fileDescriptor: Int32 {
            RLFileDescriptorGetNativeDescriptor(object.pointer)
        }

        /// Arms the given callback types (one-shot each). From any thread,
        /// including the handler.
        ///
        /// CF's `CFFileDescriptorEnableCallBacks`.
        public func enableCallBacks(_ types: CallBackTypes) {
            RLFileDescriptorEnableCallBacks(object.pointer, RLOptionFlags(types.rawValue))
        }

        /// Disarms the given callback types; a readiness seen but not yet
        /// reported for them is dropped.
        ///
        /// CF's `CFFileDescriptorDisableCallBacks`.
        public func disableCallBacks(_ types: CallBackTypes) {
            RLFileDescriptorDisableCallBacks(object.pointer, RLOptionFlags(types.rawValue))
        }

        /// Adds the descriptor to `mode` of `runLoop`: its callbacks fire when
        /// that loop runs in that mode.
        ///
        /// The same as ``RunLoop/add(_:forMode:)-(RunLoop.FileDescriptor,_)``, the
        /// verb timers, sources and observers use.
        public func schedule(in runLoop: RunLoop, forMode mode: RunLoop.Mode) {
            runLoop.add(self, forMode: mode)
        }

        /// Removes the descriptor from `mode` of `runLoop`, without invalidating it.
        ///
        /// The same as ``RunLoop/remove(_:forMode:)-(RunLoop.FileDescriptor,_)``.
        public func remove(from runLoop: RunLoop, forMode mode: RunLoop.Mode) {
            runLoop.remove(self, forMode: mode)
        }

        /// Stops watching for good: removes the descriptor from every loop,
        /// releases the handler, and closes the descriptor if
        /// `closeOnInvalidate` was set. Idempotent; safe in the handler.
        ///
        /// CF's `CFFileDescriptorInvalidate`.
        public func invalidate() {
            RLFileDescriptorInvalidate(object.pointer)
        }

        /// Whether the descriptor is still watched (`false` once invalidated).
        ///
        /// CF's `CFFileDescriptorIsValid`.
        public var isValid: Bool {
            RLFileDescriptorIsValid(object.pointer)
        }

        /// The descriptor's run-loop source (the C object makes it once and keeps it).
        func runLoopSource() -> CObject? {
            RLFileDescriptorCreateRunLoopSource(object.pointer, 0).map { CObject(adopting: $0) }
        }
    }
}

extension RunLoop.FileDescriptor: CustomStringConvertible {
    /// The C core's description (descriptor, validity, enabled callbacks).
    public var description: String { describe(object.pointer) }
}

extension RunLoop.FileDescriptor {
    /// A stream of the readiness of the descriptor for `types`, re-armed
    /// after each element; for use while the descriptor is scheduled.
    ///
    /// Each element is the set of types the descriptor became ready for. The
    /// descriptor is re-enabled for `types` right after each report, so the
    /// consumer should read (or write) before awaiting the next element, or
    /// readiness is reported again; only the newest report is kept while
    /// nobody awaits. The stream ends when the descriptor is invalidated.
    /// Ending the iteration disables the callbacks (it does not invalidate).
    /// The descriptor's own handler still runs first on every fire.
    public func readiness(_ types: CallBackTypes = .read) -> AsyncStream<CallBackTypes> {
        AsyncStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
            let object = self.object
            let id = box.addListener { fired in
                continuation.yield(fired)
                RLFileDescriptorEnableCallBacks(object.pointer, RLOptionFlags(types.rawValue))
            } onEnd: {
                continuation.finish()
            }
            guard let id else { return continuation.finish() }
            let box = self.box
            continuation.onTermination = { _ in
                box.removeListener(id)
                RLFileDescriptorDisableCallBacks(object.pointer, RLOptionFlags(types.rawValue))
            }
            enableCallBacks(types)
        }
    }
}

/// The C descriptor's info: the handler, stream listeners, and a weak way
/// back to the Swift wrapper (made afresh for a callout if it is gone).
///
/// A callout is the hot path of a descriptor ping-pong: it takes the box's
/// lock once, loads the handler and the wrapper (not through `withLock`,
/// whose generic result would re-abstract the closure into a new context),
/// and copies the listeners only when there are some (copying even an empty
/// collection of closure tuples costs a runtime metadata lookup), so a
/// callout allocates nothing.
final class FileDescriptorBox: CallbackBox, @unchecked Sendable {
    typealias Handler = @Sendable (RunLoop.FileDescriptor, RunLoop.FileDescriptor.CallBackTypes) -> Void
    typealias Listener = (fire: @Sendable (RunLoop.FileDescriptor.CallBackTypes) -> Void, end: @Sendable () -> Void)

    private var handler: Handler?
    private weak var wrapper: RunLoop.FileDescriptor?
    private var listeners = [Int: Listener]()  // not a literal: an empty literal is a call
    private var nextListenerID = 0

    init(_ handler: @escaping Handler) {
        self.handler = handler
    }

    /// Records the wrapper being initialised. No lock: the descriptor is in
    /// no run loop yet, and adding it to one (under the loop's lock) orders
    /// this store before any callout.
    func setWrapper(_ wrapper: RunLoop.FileDescriptor) {
        self.wrapper = wrapper
    }

    func fire(_ ref: OpaquePointer, _ types: RunLoop.FileDescriptor.CallBackTypes) {
        let lock = self.lock
        lock.lock()
        let handler = self.handler
        let wrapper = self.wrapper ?? remakeWrapper(ref)
        let hasListeners = !listeners.isEmpty
        lock.unlock()
        handler?(wrapper, types)
        if hasListeners { fireListeners(types) }
    }

    /// A wrapper for a callout after the user dropped theirs. Lock held.
    private func remakeWrapper(_ ref: OpaquePointer) -> RunLoop.FileDescriptor {
        let made = RunLoop.FileDescriptor(retaining: ref, box: self)
        wrapper = made
        return made
    }

    private func fireListeners(_ types: RunLoop.FileDescriptor.CallBackTypes) {
        let listeners = lock.withLock { Array(self.listeners.values) }
        for listener in listeners { listener.fire(types) }
    }

    func addListener(
        _ fire: @escaping @Sendable (RunLoop.FileDescriptor.CallBackTypes) -> Void,
        onEnd end: @escaping @Sendable () -> Void
    ) -> Int? {
        lock.withLock {
            guard handler != nil else { return nil }
            nextListenerID += 1
            listeners[nextListenerID] = (fire, end)
            return nextListenerID
        }
    }

    func removeListener(_ id: Int) {
        _ = lock.withLock { listeners.removeValue(forKey: id) }
    }

    override func dropCallbacks() {
        let lock = self.lock
        lock.lock()
        let handler = self.handler
        self.handler = nil
        let listeners = self.listeners.isEmpty ? [] : Array(self.listeners.values)
        self.listeners.removeAll()
        lock.unlock()
        for listener in listeners { listener.end() }
        _ = handler  // released here, outside the lock
    }
}

private let fileDescriptorTrampoline: RLFileDescriptorCallBack = { ref, types, info in
    let box = Unmanaged<FileDescriptorBox>.fromOpaque(info!).takeUnretainedValue()
    withExtendedLifetime(box) { box.fire(ref!, .init(rawValue: UInt(types))) }
}

extension RunLoop.FileDescriptor: SourceBacked {}

extension RunLoop {
    /// Adds `fileDescriptor` to `mode` of this loop: its callbacks fire when
    /// the loop runs in that mode.
    ///
    /// Like `CFRunLoopAddSource(rl, CFFileDescriptorCreateRunLoopSource(...), mode)`.
    /// The loop keeps the descriptor alive while it is added. From any thread.
    public func add(_ fileDescriptor: RunLoop.FileDescriptor, forMode mode: RunLoop.Mode) {
        addSource(of: fileDescriptor, forMode: mode)
    }

    /// Removes `fileDescriptor` from `mode` of this loop, without invalidating it.
    public func remove(_ fileDescriptor: RunLoop.FileDescriptor, forMode mode: RunLoop.Mode) {
        removeSource(of: fileDescriptor, forMode: mode)
    }

    /// Whether `fileDescriptor` is in `mode` of this loop.
    public func contains(_ fileDescriptor: RunLoop.FileDescriptor, forMode mode: RunLoop.Mode) -> Bool {
        containsSource(of: fileDescriptor, forMode: mode)
    }
}
