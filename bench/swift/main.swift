// The workloads W1-W7 and W10 on a Swift RunLoop: Foundation's (swift-corelibs-foundation,
// built with `swiftc -O`) or ours (SwiftRunLoop, built with -D OURS in a package
// of its own). Each run prints one "RESULT wN key=value ..." line, like the C programs.
//
// Foundation on Linux has no public wake-up call, so cross-thread work is
// RunLoop.perform + CoreFoundation's CFRunLoopWakeUp (see notes/peer-baselines.md),
// and stop is CFRunLoopStop. Ours uses RunLoop.wakeUp() and RunLoop.stop().

import BenchLib
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
#if OURS
import FoundationEssentials
import SwiftRunLoop
#else
import Foundation
import CoreFoundation
#endif

// MARK: - the loop handle: what differs between Foundation and ours

struct Loop: @unchecked Sendable {
    let rl: RunLoop
    #if !OURS
    let cf: CFRunLoop
    #endif

    static var current: Loop {
        #if OURS
        return Loop(rl: RunLoop.current)
        #else
        return Loop(rl: RunLoop.current, cf: CFRunLoopGetCurrent())
        #endif
    }

    func wake() {
        #if OURS
        rl.wakeUp()
        #else
        CFRunLoopWakeUp(cf)
        #endif
    }

    func stop() {
        #if OURS
        rl.stop()
        #else
        CFRunLoopStop(cf)
        #endif
    }

    /// Queues `block` for the loop's default mode and wakes it (our
    /// `perform` wakes the loop itself; Foundation's does not).
    func send(_ block: @escaping () -> Void) {
        rl.perform(block)
        #if !OURS
        wake()
        #endif
    }

    /// Runs the loop in the default mode until stopped (or `seconds` pass).
    func runOnce(_ seconds: Double = 10) {
        _ = rl.run(mode: .default, before: Date(timeIntervalSinceNow: seconds))
    }

    /// A far-future timer so the default mode is never empty.
    @discardableResult
    func keepAlive() -> Timer {
        let t = Timer(fire: Date(timeIntervalSinceNow: 1_000_000), interval: 0, repeats: false) { _ in }
        rl.add(t, forMode: .default)
        return t
    }
}

// MARK: - helpers

final class Box: @unchecked Sendable { let body: () -> Void; init(_ b: @escaping () -> Void) { body = b } }

func startThread(_ body: @escaping () -> Void) -> pthread_t {
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    var t = pthread_t()
    pthread_create(
        &t, nil,
        { p in
            Unmanaged<Box>.fromOpaque(p!).takeRetainedValue().body()
            return nil
        }, box)
    return t
}

func now() -> UInt64 { bl_now_ns() }

nonisolated(unsafe) var results: [(String, Double)] = []
func result(_ k: String, _ v: Double) { results.append((k, v)) }
func emit(_ w: String) {
    bl_result_begin(w)
    for (k, v) in results { bl_result(k, v) }
    bl_result_end()
    results = []
}

func percentile(_ a: [Double], _ p: Double) -> Double {
    var a = a
    return a.withUnsafeMutableBufferPointer { bl_percentile($0.baseAddress, $0.count, p) }
}
func mean(_ a: [Double]) -> Double { a.isEmpty ? .nan : a.reduce(0, +) / Double(a.count) }

/// A second thread running its own loop until `stop`.
final class PeerThread: @unchecked Sendable {
    var loop: Loop!
    let ready = Atomic<Int>(0)
    let stopFlag = Atomic<Int>(0)
    var sc: Int64 = -1
    var thread = pthread_t()

    init(setup: @escaping (Loop) -> Void = { _ in }) {
        thread = startThread { [self] in
            let l = Loop.current
            l.keepAlive()
            setup(l)
            loop = l
            let fd = bl_sc_open()
            let s0 = bl_sc_read(fd)
            ready.store(1, ordering: .sequentiallyConsistent)
            while stopFlag.load(ordering: .sequentiallyConsistent) == 0 { l.runOnce(1) }
            let s1 = bl_sc_read(fd)
            sc = (s0 >= 0 && s1 >= 0) ? s1 - s0 : -1
            bl_sc_close(fd)
        }
        while ready.load(ordering: .sequentiallyConsistent) == 0 { bl_spin_pause() }
    }

