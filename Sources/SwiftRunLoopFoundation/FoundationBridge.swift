// Foundation's RunLoop and SwiftRunLoop's loop sharing one thread.
//
// Foundation hosts ours: a version-1 CoreFoundation source whose port is our
// loop's embedding descriptor sits in Foundation's common modes (and any mode
// added with `bridge(mode:)`). A BeforeWaiting observer there aims the
// descriptor at the mode Foundation is about to sleep in; when it becomes
// readable (one of our timers due, a source ready, a wake-up, queued work),
// CF wakes and the source's perform runs one non-blocking pass of our loop in
// the mode of the same name. Nothing runs while both loops are idle.
//
// Ours hosts Foundation's: CF exposes no descriptor for its own wait, so our
// loop cannot sleep on it. Instead, before our loop sleeps (a BeforeWaiting
// observer in our common modes), it runs one non-blocking pass of
// Foundation's loop in the mode of the same name (its due timers, its
// performed blocks, its signalled sources), and keeps a timer of ours at
// Foundation's next timer date so our sleep ends when a Foundation timer is
// due. What CF does not tell us cannot wake our loop: a Foundation timer
// added or a CFRunLoopWakeUp sent from *another* thread while our loop
// sleeps is seen at our loop's next wake-up only.

import CRunLoop
import CoreFoundation
import Foundation
@_spi(Bridging) import SwiftRunLoop

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Lets Foundation's `RunLoop` and SwiftRunLoop's `RunLoop` share a thread:
/// whichever of the two runs it, the other's timers, sources, observers and
/// queued blocks keep running, in the mode of the same name.
///
/// One call per thread switches it on:
///
/// ```swift
/// import SwiftRunLoop
/// import SwiftRunLoopFoundation
///
/// FoundationBridge.install()   // on the thread that runs both loops
/// ```
///
/// - Foundation runs the thread (XCTest's `wait(for:timeout:)`, a program
///   calling Foundation's `RunLoop.main.run()`): SwiftRunLoop's timers,
///   sources, observers and perform requests run whenever Foundation runs a
///   common mode (or a mode added with ``bridge(mode:)``), in the SwiftRunLoop
///   mode of the same name. An idle SwiftRunLoop loop costs Foundation no
///   wake-up.
/// - SwiftRunLoop runs the thread: Foundation's timers and the blocks queued
///   on this thread with Foundation's `RunLoop.perform` run before each sleep
///   of our loop and when a Foundation timer is due, in the Foundation mode
///   of the same name. CoreFoundation offers no descriptor to sleep on, so a
///   Foundation timer added, or a `CFRunLoopWakeUp` sent, from another thread
///   while our loop sleeps is noticed only when our loop next wakes up.
///
/// Forgetting it is the usual reason a test's `wait(for:timeout:)` times
/// out although the code under test scheduled its timer: in a process with
/// XCTest loaded, a timer added to SwiftRunLoop's `RunLoop.main` on the main
/// thread while Foundation's loop runs that thread, without the bridge,
/// makes SwiftRunLoop write a hint naming this call, once, to standard error.
///
/// While installed, Foundation's modes hold a source (so Foundation's
/// `RunLoop.run()` on this thread no longer returns for lack of sources),
/// and our loop holds a timer while Foundation has one. `beforeWaiting` and
/// `afterWaiting` observers of our loop do not run in the passes Foundation
/// drives (they are non-blocking passes).
public enum FoundationBridge {
    private static let key = "SwiftRunLoopFoundation.FoundationBridge"

    /// Switches the bridge on for the calling thread. Installing twice does
    /// nothing more.
    ///
    /// - Returns: `false` if the thread's loop could give no embedding
    ///   descriptor (out of file descriptors).
    @discardableResult
    public static func install() -> Bool {
        if isInstalled { return true }
        guard let bridge = ThreadBridge() else { return false }
        Thread.current.threadDictionary[key] = bridge
        SwiftRunLoop.RunLoop.noteFoundationBridge(installed: true)
        return true
    }

    /// Switches the bridge off for the calling thread.
    public static func uninstall() {
        guard let bridge = current else { return }
        bridge.invalidate()
        Thread.current.threadDictionary.removeObject(forKey: key)
        SwiftRunLoop.RunLoop.noteFoundationBridge(installed: false)
    }

    /// Whether the bridge is on for the calling thread.
    public static var isInstalled: Bool { current != nil }

