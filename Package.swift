// swift-tools-version:6.2
import PackageDescription

let package = Package(
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
