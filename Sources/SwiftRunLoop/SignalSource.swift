// UNIX signals as run-loop sources (RLSignalSourceCreate: a process-wide
// handler of the C library's forwards each signal to the loops).

import CRunLoop

extension RunLoop.Source {
    /// Makes a source that reports the UNIX signal `signal` on the run loops
    /// it is added to, instead of running the signal's disposition.
    ///
    /// A Linux extra (on macOS you would use a
    /// `DispatchSource.makeSignalSource`). Add the source to a mode with
    /// ``RunLoop/add(_:forMode:)-(RunLoop.Source,_)``; the handler then runs on
    /// the loop's thread after the signal arrived, with the number of
    /// arrivals since its last call. Every signal source for the same signal,
    /// in any loop, counts each arrival exactly once, from its creation on.
    /// The kernel merges instances of a standard signal sent while one is
    /// still pending, so a burst of them may be reported as a smaller count,
    /// never as 0; real-time signals are counted one by one.
    ///
    /// It works whatever threads exist: while a source for the signal
    /// exists, a handler of the library's is the signal's disposition, in
    /// whichever thread the kernel delivers it to (made before or after the
    /// source, a ``RunLoopThread``, Dispatch's or Swift concurrency's
    /// threads), and no thread's signal mask is changed. So a `SIGINT` or
    /// `SIGTERM` source made at any time keeps the process alive and tells
    /// the loop instead.
    ///
    /// Other handling of the signal:
    /// - The disposition the program had set (a handler, `SIG_IGN`,
    ///   `SIG_DFL`) comes back when the last source for the signal is freed
    ///   (after ``invalidate()`` and removal); meanwhile that handler is not
    ///   called.
    /// - A handler the program installs while sources exist replaces the
    ///   library's: the sources hear nothing more, and it stays when the last
    ///   source goes.
    /// - A signal blocked in every thread (taken with `sigwait`, say) stays
    ///   pending and is reported only once a thread unblocks it; one sent to
    ///   a single thread that blocks it (`raise`, `pthread_kill`) stays
    ///   pending there. Dispatch's worker threads, and the threads they
    ///   start, block most signals.
    /// - The handler interrupts the thread it runs in, as any handler does:
    ///   a blocking call there that the kernel cannot restart returns
    ///   `EINTR`.
    /// - A fault (`SIGSEGV`, `SIGBUS`, `SIGFPE`, `SIGILL`, `SIGTRAP` raised by
    ///   the CPU) is not reported: it meets the previous disposition, so the
    ///   process dies as it would without a source.
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