    func stop() {
        stopFlag.store(1, ordering: .sequentiallyConsistent)
        loop.stop()
        loop.wake()
        pthread_join(thread, nil)
    }
}

// MARK: - W1 cross-thread wake-up ping-pong

nonisolated(unsafe) var w1A: Loop!
nonisolated(unsafe) var w1B: PeerThread!
nonisolated(unsafe) var w1N = 0
nonisolated(unsafe) var w1I = 0
nonisolated(unsafe) var w1Rtt: [Double] = []
nonisolated(unsafe) var w1Send: UInt64 = 0

func w1OnB() { w1A.send(w1OnA) }
func w1OnA() {
    let t = now()
    w1Rtt.append(Double(t - w1Send) / 1e3)
    w1I += 1
    if w1I == w1N { w1A.stop(); return }
    w1Send = now()
    w1B.loop.send(w1OnB)
}

func runW1(_ arg: Double) {
    w1N = Int(arg)
    w1Rtt.reserveCapacity(w1N)
    w1A = Loop.current
    w1A.keepAlive()
    w1B = PeerThread()
    let fd = bl_sc_open()
    let s0 = bl_sc_read(fd)
    let m0 = bl_mallocs()
    let u0 = bl_usage_now(false)
    let t0 = now()
    w1Send = t0
    w1B.loop.send(w1OnB)
    while w1I < w1N { w1A.runOnce() }
    let t1 = now()
    let u1 = bl_usage_now(false)
    let m1 = bl_mallocs()
    let s1 = bl_sc_read(fd)
    w1B.stop()
    bl_sc_close(fd)
    let n = Double(w1N)
    result("rt", n)
    result("rt_per_s", n / (Double(t1 - t0) / 1e9))
    result("rtt_p99_us", percentile(w1Rtt, 99))
    result("rtt_med_us", percentile(w1Rtt, 50))
    result("cpu_us_per_rt", (u1.cpu_us - u0.cpu_us) / n)
    result("csw_per_rt", Double(u1.vcsw - u0.vcsw + u1.ivcsw - u0.ivcsw) / n)
    if s0 >= 0 && w1B.sc >= 0 { result("sc_per_rt", Double(s1 - s0 + w1B.sc) / n) }
    if m0 >= 0 { result("mallocs_per_rt", Double(m1 - m0) / n) }
    emit("w1")
}

// MARK: - W2 N one-shot timers spread over 1 s

nonisolated(unsafe) var w2Fired = 0
nonisolated(unsafe) var w2Last: UInt64 = 0

func runW2(_ arg: Double) {
    let n = Int(arg)
    var late = [Double](repeating: 0, count: n)
    let loop = Loop.current
    let u0 = bl_usage_now(false)
    let m0 = bl_mallocs()
    let t0 = now()
    let abs0 = Date().timeIntervalSinceReferenceDate
    late.withUnsafeMutableBufferPointer { lateBuf in
        let lp = lateBuf.baseAddress!
        for i in 0..<n {
            let off = bl_spread(i)
            let t = Timer(fire: Date(timeIntervalSinceReferenceDate: abs0 + off), interval: 0, repeats: false) { _ in
                let tn = now()
                lp[i] = (Double(tn) - (Double(t0) + off * 1e9)) / 1e3
                w2Last = tn
                w2Fired += 1
                if w2Fired == n { loop.stop() }
            }
            loop.rl.add(t, forMode: .default)
        }
        let tAdded = now()
        let m1 = bl_mallocs()
        let deadline = t0 + 300_000_000_000
        while w2Fired < n && now() < deadline { loop.runOnce(1) }
        let u1 = bl_usage_now(false)
        result("n", Double(n))
        result("add_ns", Double(tAdded - t0) / Double(n))
        result("fired", Double(w2Fired))
        result("all_fired_s", Double(w2Last - t0) / 1e9)
        result("cpu_ms", (u1.cpu_us - u0.cpu_us) / 1e3)
        if m0 >= 0 { result("mallocs_per_add", Double(m1 - m0) / Double(n)) }
    }
    result("late_mean_us", mean(Array(late.prefix(w2Fired))))
    result("late_p99_us", percentile(late, 99))
    emit("w2")
}

// MARK: - W3 one 1 ms repeating timer

