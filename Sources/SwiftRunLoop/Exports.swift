// The Foundation types of the public API (Date, TimeInterval, Data) come with
// `import SwiftRunLoop`, so a program needs no other import to call it. Only
// these declarations are re-exported, not the whole of FoundationEssentials;
// they are the very declarations Foundation re-exports, so a file importing
// Foundation too sees no ambiguity.

@_exported import struct FoundationEssentials.Date
@_exported import typealias FoundationEssentials.TimeInterval
@_exported import struct FoundationEssentials.Data
