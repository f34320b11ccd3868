// swift-tools-version:6.0
// The Swift examples: small executables using SwiftRunLoop from the root
// package (by path), and tests showing how to test code that uses it (XCTest
// with FoundationBridge, Swift Testing with a RunLoopThread). Built by
// `make -C Examples swift`, run by `make demo`.
import PackageDescription

let runLoop: Target.Dependency = .product(name: "SwiftRunLoop", package: "SwiftRunLoop")

let package = Package(
    name: "SwiftRunLoopExamples",
    dependencies: [.package(name: "SwiftRunLoop", path: "../..")],
    targets: [
        .executableTarget(name: "ActivityTrace", dependencies: [runLoop]),
        .executableTarget(name: "CommonModes", dependencies: [runLoop]),
        .executableTarget(name: "Daemon", dependencies: [runLoop]),
        .executableTarget(name: "HangMonitorDemo", dependencies: [runLoop]),
        .executableTarget(name: "IdleTasksDemo", dependencies: [runLoop]),
        .testTarget(
            name: "ExampleTests",
            dependencies: [runLoop, .product(name: "SwiftRunLoopFoundation", package: "SwiftRunLoop")]),
    ],
    swiftLanguageModes: [.v6]
)
