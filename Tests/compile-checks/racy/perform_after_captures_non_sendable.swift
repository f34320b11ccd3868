// A delayed request runs on the loop's thread.
import SwiftRunLoop
final class Log { var lines: [String] = [] }
func go(_ loop: RunLoop, _ log: Log) {
    loop.perform(after: 0.1) { log.lines.append("late") }
}
