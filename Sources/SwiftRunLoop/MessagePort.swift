// MessagePort: a thread message port (RLMessagePort), in the spirit of
// NSPort/NSMachPort/NSMessagePort.

import CRunLoop
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A queue of messages that any thread sends to and whose handler runs, in
/// the order they were sent, on the thread of the run loop that services it.
///
/// A Linux extra in the spirit of Foundation's `Port`/`NSMachPort` (and
/// macOS's local `NSMessagePort`): the port is a version-1 source, so it
/// wakes a sleeping loop, fires only in the modes it is scheduled in, and
/// makes ``RunLoop/run(mode:before:)`` return after a delivery. Delivery is
/// batched (at most 64 messages per perform) so a busy port cannot starve the
/// loop. Senders never block: when the queue is full, ``send(id:data:)``
/// throws ``SendError/full`` and the message is not queued.
///
/// Add the port to a loop with ``RunLoop/add(_:forMode:)-(MessagePort,_)`` (or
/// Foundation's ``schedule(in:forMode:)``). A scheduled port is kept
/// alive by its loop until ``invalidate()``; invalidate it when done (which
/// drops queued messages and releases the handler). The type is `Sendable`:
/// its handler is `@Sendable` and its operations are safe from any thread. To
/// hand out the right to send only, pass its ``sender``.
public final class MessagePort: Sendable {
    /// One message: an application-defined id and a copy of some bytes.
    public struct Message: Sendable, Hashable {
        /// The id given to ``MessagePort/send(id:data:)``.
        public var id: Int32
        /// The bytes sent (a copy).
        public var data: Data

        /// Makes a message.
        public init(id: Int32, data: Data = Data()) {
            self.id = id
            self.data = data
        }
    }

    /// Why ``MessagePort/send(id:data:)`` failed.
    public enum SendError: Error, Sendable, Hashable {
        /// The port was invalidated.
        case invalidated
        /// The queue holds ``MessagePort/capacity`` messages; nothing was queued.
        case full
        /// The message exceeds the 64 MiB limit.
        case tooLarge
        /// Out of memory.
        case outOfMemory
    }

    /// A `Sendable` handle that sends to a ``MessagePort`` from any thread.
    public struct Sender: Sendable {
        let object: CObject

        /// Queues a message for the port (see ``MessagePort/send(id:data:)``).
        public func send(id: Int32, data: Data = Data()) throws(SendError) {
            try MessagePort.send(object.pointer, id: id, data: data)
        }
    }

    let object: CObject
    let box: HandlerBox<Message>

    /// Makes a port whose queue holds up to `queueLimit` messages,
    /// delivering each to `handler` on the servicing loop's thread, or
    /// throws why it cannot.
    ///
    /// ```swift
    /// import SwiftRunLoop
    ///
    /// let port = try MessagePort(queueLimit: 256) { message in
    ///     print("message \(message.id): \(message.data.count) bytes")
    /// }
    /// RunLoop.main.add(port, forMode: .default)
    /// try port.send(id: 1)
    /// ```
    ///
    /// - Parameters:
    ///   - queueLimit: The queue's bound; 0 means 1024, values above 2^20
    ///     are clamped.
    ///   - handler: Called with each message, in the order sent, on the
    ///     thread of the loop that services the port.
    /// - Throws: ``RunLoop/ResourceError`` with `EINVAL` for a negative
    ///   limit; with `ENOMEM`, `EMFILE` or `ENFILE` (or no code when the
    ///   system did not say) when out of memory or descriptors.
    public convenience init(
        queueLimit: Int, handler: @escaping @Sendable (Message) -> Void
    ) throws(RunLoop.ResourceError) {
        let operation = "MessagePort(queueLimit: \(queueLimit))"
        guard queueLimit >= 0 else { throw RunLoop.ResourceError(operation: operation, code: EINVAL) }
        let box = HandlerBox<Message>(handler)
        let ref = try makeOrThrow(operation) { Self.makePort(capacity: queueLimit, box: box) }
        self.init(adopting: ref, box: box)
    }

    /// Makes a port whose queue holds up to `capacity` messages, delivering
    /// each to `handler` on the servicing loop's thread.
    ///
    /// ``init(queueLimit:handler:)`` does the same and throws an error that
    /// says why it failed.
    ///
    /// - Parameters:
    ///   - capacity: The queue's bound; 0 means 1024, values above 2^20 are
    ///     clamped.
    ///   - handler: Called with each message, in the order sent, on the
    ///     thread of the loop that services the port.
    /// - Returns: `nil` for a negative capacity or when out of resources.
    public convenience init?(capacity: Int = 0, handler: @escaping @Sendable (Message) -> Void) {
        let box = HandlerBox<Message>(handler)
        guard let ref = Self.makePort(capacity: capacity, box: box) else { return nil }
        self.init(adopting: ref, box: box)
    }

