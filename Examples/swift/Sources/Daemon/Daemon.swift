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
    let runLoopExecutor: RunLoopSerialExecutor
    private var lines = 0
    private var bytes = 0

    init() throws {
        runLoopExecutor = try RunLoopThread(named: "line-counter").executor
    }

    func count(_ chunk: [UInt8]) {
        lines += chunk.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
        bytes += chunk.count
    }

    var summary: String { "\(lines) lines, \(bytes) bytes" }
}

/// What the main loop tells the program.
enum Event: Sendable {
    /// Bytes read from the input; empty at its end.
    case input([UInt8])
    case signal(Int32)
}

@main
struct Daemon: RunLoopMain {
    static func run() async throws {
        let (events, post) = AsyncStream.makeStream(of: Event.self)

        // Signals: from here on SIGTERM, SIGINT and SIGHUP no longer end the
        // process; the main loop reports each one to the stream, which a
        // task forwards to the events (cancelling it ends the stream and
        // gives the signals their default action back).
        let signals = try RunLoop.main.signals(SIGTERM, SIGINT, SIGHUP)
        let forwarding = Task {
            for await signal in signals { post.yield(.signal(signal)) }
        }

        // The input: read what is there, hand it over, watch again (each
        // callback type is one-shot).
        let input = try RunLoop.FileDescriptor(watching: STDIN_FILENO) { descriptor, _ in
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = read(descriptor.fileDescriptor, &buffer, buffer.count)
            post.yield(.input(count > 0 ? Array(buffer[..<count]) : []))
            if count > 0 { descriptor.enableCallBacks(.read) }
        }
        RunLoop.main.add(input, forMode: .default)
        input.enableCallBacks(.read)

        if CommandLine.arguments.contains("--demo") {
            RunLoop.main.perform(after: .milliseconds(200)) { kill(getpid(), SIGHUP) }
            RunLoop.main.perform(after: .milliseconds(400)) { kill(getpid(), SIGTERM) }
        }

        let counter = try LineCounter()
        print("daemon: running as process \(getpid())")
        events: for await event in events {
            switch event {
            case .input(let bytes) where bytes.isEmpty:
                print("daemon: end of input; running until SIGTERM or SIGINT")
                input.invalidate()
            case .input(let bytes):
                await counter.count(bytes)
            case .signal(SIGHUP):
                print("daemon: SIGHUP: \(await counter.summary) so far")
            case .signal(let number):
                print("daemon: signal \(number): shutting down")
                break events
            }
        }

        // Clean shutdown: nothing watches the input or the signals any more,
        // the counter reports, and its thread is stopped and joined when the
        // counter goes.
        input.invalidate()
        forwarding.cancel()
        post.finish()
        print("daemon: done: \(await counter.summary)")
    }
}
