// Sources, observers, descriptors, ports and idle tasks with Sendable state.
import SwiftRunLoop
import Synchronization

final class Events: Sendable { let list = Mutex<[String]>([]) }
let events = Events()
let loop = RunLoop.current
let source = RunLoop.Source { events.list.withLock { $0.append("source") } }
loop.add(source, forMode: .default)
let observer = RunLoop.Observer(activities: [.entry, .exit]) { activity in
    events.list.withLock { $0.append("\(activity)") }
}
loop.add(observer, forMode: .default)
let port = MessagePort { message in events.list.withLock { $0.append("message \(message.id)") } }!
loop.add(port, forMode: .default)
let sender = port.sender
Task.detached { try? sender.send(id: 1) }
RunLoop.IdleQueue(runLoop: loop).submit { events.list.withLock { $0.append("idle") } }
source.signal()
loop.run(mode: .default, before: Date(timeIntervalSinceNow: 0.1))
source.invalidate()
port.invalidate()
