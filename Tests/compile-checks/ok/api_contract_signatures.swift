// The Swift declarations of the public API contract resolve exactly, as
// function references (a defaulted extra parameter would break these).
import SwiftRunLoop
let a: (Date, TimeInterval, Bool, @escaping @Sendable (Timer) -> Void) -> Timer =
    Timer.init(fire:interval:repeats:block:)
let b: (TimeInterval, Bool, @escaping @Sendable (Timer) -> Void) -> Timer = Timer.init(timeInterval:repeats:block:)
let c: (TimeInterval, Bool, @escaping @Sendable (Timer) -> Void) -> Timer =
    Timer.scheduledTimer(withTimeInterval:repeats:block:)
let d: (RunLoop) -> (@escaping @Sendable () -> Void) -> Void = RunLoop.perform(_:)
let e: (RunLoop) -> ([RunLoop.Mode], @escaping @Sendable () -> Void) -> Void = RunLoop.perform(inModes:block:)
let f = RunLoop.Source(order: 0, perform: {})
let g = RunLoop.Observer(activities: .entry, repeats: true, order: 0, handler: { _ in })
let h = Timer(timeInterval: 1, repeats: false) { _ in }
let i = Timer(timeInterval: 1, repeats: false, userInfo: 3) { _ in }
