// A Linux daemon on the main run loop: it counts the lines sent to its
// standard input on an actor of its own thread, prints a summary on SIGHUP
// and shuts down cleanly on SIGTERM or SIGINT. `--demo` sends itself SIGHUP
// and then SIGTERM, so `make demo` can run it:
//
//     printf 'one\ntwo\nthree\n' | Daemon --demo
//
// The same program, explained step by step, is the DocC article
// "Writing a Linux daemon" (Sources/SwiftRunLoop/SwiftRunLoop.docc).

import SwiftRunLoop
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The daemon's state, on a thread of its own.
actor LineCounter: RunLoopActor {
    let runLoopExecutor = RunLoopThread(name: "line-counter").executor
    private var lines = 0
    private var bytes = 0

    func count(_ chunk: [UInt8]) {
        lines += chunk.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
        bytes += chunk.count
    }

    var summary: String { "\(lines) lines, \(bytes) bytes" }
}

/// What the main loop's sources tell the program.
enum Event: Sendable {
    /// Bytes read from the input; empty at its end.
    case input([UInt8])
    case signal(Int32)
}

@main
struct Daemon: RunLoopMain {
    static func run() async throws {
        let (events, post) = AsyncStream.makeStream(of: Event.self)

        // Signals first, while the main thread is the only thread: threads
        // made later inherit the blocked signals, so a SIGTERM waits for its
        // source instead of killing the process.
        let signals = [SIGTERM, SIGINT, SIGHUP].compactMap { number in
            RunLoop.Source(signal: number) { _ in post.yield(.signal(number)) }
        }
        for source in signals { RunLoop.main.add(source, forMode: .default) }

        // The input: read what is there, hand it over, watch again (each
        // callback type is one-shot).
        let input = RunLoop.FileDescriptor(fileDescriptor: STDIN_FILENO) { descriptor, _ in
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = read(descriptor.fileDescriptor, &buffer, buffer.count)
            post.yield(.input(count > 0 ? Array(buffer[..<count]) : []))
            if count > 0 { descriptor.enableCallBacks(.read) }
        }
        if let input {
            RunLoop.main.add(input, forMode: .default)
            input.enableCallBacks(.read)
        }

        if CommandLine.arguments.contains("--demo") {
            RunLoop.main.perform(after: .milliseconds(200)) { kill(getpid(), SIGHUP) }
            RunLoop.main.perform(after: .milliseconds(400)) { kill(getpid(), SIGTERM) }
        }

        let counter = LineCounter()
        print("daemon: running as process \(getpid())")
        events: for await event in events {
            switch event {
            case .input(let bytes) where bytes.isEmpty:
                print("daemon: end of input; running until SIGTERM or SIGINT")
                input?.invalidate()
            case .input(let bytes):
                await counter.count(bytes)
            case .signal(SIGHUP):
                print("daemon: SIGHUP: \(await counter.summary) so far")
            case .signal(let number):
                print("daemon: signal \(number): shutting down")
                break events
            }
        }

        // Clean shutdown: nothing watches the input or the signals any more
        // (once the sources are freed, at the end of run(), the signals are
        // unblocked again), the counter reports, and its thread is stopped
        // and joined when the counter goes.
        input?.invalidate()
        for source in signals { source.invalidate() }
        post.finish()
        print("daemon: done: \(await counter.summary)")
    }
}
