// swift-tools-version:6.2
import PackageDescription
import Foundation

// The GLib bridge (CRunLoopGLib, SwiftRunLoopGLib) is declared only where
// GLib's development files are installed, so the package keeps building
// everywhere else with libc alone.
let haveGLib = FileManager.default.fileExists(atPath: "/usr/include/glib-2.0/glib.h")

// The C targets show the warnings the Makefile builds the library with. Not as
// errors (and not through unsafeFlags): either would keep packages that depend
// on this one from building. `make test-clang` compiles the same sources with
// clang and these warnings as errors.
let cWarnings: [CSetting] = ["all", "extra", "shadow", "strict-prototypes", "missing-prototypes"].map {
    .enableWarning($0)
}

var package = Package(
    name: "SwiftRunLoop",
    products: [
        .library(name: "SwiftRunLoop", targets: ["SwiftRunLoop"]),
        .library(name: "CRunLoop", targets: ["CRunLoop"]),
        .library(name: "SwiftRunLoopFoundation", targets: ["SwiftRunLoopFoundation"]),
    ],
    targets: [
        .target(
            name: "CRunLoop",
            path: "Sources/CRunLoop",
            exclude: ["exports.map"],
            // One folder per layer (docs/ARCHITECTURE.md); every file also
            // finds what the core lends its layers (core_api/), while core/'s
            // private headers are found only by core/'s own files.
            cSettings: [.headerSearchPath("core_api")] + cWarnings,
            linkerSettings: [.linkedLibrary("dl"), .linkedLibrary("pthread"), .linkedLibrary("m")]
        ),
        .target(
            name: "SwiftRunLoop",
            dependencies: ["CRunLoop"],
            path: "Sources/SwiftRunLoop",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Foundation's RunLoop and ours sharing a thread; the only target
        // that imports Foundation, so SwiftRunLoop itself never does.
        .target(
            name: "SwiftRunLoopFoundation",
            dependencies: ["SwiftRunLoop", "CRunLoop"],
            path: "Sources/SwiftRunLoopFoundation",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "SwiftRunLoopFoundationTests",
            dependencies: ["SwiftRunLoopFoundation", "SwiftRunLoop"],
            path: "Tests/SwiftRunLoopFoundationTests",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "SwiftRunLoopTests",
            dependencies: ["SwiftRunLoop"],
            path: "Tests/SwiftRunLoopTests",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)

if haveGLib {
    package.products.append(.library(name: "SwiftRunLoopGLib", targets: ["SwiftRunLoopGLib"]))
    package.targets += [
        .systemLibrary(
            name: "CGLib", path: "Sources/CGLib", pkgConfig: "glib-2.0",
            providers: [.apt(["libglib2.0-dev"])]),
        .target(
            name: "CRunLoopGLib",
            dependencies: ["CRunLoop", "CGLib"],
            path: "Sources/CRunLoopGLib",
            cSettings: cWarnings
        ),
        .target(
            name: "SwiftRunLoopGLib",
            dependencies: ["SwiftRunLoop", "CRunLoop", "CRunLoopGLib", "CGLib"],
            path: "Sources/SwiftRunLoopGLib",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "SwiftRunLoopGLibTests",
            dependencies: ["SwiftRunLoopGLib", "SwiftRunLoop", "CGLib"],
            path: "Tests/SwiftRunLoopGLibTests",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
}
