// An observer runs on its loop's thread.
import SwiftRunLoop
func go(_ loop: RunLoop) {
    var seen: [RunLoop.Activity] = []
    let observer = RunLoop.Observer(activities: .allActivities) { activity in seen.append(activity) }
    loop.add(observer, forMode: .default)
}
