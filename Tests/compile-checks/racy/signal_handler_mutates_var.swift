// A signal source's handler runs on the loop's thread: it must not mutate a
// variable the creating thread also uses.
import SwiftRunLoop
#if canImport(Glibc)
import Glibc
#endif

var hangUps: UInt32 = 0
let source = try RunLoop.Source(signal: SIGHUP) { _, count in hangUps += count }
RunLoop.current.add(source, forMode: .default)
print(hangUps)
