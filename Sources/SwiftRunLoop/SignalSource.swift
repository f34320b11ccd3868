// UNIX signals as run-loop sources (RLSignalSourceCreate, over signalfd).

import CRunLoop

extension RunLoop.Source {
    /// Makes a source that reports the UNIX signal `signal` on the run loops
    /// it is added to, instead of running the signal's disposition.
    ///
    /// A Linux extra, over signalfd (on macOS you would use a
    /// `DispatchSource.makeSignalSource`). Add the source to a mode with
    /// ``RunLoop/add(_:forMode:)-(RunLoop.Source,_)``; the handler then runs on
    /// the loop's thread after the signal arrived, with the number of
    /// instances since its last call (standard signals coalesce while
    /// pending, so a burst may be reported as a smaller count, never as 0).
    /// Every signal source for the same signal, in any loop, sees each arrival.
    ///
    /// While such a source exists the signal is blocked in the thread that
    /// made it, so it stays pending for the source. A process-directed signal
    /// goes to any thread that does not block it: make the first signal
    /// source on the main thread before starting other threads (they inherit
    /// the mask), or block the signal in each thread. When the last source for
    /// the signal is freed (after ``invalidate()`` and removal), pending
    /// instances are discarded and the mask restored.
    ///
    /// - Returns: `nil` for a signal that cannot be caught (`SIGKILL`,
    ///   `SIGSTOP`, out of range, reserved by the C library), or when out of
    ///   descriptors.
    public convenience init?(signal: Int32, order: Int = 0, handler: @escaping @Sendable (_ count: UInt32) -> Void) {
        let box = HandlerBox<UInt32>(handler)
        var context = RLSignalSourceContext(
            version: 0, info: box.info, retain: callbackBoxRetain,
            release: callbackBoxRelease, copyDescription: nil)
        let ref = withExtendedLifetime(box) { RLSignalSourceCreate(signal, order, signalTrampoline, &context) }
        guard let ref else { return nil }
        self.init(adopting: ref, box: box)
    }

    /// The signal a signal source reports; 0 for other sources.
    public var signalNumber: Int32 {
        RLSignalSourceGetSignal(object.pointer)
    }
}

private let signalTrampoline: RLSignalCallBack = { _, count, info in
    let box = Unmanaged<HandlerBox<UInt32>>.fromOpaque(info!).takeUnretainedValue()
    withExtendedLifetime(box) { box.call(count) }
}
