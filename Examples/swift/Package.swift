// swift-tools-version:6.0
// The Swift examples: small executables using SwiftRunLoop from the root
// package (by path). Built by `make -C Examples swift`, run by `make demo`.
import PackageDescription

let package = Package(
    name: "SwiftRunLoopExamples",
    dependencies: [.package(name: "SwiftRunLoop", path: "../..")],
    targets: [
        .executableTarget(
            name: "ActivityTrace", dependencies: [.product(name: "SwiftRunLoop", package: "SwiftRunLoop")]),
        .executableTarget(name: "CommonModes", dependencies: [.product(name: "SwiftRunLoop", package: "SwiftRunLoop")]),
        .executableTarget(
            name: "HangMonitorDemo", dependencies: [.product(name: "SwiftRunLoop", package: "SwiftRunLoop")]),
        .executableTarget(
            name: "IdleTasksDemo", dependencies: [.product(name: "SwiftRunLoop", package: "SwiftRunLoop")]),
    ],
    swiftLanguageModes: [.v6]
)
