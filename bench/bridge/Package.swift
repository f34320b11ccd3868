// swift-tools-version:6.2
import PackageDescription
let package = Package(
    name: "BridgeBench",
    dependencies: [.package(name: "SwiftRunLoop", path: "../..")],
    targets: [
        .executableTarget(
            name: "BridgeBench",
            dependencies: [
                .product(name: "SwiftRunLoop", package: "SwiftRunLoop"),
                .product(name: "SwiftRunLoopFoundation", package: "SwiftRunLoop"),
                .product(name: "CRunLoop", package: "SwiftRunLoop"),
            ],
            swiftSettings: [.swiftLanguageMode(.v5)])
    ]
)