func runW3(_ secs: Double) {
    var jit: [Double] = []
    jit.reserveCapacity(Int(secs * 2000) + 16)
    let loop = Loop.current
    let u0 = bl_usage_now(false)
    let t0 = now()
    let first = t0 + 1_000_000
    let timer = Timer(fire: Date(timeIntervalSinceNow: 0.001), interval: 0.001, repeats: true) { _ in
        let since = Double(now()) - Double(first)
        jit.append((since - (since / 1e6).rounded(.down) * 1e6) / 1e3)
    }
    loop.rl.add(timer, forMode: .default)
    let end = Date(timeIntervalSinceNow: secs)
    while Date() < end { loop.runOnce(end.timeIntervalSinceNow) }
    let t1 = now()
    let u1 = bl_usage_now(false)
    timer.invalidate()
    result("fires", Double(jit.count))
    result("expected", (Double(t1 - first) / 1e6).rounded(.down) + 1)
    result("jit_mean_us", mean(jit))
    result("jit_p99_us", percentile(jit, 99))
    result("cpu_pct", (u1.cpu_us - u0.cpu_us) / (Double(t1 - t0) / 1e3) * 100)
    emit("w3")
}

// MARK: - W4 same-thread perform

nonisolated(unsafe) var w4Done = 0

func runW4(_ arg: Double) {
    let n = Int(arg)
    let loop = Loop.current
    loop.keepAlive()
    let m0 = bl_mallocs()
    let t0 = now()
    for _ in 0..<n {
        loop.rl.perform {
            w4Done += 1
            if w4Done == n { loop.stop() }
        }
    }
    let t1 = now()
    loop.wake()
    while w4Done < n { loop.runOnce() }
    let t2 = now()
    let m1 = bl_mallocs()
    result("n", Double(n))
    result("blocks_per_s", Double(n) / (Double(t2 - t0) / 1e9))
    result("enqueue_ns", Double(t1 - t0) / Double(n))
    result("drain_ns", Double(t2 - t1) / Double(n))
    if m0 >= 0 { result("mallocs_per_block", Double(m1 - m0) / Double(n)) }
    emit("w4")
}

// MARK: - W5 socketpair ping-pong (Foundation: CFSocket; ours: RunLoop.FileDescriptor)

nonisolated(unsafe) var w5Sv: [Int32] = [0, 0]
nonisolated(unsafe) var w5N = 0
nonisolated(unsafe) var w5I = 0
nonisolated(unsafe) var w5Rtt: [Double] = []
nonisolated(unsafe) var w5Send: UInt64 = 0
nonisolated(unsafe) var w5A: Loop!

#if OURS
/// Keeps the descriptors' wrappers alive for the whole run.
nonisolated(unsafe) var w5Watchers: [RunLoop.FileDescriptor] = []
let w5WatchersLock = Mutex(())

/// Calls `onReadable` on `loop`'s thread each time `fd` becomes readable.
func addSocket(_ fd: Int32, _ loop: Loop, _ onReadable: @escaping () -> Void) {
    guard
        let f = RunLoop.FileDescriptor(
            fileDescriptor: fd,
            handler: { f, _ in
                onReadable()
                f.enableCallBacks(.read)
            })
    else { fatalError("RunLoop.FileDescriptor") }
    f.enableCallBacks(.read)
    f.schedule(in: loop.rl, forMode: .default)
    w5WatchersLock.withLock { _ in w5Watchers.append(f) }
}
#else
/// Calls `cb` (a CFSocket read callback) each time `fd` becomes readable.
func addSocket(_ fd: Int32, _ loop: Loop, _ cb: CFSocketCallBack) {
    var ctx = CFSocketContext(version: 0, info: nil, retain: nil, release: nil, copyDescription: nil)
    let s = CFSocketCreateWithNative(nil, fd, CFSocketCallBackType.readCallBack.rawValue, cb, &ctx)
    let src = CFSocketCreateRunLoopSource(nil, s, 0)
    CFRunLoopAddSource(loop.cf, src, kCFRunLoopDefaultMode)
}
#endif

/// Reads into a 64-byte stack buffer (as the C peers do: no allocation).
func w5Read(_ fd: Int32) -> Int {
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { read(fd, $0.baseAddress, 64) }
}

/// The two ends' handlers, shared by both implementations.

