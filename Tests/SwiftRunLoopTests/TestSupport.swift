// Helpers shared by the tests: dedicated threads that own their run loops,
// and small thread-safe boxes.
//
// Every test that runs a loop runs it on a thread of its own (not the main
// thread, whose loop also services the main dispatch queue, and not a
// Swift-concurrency thread, which must not block). XCTest's assertions may be
// called from those threads.

import XCTest
import SwiftRunLoop
import class SwiftRunLoop.RunLoop
import class SwiftRunLoop.Timer
#if canImport(Glibc)
import Glibc
#endif

/// Runs `body` on a new thread (with its own, new run loop) and waits for it.
func onThread(_ body: @escaping @Sendable () -> Void) {
    startThread(body)()
}

/// Starts `body` on a new thread and returns a function that waits for it.
func startThread(_ body: @escaping @Sendable () -> Void) -> () -> Void {
    var thread = pthread_t()
    let context = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
    let rc = pthread_create(
        &thread, nil,
        { arg in
            Unmanaged<ThreadBody>.fromOpaque(arg!).takeRetainedValue().body()
            return nil
        }, context)
    precondition(rc == 0)
    return { pthread_join(thread, nil) }
}

private final class ThreadBody {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}

/// A value shared between threads, guarded by a mutex.
/// A source in `mode` of `loop` that counts its performs in `count`.
func addCountingSource(
    to loop: RunLoop, counting count: Shared<Int>,
    forMode mode: RunLoop.Mode = .default
) -> RunLoop.Source {
    let source = RunLoop.Source { count.withLock { $0 += 1 } }
    loop.add(source, forMode: mode)
    return source
}

final class Shared<Value>: @unchecked Sendable {
    private var value: Value
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    init(_ value: Value) {
        self.value = value
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }

    var current: Value { withLock { $0 } }
}

/// Lets a non-Sendable value cross to another thread in a test where the
/// hand-over is ordered by other means (a join, a semaphore).
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// An object whose deallocation a weak reference can observe.
final class Canary: @unchecked Sendable {}

/// Seconds since an arbitrary point, from the monotonic clock.
func monotonicNow() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
