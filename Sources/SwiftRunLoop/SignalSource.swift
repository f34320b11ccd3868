// UNIX signals as run-loop sources (RLSignalSourceCreate: a process-wide
// handler of the C library's forwards each signal to the loops).

import CRunLoop
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension RunLoop.Source {
    /// Makes a source that reports the UNIX signal `signal` on the run loops
    /// it is added to, instead of running the signal's disposition.
    ///
    /// A Linux extra (on macOS you would use a
    /// `DispatchSource.makeSignalSource`). Add the source to a mode with
    /// ``RunLoop/add(_:forMode:)-(RunLoop.Source,_)``; the handler then runs on
    /// the loop's thread after the signal arrived, with the signal's number
    /// and the number of arrivals since its last call. Every signal source
    /// for the same signal, in any loop, counts each arrival exactly once,
    /// from its creation on.
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
    /// Throwing, where the older ``init(signal:order:handler:)`` returns
    /// `nil`: the error says why (see ``RunLoop/ResourceError``).
    ///
    /// ```swift
    /// import SwiftRunLoop
    /// #if canImport(Glibc)
    /// import Glibc
    /// #endif
    ///
    /// let hangUp = try RunLoop.Source(signal: SIGHUP) { signal, count in
    ///     print("signal \(signal) arrived \(count) time(s)")
    /// }
    /// RunLoop.main.add(hangUp, forMode: .common)
    /// ```
    ///
    /// For `async` code, ``RunLoop/signals(_:forMode:)`` offers the same as
    /// an `AsyncStream`.
    ///
    /// - Parameters:
    ///   - signal: The signal to report (`SIGINT`, `SIGTERM`, `SIGHUP`,
    ///     `SIGUSR1`, a real-time signal...).
    ///   - order: Where the source runs among the sources of a pass.
    ///   - onSignal: Called on the loop's thread with `signal` and the
    ///     number of arrivals since its last call (at least 1).
    /// - Throws: ``RunLoop/ResourceError`` with `EINVAL` for a signal that
    ///   cannot be caught (`SIGKILL`, `SIGSTOP`, out of range, reserved by
    ///   the C library); with `EMFILE`, `ENFILE` or `ENOMEM` (or no code
    ///   when the system did not say) when out of descriptors or memory.
    public convenience init(
        signal: Int32, order: Int = 0,
        onSignal: @escaping @Sendable (_ signal: Int32, _ count: UInt32) -> Void
    ) throws(RunLoop.ResourceError) {
        let operation = "RunLoop.Source(signal: \(signal))"
        guard signalCanBeCaught(signal) else { throw RunLoop.ResourceError(operation: operation, code: EINVAL) }
        let box = HandlerBox<UInt32>({ count in onSignal(signal, count) })
        let ref = try makeOrThrow(operation) { makeSignalSource(signal, order: order, box: box) }
        self.init(adopting: ref, box: box)
    }

    /// Makes a source that reports the UNIX signal `signal`, calling
    /// `handler` with the number of arrivals only.
    ///
    /// Kept for existing code: ``init(signal:order:onSignal:)`` does the
    /// same, gives the handler the signal's number too, and throws an error
    /// that says why it failed where this returns `nil`.
    ///
    /// - Returns: `nil` for a signal that cannot be caught (`SIGKILL`,
    ///   `SIGSTOP`, out of range, reserved by the C library), or when out of
    ///   descriptors or memory.
    @available(
        *, deprecated, message: "use init(signal:order:onSignal:), which passes the signal number and throws the reason"
    )
    public convenience init?(signal: Int32, order: Int = 0, handler: @escaping @Sendable (_ count: UInt32) -> Void) {
        let box = HandlerBox<UInt32>(handler)
        guard let ref = makeSignalSource(signal, order: order, box: box) else { return nil }
        self.init(adopting: ref, box: box)
    }

    /// The signal a signal source reports; 0 for other sources.
    public var signalNumber: Int32 {
        RLSignalSourceGetSignal(object.pointer)
    }
}

