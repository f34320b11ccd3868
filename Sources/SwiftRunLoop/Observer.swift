// RunLoop.Observer: CF's run-loop observer with a closure.

import CRunLoop

extension RunLoop {
    /// A closure called at chosen stages (activities) of a run loop's passes.
    ///
    /// CF's `CFRunLoopObserver` (Foundation on Linux has it only as the
    /// private `RunLoop._Observer`). Add it to the modes to watch with
    /// ``RunLoop/add(_:forMode:)-(RunLoop.Observer,_)``. Observers of the same
    /// activity are called in ascending ``order`` (ties: in the order added).
    /// An observer belongs to at most one run loop. Observers do not keep a
    /// mode from being empty: a run of a mode holding only observers returns
    /// at once, with no callout.
    ///
    /// Invalidating the observer (or, for a non-repeating one, its first
    /// callout) removes it from its loop and releases the handler.
    ///
    /// `Sendable`: its handler is `@Sendable` (it runs on the loop's thread)
    /// and its operations are safe from any thread.
    public final class Observer: Sendable {
        let object: CObject
        let box: HandlerBox<Activity>

        /// Makes an observer that calls `handler` with each of `activities` as
        /// it happens.
        ///
        /// CF's `CFRunLoopObserverCreateWithHandler`.
        ///
        /// - Parameters:
        ///   - activities: The stages to be called for.
        ///   - repeats: `false` makes the observer invalidate itself after its
        ///     first callout.
        ///   - order: Where it is called among the observers of an activity.
        ///   - handler: Called on the run loop's thread with the one activity
        ///     that is happening.
        public init(
            activities: Activity, repeats: Bool = true, order: Int = 0,
            handler: @escaping @Sendable (Activity) -> Void
        ) {
            let box = HandlerBox<Activity>(handler)
            var context = RLRunLoopObserverContext(
                version: 0, info: box.info, retain: callbackBoxRetain,
                release: callbackBoxRelease, copyDescription: nil)
            let ref = withExtendedLifetime(box) {
                RLRunLoopObserverCreate(
                    RLOptionFlags(activities.rawValue), repeats, order, observerTrampoline, &context)
                    ?? outOfResources("RunLoop.Observer")
            }
            self.object = CObject(adopting: ref)
            self.box = box
        }

        /// Removes the observer from its loop and releases its handler.
        ///
        /// CF's `CFRunLoopObserverInvalidate`. Safe from any thread and from
        /// inside the handler (which finishes first). Idempotent.
        public func invalidate() {
            RLRunLoopObserverInvalidate(object.pointer)
            box.dropCallbacks()
        }

        /// Whether the observer can still be called (`false` once invalidated).
        ///
        /// CF's `CFRunLoopObserverIsValid`.
        public var isValid: Bool {
            RLRunLoopObserverIsValid(object.pointer)
        }

        /// The activities the observer is called for.
        ///
        /// CF's `CFRunLoopObserverGetActivities`.
        public var activities: Activity {
            Activity(rawValue: UInt(RLRunLoopObserverGetActivities(object.pointer)))
        }

        /// Whether the observer stays valid after its first callout.
        ///
        /// CF's `CFRunLoopObserverDoesRepeat`.
        public var repeats: Bool {
            RLRunLoopObserverDoesRepeat(object.pointer)
        }

        /// Where the observer is called among the observers of an activity.
        ///
        /// CF's `CFRunLoopObserverGetOrder`.
        public var order: Int {
            RLRunLoopObserverGetOrder(object.pointer)
        }
    }
}

extension RunLoop.Observer: CustomStringConvertible {
    /// The C core's description of the observer (activities, order, validity).
    public var description: String { describe(object.pointer) }
}

private let observerTrampoline: RLRunLoopObserverCallBack = { _, activity, info in
    let box = Unmanaged<HandlerBox<RunLoop.Activity>>.fromOpaque(info!).takeUnretainedValue()
    withExtendedLifetime(box) { box.call(RunLoop.Activity(rawValue: UInt(activity.rawValue))) }
}