    /// Also bridges `mode`, which is not one of Foundation's common modes,
    /// on the calling thread: when Foundation runs it, our loop's mode of the
    /// same name runs too. Installs the bridge if needed.
    public static func bridge(mode: SwiftRunLoop.RunLoop.Mode) {
        install()
        current?.add(mode: mode.rawValue)
    }

    private static var current: ThreadBridge? {
        Thread.current.threadDictionary[key] as? ThreadBridge
    }
}

/// One thread's bridge; lives in the thread's dictionary, used only on the thread.
final class ThreadBridge {
    let loop: RLRunLoopRef
    let fd: Int32
    let cfLoop: CFRunLoop
    var cfSource: CFRunLoopSource?
    var cfObserver: CFRunLoopObserver?
    var ourObserver: RLRunLoopObserverRef?
    var ourTimer: RLRunLoopTimerRef?
    /// Our loop is running a pass of Foundation's (our source there must not
    /// run our loop from inside it).
    var servicingFoundation = false
    var cfModeName: (mode: CFString?, name: String) = (nil, "")
    var ourModeName: (name: String, mode: CFString?) = ("", nil)

    init?() {
        guard let rl = RLRunLoopGetCurrent() else { return nil }
        let fd = RLRunLoopEmbedGetFD(rl)
        guard fd >= 0 else { return nil }
        RLRetain(UnsafeRawPointer(rl))
        loop = rl
        self.fd = fd
        cfLoop = CFRunLoopGetCurrent()
        installInFoundation()
        installInOurs()
    }

    // MARK: Foundation hosts ours

    private func installInFoundation() {
        let info = Unmanaged.passUnretained(self).toOpaque()
        var context = CFRunLoopSourceContext1()
        context.version = 1
        context.info = info
        context.getPort = { info in Unmanaged<ThreadBridge>.fromOpaque(info!).takeUnretainedValue().fd }
        context.perform = { info in Unmanaged<ThreadBridge>.fromOpaque(info!).takeUnretainedValue().hostedPass() }
        cfSource = withUnsafeMutablePointer(to: &context) {
            $0.withMemoryRebound(to: CFRunLoopSourceContext.self, capacity: 1) { CFRunLoopSourceCreate(nil, 0, $0) }
        }
        var observerContext = CFRunLoopObserverContext(
            version: 0, info: info, retain: nil, release: nil,
            copyDescription: nil)
        cfObserver = CFRunLoopObserverCreate(
            nil, CFRunLoopActivity.beforeWaiting.rawValue, true, Int.max,
            { _, _, info in
                Unmanaged<ThreadBridge>.fromOpaque(info!).takeUnretainedValue()
                    .prepareForFoundationSleep()
            }, &observerContext)
        CFRunLoopAddSource(cfLoop, cfSource, kCFRunLoopCommonModes)
        CFRunLoopAddObserver(cfLoop, cfObserver, kCFRunLoopCommonModes)
    }

    func add(mode: String) {
        let cfMode = makeCFString(mode)
        CFRunLoopAddSource(cfLoop, cfSource, cfMode)
        CFRunLoopAddObserver(cfLoop, cfObserver, cfMode)
    }

    /// The name of the mode Foundation runs now (cached by CF's mode object).
    private func foundationModeName() -> String? {
        guard let mode = CFRunLoopCopyCurrentMode(cfLoop) else { return nil }
        if let cached = cfModeName.mode, CFEqual(cached, mode) { return cfModeName.name }
        let name = stringOf(mode)
        cfModeName = (mode, name)
        return name
    }

    /// Foundation is about to sleep: aim our descriptor at its mode.
    func prepareForFoundationSleep() {
        guard let name = foundationModeName() else { return }
        name.withCString { _ = RLRunLoopEmbedPrepare(loop, $0, nil) }
    }

    /// Our descriptor woke Foundation: one non-blocking pass of our loop.
    func hostedPass() {
        guard !servicingFoundation, let name = foundationModeName() else { return }
        name.withCString { _ = RLRunLoopRunInMode($0, 0, false) }
        // CF watches the descriptor edge-triggered: if a source is still
        // readable, a wake-up makes the next Prepare give it a new edge.
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        if poll(&p, 1, 0) > 0 { RLRunLoopWakeUp(loop) }
    }

    // MARK: Ours hosts Foundation's

