// swift-tools-version:6.2
import PackageDescription
import Foundation

// The GLib bridge (CRunLoopGLib, SwiftRunLoopGLib) is declared only where
// pkg-config finds GLib, so the package keeps building everywhere else with
// libc alone. The same pkg-config answer (PKG_CONFIG_PATH, a sysroot's
// PKG_CONFIG_SYSROOT_DIR) gives the CGLib system library target its flags,
// and through it every target that depends on it: no header path is fixed
// here, so other layouts and cross-compiling work.
func pkgConfigFinds(_ module: String) -> Bool {
    let pkgConfig = Process()
    pkgConfig.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    pkgConfig.arguments = ["pkg-config", "--exists", module]
    pkgConfig.standardOutput = FileHandle.nullDevice
    pkgConfig.standardError = FileHandle.nullDevice
    do {
        try pkgConfig.run()
    } catch {
        return false
    }
    pkgConfig.waitUntilExit()
    return pkgConfig.terminationStatus == 0
}
let haveGLib = pkgConfigFinds("glib-2.0")

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
        // GLib's include flags reach this C target through CGLib (pkg-config).
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