/// Whether `signal` is one a handler can be installed for: asking for its
/// disposition fails for numbers out of range and for those the C library
/// keeps for itself; `SIGKILL` and `SIGSTOP` answer but can never be caught.
private func signalCanBeCaught(_ signal: Int32) -> Bool {
    guard signal > 0, signal != SIGKILL, signal != SIGSTOP else { return false }
    var current = sigaction()
    return sigaction(signal, nil, &current) == 0
}

private func makeSignalSource(_ signal: Int32, order: Int, box: HandlerBox<UInt32>) -> OpaquePointer? {
    var context = RLSignalSourceContext(
        version: 0, info: box.info, retain: callbackBoxRetain,
        release: callbackBoxRelease, copyDescription: nil)
    return withExtendedLifetime(box) { RLSignalSourceCreate(signal, order, signalTrampoline, &context) }
}

private let signalTrampoline: RLSignalCallBack = { _, count, info in
    let box = Unmanaged<HandlerBox<UInt32>>.fromOpaque(info!).takeUnretainedValue()
    withExtendedLifetime(box) { box.call(count) }
}

extension RunLoop {
    /// The arrivals of the given UNIX signals, as a stream for `async` code:
    /// one element, the signal's number, per arrival.
    ///
    /// ```swift
    /// import SwiftRunLoop
    /// #if canImport(Glibc)
    /// import Glibc
    /// #endif
    ///
    /// for await signal in try RunLoop.main.signals(SIGINT, SIGTERM) {
    ///     print("signal \(signal): stopping")
    ///     break
    /// }
    /// ```
    ///
    /// The stream is fed by a signal source per signal (see
    /// ``RunLoop/Source/init(signal:order:onSignal:)`` for how they hear the
    /// signals whatever threads exist), made and added to `mode` of this
    /// loop by this call: from then on the signals no longer run their
    /// disposition (a `SIGTERM` does not end the process), even before the
    /// iteration starts; arrivals are buffered until read. A source's count
    /// is expanded: a count of 2 gives two elements. (The kernel merges
    /// instances of a standard signal sent while one is pending, so a burst
    /// may give fewer elements than signals sent, never none.)
    ///
    /// This loop must run in `mode` for anything to arrive: the main loop
    /// does under ``RunLoopMain`` and ``RunLoop/runMain(_:)``, a
    /// ``RunLoopThread``'s loop always does; another thread's loop only
    /// while that thread runs it. The sources live while the stream does:
    /// when the iteration ends (a `break`, the task cancelled) or the stream
    /// and its iterators are dropped, they are invalidated, and the program's
    /// own disposition of each signal comes back once no other source for it
    /// exists. The stream never finishes by itself.
    ///
    /// - Parameters:
    ///   - signals: The signals to report; one repeated counts once.
    ///   - mode: The mode of this loop the sources are added to; by default
    ///     the common modes.
    /// - Throws: ``RunLoop/ResourceError`` when a signal cannot be caught or
    ///   a source cannot be made (see
    ///   ``RunLoop/Source/init(signal:order:onSignal:)``); no source is left
    ///   behind then.
    public func signals(_ signals: Int32..., forMode mode: Mode = .common) throws(ResourceError) -> AsyncStream<Int32> {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self, bufferingPolicy: .unbounded)
        let sources = try Self.signalSources(for: signals) { signal, count in
            for _ in 0..<count { continuation.yield(signal) }
        }
        continuation.onTermination = { _ in
            for source in sources { source.invalidate() }
        }
        for source in sources { add(source, forMode: mode) }
        return stream
    }

    /// One source per distinct signal, in the order given; if one cannot be
    /// made, those made already are invalidated and the error thrown.
    private static func signalSources(
        for signals: [Int32], onSignal: @escaping @Sendable (Int32, UInt32) -> Void
    ) throws(ResourceError) -> [Source] {
        var sources: [Source] = []
        var seen = Set<Int32>()
        do throws(ResourceError) {
            for signal in signals where seen.insert(signal).inserted {
                sources.append(try Source(signal: signal, onSignal: onSignal))
            }
        } catch {
            for source in sources { source.invalidate() }
            throw error
        }
        return sources
    }
}