func w5PingerReadable() {
    let r = w5Read(w5Sv[0])
    if r <= 0 { return }
    w5Rtt.append(Double(now() - w5Send) / 1e3)
    w5I += 1
    if w5I >= w5N { w5A.stop(); return }
    w5Send = now()
    var x: UInt8 = 120
    _ = write(w5Sv[0], &x, 1)
}

func w5EchoReadable() {
    let r = w5Read(w5Sv[1])
    var x: UInt8 = 120
    if r > 0 { for _ in 0..<r { _ = write(w5Sv[1], &x, 1) } }
}

func runW5(_ arg: Double) {
    w5N = Int(arg)
    w5Rtt.reserveCapacity(w5N)
    var sv: [Int32] = [0, 0]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &sv) == 0 else { fatalError("socketpair") }
    w5Sv = sv
    w5A = Loop.current
    w5A.keepAlive()
    #if OURS
    addSocket(sv[0], w5A) { w5PingerReadable() }
    let b = PeerThread { l in addSocket(w5Sv[1], l) { w5EchoReadable() } }
    #else
    addSocket(sv[0], w5A) { _, _, _, _, _ in w5PingerReadable() }
    let b = PeerThread { l in addSocket(w5Sv[1], l) { _, _, _, _, _ in w5EchoReadable() } }
    #endif
    let fd = bl_sc_open()
    let s0 = bl_sc_read(fd)
    let m0 = bl_mallocs()
    let t0 = now()
    w5Send = t0
    var x: UInt8 = 120
    _ = write(sv[0], &x, 1)
    while w5I < w5N { w5A.runOnce() }
    let t1 = now()
    let m1 = bl_mallocs()
    let s1 = bl_sc_read(fd)
    b.stop()
    bl_sc_close(fd)
    result("rt_per_s", Double(w5N) / (Double(t1 - t0) / 1e9))
    result("rtt_med_us", percentile(w5Rtt, 50))
    result("rtt_p99_us", percentile(w5Rtt, 99))
    if s0 >= 0 && b.sc >= 0 { result("sc_per_rt", Double(s1 - s0 + b.sc) / Double(w5N)) }
    if m0 >= 0 { result("mallocs_per_rt", Double(m1 - m0) / Double(w5N)) }
    emit("w5")
}

// MARK: - W6 idle loop

func runW6(_ secs: Double) {
    let loop = Loop.current
    loop.keepAlive()
    let fd = bl_sc_open()
    let s0 = bl_sc_read(fd)
    let u0 = bl_usage_now(false)
    let end = Date(timeIntervalSinceNow: secs)
    while Date() < end { loop.runOnce(end.timeIntervalSinceNow) }
    let u1 = bl_usage_now(false)
    let s1 = bl_sc_read(fd)
    result("cpu_us", u1.cpu_us - u0.cpu_us)
    result("vcsw", Double(u1.vcsw - u0.vcsw))
    result("ivcsw", Double(u1.ivcsw - u0.ivcsw))
    result("threads", Double(bl_threads()))
    if s0 >= 0 { result("syscalls", Double(s1 - s0)) }
    emit("w6")
    bl_sc_close(fd)
}

// MARK: - W7 system calls per pass

let w7Count = Atomic<Int>(0)
let w7Busy = Atomic<Int>(0)
let w7Release = Atomic<Int>(0)

func runW7(_ arg: Double) {
    let n = Int(arg)
    let b = PeerThread()
    let fd = bl_sc_open()
    bl_sleep_us(2000)
    var waker: Int64 = 0
    for i in 0..<n {
        let c0 = bl_sc_read(fd)
        b.loop.send { w7Count.add(1, ordering: .sequentiallyConsistent) }
        let c1 = bl_sc_read(fd)
        waker += c1 - c0
        while w7Count.load(ordering: .sequentiallyConsistent) <= i { bl_spin_pause() }
        bl_sleep_us(50)
    }
    b.loop.send {
        w7Busy.store(1, ordering: .sequentiallyConsistent)
        while w7Release.load(ordering: .sequentiallyConsistent) == 0 { bl_spin_pause() }
    }
    while w7Busy.load(ordering: .sequentiallyConsistent) == 0 { bl_spin_pause() }
    let a0 = bl_sc_read(fd)
    let t0 = now()
    for _ in 0..<n { b.loop.wake() }
    let t1 = now()
    let a1 = bl_sc_read(fd)
    w7Release.store(1, ordering: .sequentiallyConsistent)
    bl_sleep_us(2000)
    b.stop()
    bl_sc_close(fd)
    result("n", Double(n))
    if fd >= 0 {
        result("sc_waker_per_wake", Double(waker) / Double(n))
        result("sc_loop_per_woken_pass", Double(b.sc) / Double(n))
        result("sc_per_wake_awake", Double(a1 - a0) / Double(n))
    }
    result("ns_per_wake_awake", Double(t1 - t0) / Double(n))
    emit("w7")
}

