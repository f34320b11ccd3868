// RunLoop.Source: CF's version-0 run-loop source with a closure.

import CRunLoop

extension RunLoop {
    /// A source of events that you signal by hand, performed by the run loops
    /// it is added to.
    ///
    /// CF's version-0 `CFRunLoopSource` (Foundation on Linux has it only as
    /// the private `RunLoop._Source`). The usual pattern: another thread (or a
    /// callout) records some work, calls ``signal()``, then wakes the loop with
    /// ``RunLoop/wakeUp()``; the loop calls `perform` on its thread at its next
    /// pass in a mode the source was added to. Signals coalesce: signalling
    /// twice before the loop gets to the source performs it once. The signal
    /// is cleared just before `perform` runs, so signalling from inside
    /// `perform` makes the source perform again.
    ///
    /// ``RunLoop/run(mode:before:)`` returns after one source was performed;
    /// signalled sources run in ascending ``order``.
    ///
    /// Invalidate a source when you are done with it: that removes it from
    /// every loop and releases `perform` (and what it captured). A source
    /// that is merely no longer referenced stays in the loops it was added to.
    /// The type is `Sendable`: its closure is `@Sendable` (a source may be
    /// added to loops of several threads), and its operations are safe from
    /// any thread. To hand out the right to signal only, pass its
    /// ``signaller``.
    public final class Source: Sendable {
        /// The C source (one reference owned).
        let object: CObject
        /// The closure's box (nil for sources of descriptors and ports, whose
        /// objects hold their own).
        let box: CallbackBox?

        /// Wraps a C source the caller owns one reference to.
        init(adopting ref: OpaquePointer, box: CallbackBox?) {
            self.object = CObject(adopting: ref)
            self.box = box
        }

        /// Makes a version-0 source that calls `perform` when signalled.
        ///
        /// CF's `CFRunLoopSourceCreate` with a version-0 context.
        ///
        /// - Parameters:
        ///   - order: Where the source runs among the signalled sources of a
        ///     pass (ascending; ties by signal time).
        ///   - perform: Called on the run loop's thread, once per signal that
        ///     the loop handles.
        public init(order: Int = 0, perform: @escaping @Sendable () -> Void) {
            let box = HandlerBox<Void>({ _ in perform() })
            var context = RLRunLoopSourceContext(
                version: 0, info: box.info, retain: callbackBoxRetain, release: callbackBoxRelease,
                copyDescription: nil, equal: nil, hash: nil, schedule: nil, cancel: nil,
                perform: sourceTrampoline)
            let ref = withExtendedLifetime(box) {
                RLRunLoopSourceCreate(order, &context) ?? outOfResources("RunLoop.Source")
            }
            self.object = CObject(adopting: ref)
            self.box = box
        }

        /// Marks the source ready to perform; it does not wake the loop.
        ///
        /// CF's `CFRunLoopSourceSignal`. Call ``RunLoop/wakeUp()`` after it when
        /// the loop may be sleeping. From any thread; ignored once invalidated.
        public func signal() {
            RLRunLoopSourceSignal(object.pointer)
        }

        /// Removes the source from every mode of every loop and releases its
        /// closure; it never performs again.
        ///
        /// CF's `CFRunLoopSourceInvalidate`. Safe from any thread and from
        /// inside `perform` (which finishes first). Idempotent.
        public func invalidate() {
            RLRunLoopSourceInvalidate(object.pointer)
            box?.dropCallbacks()
        }

        /// Whether the source can still perform (`false` once invalidated).
        ///
        /// CF's `CFRunLoopSourceIsValid`.
        public var isValid: Bool {
            RLRunLoopSourceIsValid(object.pointer)
        }

        /// The source's order among the signalled sources of a pass.
        ///
        /// CF's `CFRunLoopSourceGetOrder`.
        public var order: Int {
            RLRunLoopSourceGetOrder(object.pointer)
        }

        /// A `Sendable` handle that signals this source from any thread.
        ///
        /// It keeps the C source alive, not the closure; signalling after
        /// invalidation does nothing.
        public var signaller: Signaller {
            Signaller(object: object)
        }

        /// A `Sendable` handle that signals a ``RunLoop/Source`` from any
        /// thread, without giving access to its closure.
        ///
        /// (No CF equivalent: in C you pass the `CFRunLoopSourceRef` itself.)
        public struct Signaller: Sendable {
            let object: CObject

            /// Marks the source ready to perform (``RunLoop/Source/signal()``).
            public func signal() {
                RLRunLoopSourceSignal(object.pointer)
            }

            /// Marks the source ready to perform and wakes `runLoop` so it
            /// performs it promptly.
            public func signal(andWakeUp runLoop: RunLoop) {
                RLRunLoopSourceSignal(object.pointer)
                runLoop.wakeUp()
            }
        }
    }
}

extension RunLoop.Source: CustomStringConvertible {
    /// The C core's description of the source (order, validity, signal state).
    public var description: String { describe(object.pointer) }
}

private let sourceTrampoline: @convention(c) (UnsafeMutableRawPointer?) -> Void = { info in
    let box = Unmanaged<HandlerBox<Void>>.fromOpaque(info!).takeUnretainedValue()
    withExtendedLifetime(box) { box.call(()) }
}