    private func installInOurs() {
        var context = RLRunLoopObserverContext(
            version: 0, info: Unmanaged.passUnretained(self).toOpaque(),
            retain: nil, release: nil, copyDescription: nil)
        ourObserver = RLRunLoopObserverCreate(
            RLOptionFlags(kRLRunLoopBeforeWaiting.rawValue), true, Int.max,
            { _, _, info in
                Unmanaged<ThreadBridge>.fromOpaque(info!).takeUnretainedValue()
                    .serviceFoundation()
            }, &context)
        RLRunLoopAddObserver(loop, ourObserver, kRLRunLoopCommonModes)
    }

    /// The Foundation mode named like the mode our loop runs now.
    private func foundationModeForOurs() -> CFRunLoopMode? {
        guard let cName = RLRunLoopCopyCurrentMode(loop) else { return nil }
        defer { free(cName) }
        let name = String(cString: cName)
        if name != ourModeName.name || ourModeName.mode == nil {
            let mode: CFString = name == "kCFRunLoopDefaultMode" ? kCFRunLoopDefaultMode : makeCFString(name)
            ourModeName = (name, mode)
        }
        return ourModeName.mode
    }

    /// Our loop is about to sleep: run Foundation's due work, and make sure
    /// our sleep ends when Foundation's next timer is due.
    func serviceFoundation() {
        guard let mode = foundationModeForOurs() else { return }
        servicingFoundation = true
        // CF takes one event per pass (its wake-up port may come before its
        // timer): a few passes while its next timer is already due.
        var next: CFAbsoluteTime = 0
        for _ in 0..<4 {
            _ = CFRunLoopRunInMode(mode, 0, false)
            next = CFRunLoopGetNextTimerFireDate(cfLoop, mode)
            if next == 0 || next > CFAbsoluteTimeGetCurrent() { break }
        }
        servicingFoundation = false
        // Still due after that: a timer that is firing further out (our loop
        // runs inside its callout); waking for it would spin.
        scheduleWakeUp(at: next > CFAbsoluteTimeGetCurrent() ? next : 0)
    }

    private func scheduleWakeUp(at date: CFAbsoluteTime) {
        if date == 0 {
            dropTimer()
            return
        }
        if let timer = ourTimer, RLRunLoopTimerIsValid(timer) {
            if RLRunLoopTimerGetNextFireDate(timer) != date { RLRunLoopTimerSetNextFireDate(timer, date) }
        } else {
            dropTimer()
            var context = RLRunLoopTimerContext(
                version: 0, info: nil, retain: nil, release: nil,
                copyDescription: nil)
            // Its firing only ends our sleep; the BeforeWaiting that follows runs Foundation's timers.
            ourTimer = RLRunLoopTimerCreate(date, 0, 0, 0, { _, _ in }, &context)
            RLRunLoopAddTimer(loop, ourTimer, kRLRunLoopCommonModes)
        }
        // A mode that is not common gets it too.
        if let cName = RLRunLoopCopyCurrentMode(loop) {
            RLRunLoopAddTimer(loop, ourTimer, cName)
            free(cName)
        }
    }

    private func dropTimer() {
        guard let timer = ourTimer else { return }
        RLRunLoopTimerInvalidate(timer)
        RLRelease(UnsafeRawPointer(timer))
        ourTimer = nil
    }

    func invalidate() {
        if let source = cfSource { CFRunLoopSourceInvalidate(source) }
        if let observer = cfObserver { CFRunLoopObserverInvalidate(observer) }
        cfSource = nil
        cfObserver = nil
        if let observer = ourObserver {
            RLRunLoopObserverInvalidate(observer)
            RLRelease(UnsafeRawPointer(observer))
        }
        ourObserver = nil
        dropTimer()
        RLRunLoopEmbedCancel(loop)
    }

    deinit {
        invalidate()
        RLRelease(UnsafeRawPointer(loop))
    }
}

private func makeCFString(_ string: String) -> CFString {
    string.withCString { CFStringCreateWithCString(nil, $0, CFStringBuiltInEncodings.UTF8.rawValue) }
}

private func stringOf(_ string: CFString) -> String {
    let length = CFStringGetLength(string)
    let capacity = CFStringGetMaximumSizeForEncoding(length, CFStringBuiltInEncodings.UTF8.rawValue) + 1
    var buffer = [CChar](repeating: 0, count: capacity)
    guard CFStringGetCString(string, &buffer, capacity, CFStringBuiltInEncodings.UTF8.rawValue) else { return "" }
    let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    return String(decoding: bytes, as: UTF8.self)
}
