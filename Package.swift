// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "SwiftRunLoop",
    products: [
        .library(name: "SwiftRunLoop", targets: ["SwiftRunLoop"]),
        .library(name: "CRunLoop", targets: ["CRunLoop"]),
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
        .testTarget(
            name: "SwiftRunLoopTests",
            dependencies: ["SwiftRunLoop"],
            path: "Tests/SwiftRunLoopTests",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
