// The cost of sharing a thread with Foundation's RunLoop (FoundationBridge):
// a 10 ms repeating timer of ours run by our loop, then hosted by Foundation;
// Foundation's own timer on Foundation's loop and under ours; and the
// wake-ups of an idle loop either way. `swift run -c release --package-path bench/bridge`.
import Foundation
import CoreFoundation
import CRunLoop
import SwiftRunLoop
import SwiftRunLoopFoundation
import class SwiftRunLoop.RunLoop
import class SwiftRunLoop.Timer

func now() -> Double {
    var ts = timespec(); clock_gettime(CLOCK_MONOTONIC, &ts); return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

final class Stats { var late: [Double] = []; var first = 0.0; let interval: Double; init(_ i: Double) { interval = i } }

func measure(_ label: String, interval: Double, seconds: Double, drive: () -> Void) {
    let st = Stats(interval)
    nonisolated(unsafe) let s = st
    s.first = now() + interval
    let t = Timer(timeInterval: interval, repeats: true) { _ in
        let since = now() - s.first
        let grid = (since / s.interval).rounded(.down) * s.interval
        s.late.append((since - grid) * 1e6)
    }
    RunLoop.current.add(t, forMode: .default)
    drive()
    t.invalidate()
    let sorted = st.late.sorted()
    let med = sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    let p99 = sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))]
    print(
        String(
            format: "%@: fires %d (expected %d), lateness median %.1f us, p99 %.1f us", label, st.late.count,
            Int(seconds / interval), med, p99))
}

let secs = 2.0
measure("ours directly      ", interval: 0.01, seconds: secs) {
    RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: secs))
}
FoundationBridge.install()
measure("Foundation hosting ", interval: 0.01, seconds: secs) {
    Foundation.RunLoop.current.run(until: Date(timeIntervalSinceNow: secs))
}
// Foundation's own timer on Foundation's loop, for reference.
do {
    var late: [Double] = []
    let first = now() + 0.01
    let t = Foundation.Timer(fire: Date(timeIntervalSinceNow: 0.01), interval: 0.01, repeats: true) { _ in
        let since = now() - first
        late.append((since - (since / 0.01).rounded(.down) * 0.01) * 1e6)
    }
    Foundation.RunLoop.current.add(t, forMode: .default)
    Foundation.RunLoop.current.run(until: Date(timeIntervalSinceNow: secs))
    t.invalidate()
    let s = late.sorted()
    print(
        String(
            format: "Foundation's Timer  : fires %d, lateness median %.1f us, p99 %.1f us", s.count, s[s.count / 2],
            s[min(s.count - 1, Int(Double(s.count) * 0.99))]))
}
// Idle: our loop holds a far timer and a source; Foundation runs for 2 s. Count Foundation's sleeps
// (BeforeWaiting) and our passes.
var befores = 0, ourPasses = 0
let cfObs = CFRunLoopObserverCreateWithHandler(nil, CFRunLoopActivity.beforeWaiting.rawValue, true, 0) { _, _ in
    befores += 1
}
CFRunLoopAddObserver(CFRunLoopGetCurrent(), cfObs, kCFRunLoopCommonModes)
let obs = RunLoop.Observer(activities: [.entry]) { _ in ourPasses += 1 }
RunLoop.current.add(obs, forMode: .default)
let far = Timer(timeInterval: 1000, repeats: false) { _ in }
RunLoop.current.add(far, forMode: .default)
let keep = RunLoop.Source {}
RunLoop.current.add(keep, forMode: .default)
Foundation.RunLoop.current.run(until: Date(timeIntervalSinceNow: 0.3))  // settle
befores = 0; ourPasses = 0
var ru0 = rusage(); getrusage(RUSAGE_SELF.rawValue, &ru0)
Foundation.RunLoop.current.run(until: Date(timeIntervalSinceNow: secs))
var ru1 = rusage(); getrusage(RUSAGE_SELF.rawValue, &ru1)
let hostedSwitches = ru1.ru_nvcsw - ru0.ru_nvcsw
print(
    "idle 2 s hosted by Foundation: Foundation sleeps \(befores), our passes \(ourPasses),",
    "voluntary switches \(hostedSwitches)")
FoundationBridge.uninstall()
Foundation.RunLoop.current.run(until: Date(timeIntervalSinceNow: 0.3))  // settle
befores = 0
getrusage(RUSAGE_SELF.rawValue, &ru0)
Foundation.RunLoop.current.run(until: Date(timeIntervalSinceNow: secs))
getrusage(RUSAGE_SELF.rawValue, &ru1)
let aloneSwitches = ru1.ru_nvcsw - ru0.ru_nvcsw
print("idle 2 s, Foundation alone (no bridge): Foundation sleeps \(befores), voluntary switches \(aloneSwitches)")
// Reverse: Foundation's repeating timer while our loop runs the thread.
FoundationBridge.install()
do {
    var late: [Double] = []
    let first = now() + 0.01
    let t = Foundation.Timer(fire: Date(timeIntervalSinceNow: 0.01), interval: 0.01, repeats: true) { _ in
        let since = now() - first
        late.append((since - (since / 0.01).rounded(.down) * 0.01) * 1e6)
    }
    Foundation.RunLoop.current.add(t, forMode: .default)
    let keep2 = RunLoop.Source {}
    RunLoop.current.add(keep2, forMode: .default)
    RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: secs))
    t.invalidate()
    let s = late.sorted()
    print(
        String(
            format: "Foundation's Timer under our loop: fires %d, lateness median %.1f us, p99 %.1f us", s.count,
            s[s.count / 2], s[min(s.count - 1, Int(Double(s.count) * 0.99))]))
    // idle: our loop runs 2 s with the bridge, Foundation has nothing: count our sleeps
    var sleeps = 0
    let o = RunLoop.Observer(activities: [.afterWaiting]) { _ in sleeps += 1 }
    RunLoop.current.add(o, forMode: .default)
    RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 0.2))
    sleeps = 0
    RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: secs))
    print("idle 2 s, our loop hosting Foundation: our loop woke \(sleeps) times")
}
