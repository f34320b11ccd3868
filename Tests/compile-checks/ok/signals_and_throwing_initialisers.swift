// Signals as a stream and a source with Sendable state, and the throwing
// initialisers of threads, descriptors and ports.
import SwiftRunLoop
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

final class Tally: Sendable { let signals = Mutex<[Int32]>([]) }
let tally = Tally()
let worker = try RunLoopThread(named: "signals")
let hangUp = try RunLoop.Source(signal: SIGHUP) { signal, count in
    tally.signals.withLock { $0 += Array(repeating: signal, count: Int(count)) }
}
worker.runLoop.add(hangUp, forMode: .default)
let stream = try worker.runLoop.signals(SIGUSR1, SIGUSR2)
let reader = Task.detached {
    for await signal in stream { tally.signals.withLock { $0.append(signal) } }
}
let input = try RunLoop.FileDescriptor(watching: STDIN_FILENO) { _, _ in tally.signals.withLock { $0.append(0) } }
let port = try MessagePort(queueLimit: 16) { message in tally.signals.withLock { $0.append(message.id) } }
do {
    _ = try RunLoop.Source(signal: SIGKILL) { _, _ in }
} catch {
    print(error.code ?? -1, error)
}
reader.cancel()
hangUp.invalidate()
input.invalidate()
port.invalidate()
worker.stop()