    private init(adopting ref: OpaquePointer, box: HandlerBox<Message>) {
        self.object = CObject(adopting: ref)
        self.box = box
    }

    private static func makePort(capacity: Int, box: HandlerBox<Message>) -> OpaquePointer? {
        var context = RLMessagePortContext(
            version: 0, info: box.info, retain: callbackBoxRetain,
            release: callbackBoxRelease, copyDescription: nil)
        return withExtendedLifetime(box) { RLMessagePortCreate(messagePortTrampoline, &context, capacity) }
    }

    /// Queues a copy of `data` with `id`, from any thread (including the
    /// port's own handler).
    ///
    /// - Throws: ``SendError`` when the port is invalidated, full, or the
    ///   message is too large.
    public func send(id: Int32, data: Data = Data()) throws(SendError) {
        try MessagePort.send(object.pointer, id: id, data: data)
    }

    /// A handle for sending from other threads.
    public var sender: Sender { Sender(object: object) }

    /// Adds the port to `mode` of `runLoop`, which then delivers its messages.
    ///
    /// Foundation's `Port.schedule(in:forMode:)`; the same as
    /// ``RunLoop/add(_:forMode:)-(MessagePort,_)``.
    public func schedule(in runLoop: RunLoop, forMode mode: RunLoop.Mode) {
        runLoop.add(self, forMode: mode)
    }

    /// Removes the port from `mode` of `runLoop`, without invalidating it.
    ///
    /// Foundation's `Port.remove(from:forMode:)`; the same as
    /// ``RunLoop/remove(_:forMode:)-(MessagePort,_)``.
    public func remove(from runLoop: RunLoop, forMode mode: RunLoop.Mode) {
        runLoop.remove(self, forMode: mode)
    }

    /// Closes the port: later sends fail, queued messages are dropped, the
    /// port leaves every loop and its handler is released.
    ///
    /// Foundation's `Port.invalidate()`. Idempotent; safe in the handler.
    public func invalidate() {
        RLMessagePortInvalidate(object.pointer)
    }

    /// Whether the port still accepts messages (`false` once invalidated).
    ///
    /// Foundation's `Port.isValid`.
    public var isValid: Bool {
        RLMessagePortIsValid(object.pointer)
    }

    /// The number of messages queued and not yet delivered.
    public var queuedCount: Int {
        RLMessagePortGetQueuedCount(object.pointer)
    }

    /// The queue's bound, after defaulting and clamping.
    public var capacity: Int {
        RLMessagePortGetCapacity(object.pointer)
    }

    /// The port's run-loop source (the C object makes it once and keeps it).
    func runLoopSource() -> CObject? {
        RLMessagePortCreateRunLoopSource(object.pointer, 0).map { CObject(adopting: $0) }
    }

    private static func send(_ port: OpaquePointer, id: Int32, data: Data) throws(SendError) {
        let rc = data.withUnsafeBytes { RLMessagePortSend(port, id, $0.baseAddress, $0.count) }
        switch -rc {
        case 0: return
        case EPIPE, EINVAL: throw .invalidated
        case EAGAIN: throw .full
        case EMSGSIZE: throw .tooLarge
        default: throw .outOfMemory
        }
    }
}

extension MessagePort: CustomStringConvertible {
    /// The C core's description (validity, queued messages, capacity).
    public var description: String { describe(object.pointer) }
}

private let messagePortTrampoline: RLMessagePortCallBack = { _, id, bytes, count, info in
    let box = Unmanaged<HandlerBox<MessagePort.Message>>.fromOpaque(info!).takeUnretainedValue()
    let data = bytes.map { Data(bytes: $0, count: count) } ?? Data()
    withExtendedLifetime(box) { box.call(MessagePort.Message(id: id, data: data)) }
}

extension MessagePort: SourceBacked {}

extension RunLoop {
    /// Adds `port` to `mode` of this loop, which then delivers its messages.
    ///
    /// Foundation's `RunLoop.add(_:forMode:)` for a `Port`. The loop keeps the
    /// port alive while it is added. From any thread.
    public func add(_ port: MessagePort, forMode mode: RunLoop.Mode) {
        addSource(of: port, forMode: mode)
    }

    /// Removes `port` from `mode` of this loop, without invalidating it.
    ///
    /// Foundation's `RunLoop.remove(_:forMode:)` for a `Port`.
    public func remove(_ port: MessagePort, forMode mode: RunLoop.Mode) {
        removeSource(of: port, forMode: mode)
    }

    /// Whether `port` is in `mode` of this loop.
    public func contains(_ port: MessagePort, forMode mode: RunLoop.Mode) -> Bool {
        containsSource(of: port, forMode: mode)
    }
}
