// RunLoop.HangMonitor catching a deliberate stall (a stall monitor).

import SwiftRunLoop
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

print("== Swift: RunLoop.HangMonitor catches a 350 ms stall (threshold 100 ms) ==")
let loop = RunLoop.current
let monitor = RunLoop.HangMonitor(runLoop: loop, threshold: 0.1) { report in
    print(
        "  watchdog: stall \(report.stallNumber) report \(report.reportNumber): "
            + "\(Int(report.duration * 1000)) ms in mode \(report.mode.rawValue) after .\(report.activity)")
    if report.reportNumber == 1 {
        for frame in report.frames.prefix(4) { print("      \(frame.split(separator: "/").last ?? "")") }
    }
}!
monitor.start()
let stall = Timer(timeInterval: 0.02, repeats: false) { _ in
    print("  loop: a timer does 350 ms of work on the loop's thread...")
    var request = timespec(tv_sec: 0, tv_nsec: 350_000_000), remaining = timespec()
    while nanosleep(&request, &remaining) != 0 { request = remaining }  // restart after the monitor's signal
    print("  loop: ... done")
    RunLoop.current.stop()  // the main loop also serves DispatchQueue.main: its mode is never empty
}
loop.add(stall, forMode: .default)
_ = loop.run(mode: .default, seconds: 5, returnAfterSourceHandled: false)
print("  stalls: \(monitor.stallCount), reports: \(monitor.reportCount)")
// The loop's own counts name the longest callout: the stalling timer's handler.
print("  the loop's statistics:")
for line in loop.statistics.description.split(separator: "\n") { print("    \(line)") }
print("")
monitor.invalidate()