// MARK: - W10 Swift concurrency: await round trips into an actor

/// The same actor body on three executors: the default one, a serial
/// `DispatchQueue` and (ours) a `RunLoopThread`'s `RunLoopSerialExecutor`.
protocol W10Counter: Actor {
    func bump() -> Int
}

actor W10DefaultCounter: W10Counter {
    private var count = 0
    func bump() -> Int { count += 1; return count }
}

/// A serial executor over a serial `DispatchQueue`. (Dispatch on Linux has
/// no `DispatchSerialQueue: SerialExecutor`, so this is what a user writes.)
final class W10QueueExecutor: SerialExecutor, @unchecked Sendable {
    let queue = DispatchQueue(label: "w10")
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }
}

actor W10QueueCounter: W10Counter {
    private var count = 0
    let executor = W10QueueExecutor()
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    func bump() -> Int { count += 1; return count }
}

#if OURS
actor W10LoopCounter: W10Counter {
    private var count = 0
    let executor: RunLoopSerialExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    init(executor: RunLoopSerialExecutor) { self.executor = executor }
    func bump() -> Int { count += 1; return count }
}
#endif

/// `n` awaited calls from a task on the global executor; returns
/// (round trips/s, process CPU us per round trip).
func w10Measure<C: W10Counter>(_ counter: C, _ n: Int) -> (Double, Double) {
    let done = DispatchSemaphore(value: 0)
    let out = Mutex<(Double, Double)>((0, 0))
    Task.detached {
        _ = await counter.bump()  // warm-up: the first hop starts threads
        let u0 = bl_usage_now(false)
        let t0 = now()
        for _ in 0..<n { _ = await counter.bump() }
        let t1 = now()
        let u1 = bl_usage_now(false)
        out.withLock { $0 = (Double(n) / (Double(t1 - t0) / 1e9), (u1.cpu_us - u0.cpu_us) / Double(n)) }
        done.signal()
    }
    done.wait()
    return out.withLock { $0 }
}

func runW10(_ arg: Double) {
    let n = Int(arg)
    let (dflt, dfltCPU) = w10Measure(W10DefaultCounter(), n)
    let (queue, queueCPU) = w10Measure(W10QueueCounter(), n)
    result("n", Double(n))
    #if OURS
    let thread = RunLoopThread(name: "w10")
    let (loop, loopCPU) = w10Measure(W10LoopCounter(executor: thread.executor), n)
    result("rt_per_s_runloop", loop)
    result("cpu_us_per_rt_runloop", loopCPU)
    #endif
    result("rt_per_s_default", dflt)
    result("cpu_us_per_rt_default", dfltCPU)
    result("rt_per_s_queue", queue)
    result("cpu_us_per_rt_queue", queueCPU)
    #if OURS
    result("runloop_vs_default", loop / dflt)
    result("runloop_vs_queue", loop / queue)
    #endif
    emit("w10")
}

// MARK: - main

let args = CommandLine.arguments
guard args.count >= 2 else {
    print("usage: \(args[0]) w1|w2|w3|w4|w5|w6|w7|w10 [count-or-seconds]")
    exit(2)
}
let arg = args.count >= 3 ? Double(args[2]) ?? 0 : 0
switch args[1] {
case "w1": runW1(arg == 0 ? 100_000 : arg)
case "w2": runW2(arg == 0 ? 100_000 : arg)
case "w3": runW3(arg == 0 ? 2 : arg)
case "w4": runW4(arg == 0 ? 1_000_000 : arg)
case "w5": runW5(arg == 0 ? 100_000 : arg)
case "w6": runW6(arg == 0 ? 2 : arg)
case "w7": runW7(arg == 0 ? 20_000 : arg)
case "w10": runW10(arg == 0 ? 20_000 : arg)
default:
    print("UNSUPPORTED \(args[1])")
    exit(3)
}
